"""Bounded reads of the files modebench is given: a regular file of a known kind, or exit 2 naming it.

Every command reads its files through these helpers, so that ``/dev/zero``, a FIFO, a directory or
an oversized file ends in one clear ``InputError`` that names the path instead of a hang, a
``MemoryError`` or a traceback. The file is opened with ``O_NONBLOCK`` (opening a FIFO would
otherwise wait for a writer forever), checked with ``fstat`` on the open descriptor (no window
between check and use), and read with a cap: a regular file may still grow, or report size 0
(``/proc``), so the cap holds during the read too, not only in the size check.

Caps fit the kind of file: small JSON documents (run metadata, receipts, comparisons) are read
whole and capped in MiB; streamed files (evaluate input, journals, ingest sources) are capped in
GiB and read line by line with a per-line cap (:func:`bounded_lines`).
"""

from __future__ import annotations

import os
import posixpath
import stat
from collections.abc import Iterator
from typing import IO, Final

from modebench.validation import InputError

__all__ = [
    "LIMITS",
    "MAX_LINE_BYTES",
    "Decompression",
    "bounded_lines",
    "open_regular",
    "read_capped",
    "sibling_journal",
]

_MIB: Final = 1 << 20
_GIB: Final = 1 << 30

#: Kind of file → (what the message calls it, with its article; its size cap in bytes).
LIMITS: Final[dict[str, tuple[str, int]]] = {
    "run": ("a run metadata file", 1 * _MIB),
    "ids": ("a prompt id list", 64 * _MIB),
    "receipt": ("a receipt", 64 * _MIB),
    "comparison": ("a comparison document", 64 * _MIB),
    "registry": ("a registry", 32 * _MIB),
    "journal": ("a result journal", 256 * _GIB),
    "input": ("an input file", 256 * _GIB),
    "log": ("a log file", 256 * _GIB),
    #: Anything hashed or streamed whose kind has no cap of its own (bounded by its reader).
    "any": ("a regular file", 1 << 62),
}

#: Longest line a streamed source may hold (a line is one record; the evaluate input's own cap).
MAX_LINE_BYTES: Final = 64 * _MIB


def _refuse(path: str, label: str, why: str) -> InputError:
    return InputError(f"{path}: {why} (expected {label})")


def open_regular(path: str | os.PathLike[str], kind: str) -> IO[bytes]:
    """Open ``path`` for binary reading if it is a regular file within the cap of ``kind``."""
    label, cap = LIMITS[kind]
    name = os.fspath(path)
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except IsADirectoryError:  # opening a directory for reading may fail at once
        raise _refuse(name, label, "is a directory") from None
    # Any other OSError (missing, unreadable, a link loop) propagates: its text names the path.
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise _refuse(name, label, "is a directory")
        if not stat.S_ISREG(info.st_mode):
            raise _refuse(name, label, "not a regular file")
        if info.st_size > cap:
            raise InputError(f"{name}: {info.st_size} bytes, over the cap of {cap} bytes for {label}")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_capped(path: str | os.PathLike[str], kind: str) -> bytes:
    """The whole content of a regular file of ``kind``, refused past its cap."""
    label, cap = LIMITS[kind]
    with open_regular(path, kind) as handle:
        data = handle.read(cap + 1)
    if len(data) > cap:
        raise InputError(f"{os.fspath(path)}: over the cap of {cap} bytes for {label}")
    return data


def bounded_lines(
    handle: IO[bytes], path: str | os.PathLike[str], cap: int = MAX_LINE_BYTES
) -> Iterator[bytes]:
    """The lines of ``handle`` (with their newline), refusing a line longer than ``cap`` by number."""
    number = 0
    while True:
        line = handle.readline(cap + 1)
        if not line:
            return
        number += 1
        if len(line) > cap and not (len(line) == cap + 1 and line.endswith(b"\n")):
            raise InputError(f"{os.fspath(path)}: line {number}: exceeds {cap} bytes")
        yield line


def sibling_journal(receipt: str | os.PathLike[str], relative: object) -> str:
    """A receipt's ``prompt_results.path``, accepted only as a relative path below the receipt's directory.

    A receipt names its journal relative to itself; an absolute path or a ``..`` step would let a
    crafted receipt make the tool read (and hash) any file on the machine, so both are refused.
    """
    if not isinstance(relative, str) or not relative:
        raise InputError(f"{os.fspath(receipt)}: missing detailed-result path")
    parts = relative.replace("\\", "/").split("/")
    if posixpath.isabs(relative) or os.path.isabs(relative) or ".." in parts or "\x00" in relative:
        raise InputError(
            f"{os.fspath(receipt)}: detailed-result path {relative!r} must be relative to the receipt's "
            "directory, without '..' (keep the journal beside its receipt)"
        )
    return relative


class Decompression:
    """The decompressed bytes an archive may yield: per member and in total (a zip bomb stops here).

    A member is read whole (one sample's JSON), so it may inflate to ``MAX_LINE_BYTES`` at most:
    that bounds memory however small the archive. All members together may inflate to ``TOTAL``,
    which bounds time and output. No ratio of compressed to decompressed size is used: real
    logs with repetitive transcripts compress a thousand times as a bomb does. Counted while
    reading, so sizes claimed in the archive's headers do not matter.
    """

    TOTAL: Final = 16 * _GIB

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        self.left = self.TOTAL

    def read(self, member: IO[bytes], location: str) -> bytes:
        """The whole of one member, refused past either cap."""
        cap = min(MAX_LINE_BYTES, self.left)
        data = member.read(cap + 1)
        if len(data) > cap:
            if cap == self.left:
                raise InputError(
                    f"{self.path}: decompresses to more than {self.TOTAL} bytes; stopped at {location}"
                )
            raise InputError(f"{location}: decompresses to more than {MAX_LINE_BYTES} bytes (a zip bomb?)")
        self.left -= len(data)
        return data


def utf8_text(text: str, what: str) -> str:
    """``text`` if it encodes as UTF-8; a lone surrogate (valid in JSON) is refused naming ``what``."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InputError(
            f"{what} {text[:100]!r} holds a lone surrogate at position {exc.start} (not UTF-8 text)"
        ) from None
    return text
