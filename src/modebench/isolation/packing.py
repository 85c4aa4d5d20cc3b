"""How the checkpoint ledger stores a text, shared by the workers that pack texts on its behalf.

A text is stored as zlib (level 1) of its UTF-8 bytes, with its raw SHA-256 digest beside it
(``engine.ledger``). The workers compress the prepared records they make and the results they
assemble, so the parent inserts bytes it never compresses itself: compressing ~4 KB a prompt is
the largest single piece of the parent's work otherwise, and a helper thread doing it there
contends with the parent's main thread for the interpreter lock.
"""

from __future__ import annotations

import hashlib
import zlib

__all__ = ["pack_text", "text_sha"]


def pack_text(text: str) -> bytes:
    """The ledger's stored form of ``text``."""
    return zlib.compress(text.encode("utf-8"), 1)


def text_sha(text: str) -> bytes:
    """The raw SHA-256 digest of ``text``'s UTF-8 bytes, stored beside it."""
    return hashlib.sha256(text.encode("utf-8")).digest()
