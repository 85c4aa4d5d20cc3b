"""How the checkpoint ledger stores a text, shared by the workers that pack texts on its behalf.

A text is stored as zlib (level 1) of its UTF-8 bytes, with its raw SHA-256 digest beside it
(``engine.ledger``). A worker that assembles a prompt's result packs it here, so the parent
stores the bytes as they come (``isolation.assemble``).
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
