"""Reading the input: JSONL lines with the input-level bounds, and the input file itself.

Every line is read with a bound (``MAX_INPUT_LINE_BYTES``) and every raw byte can be fed to a
digest, so the checkpoint identity's input hash and the records come from one read.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

from modebench import guard
from modebench.receipt.schema import MAX_INPUT_LINE_BYTES, MAX_RESPONSES_PER_PROMPT
from modebench.validation import InputError, loads

__all__ = ["decoded", "input_file", "iter_jsonl", "raw_lines", "record_id"]


def iter_jsonl(path: str | os.PathLike[str], digest: Any = None) -> Iterator[tuple[int, Any]]:
    """Yield ``(line_number, parsed)`` for non-blank lines; feed every raw byte to ``digest``."""
    for number, line in raw_lines(path, digest):
        yield number, decoded(number, line)


def raw_lines(path: str | os.PathLike[str], digest: Any = None) -> Generator[tuple[int, bytes], None, None]:
    """``(line_number, bytes)`` of the non-blank lines; an over-long line ends the stream (as a
    prefix of one byte more than the limit, which :func:`decoded` refuses)."""
    with guard.open_regular(path, "input") as handle:  # a FIFO or device: refused by name
        number = 0
        while True:
            line = handle.readline(MAX_INPUT_LINE_BYTES + 1)
            if not line:
                return
            number += 1
            if digest is not None:
                digest.update(line)
            if len(line) > MAX_INPUT_LINE_BYTES:
                yield number, line
                return
            if line.strip():
                yield number, line


def decoded(number: int, line: bytes) -> Any:
    """One input line's record, with the input-level checks (size, strict JSON, responses)."""
    if len(line) > MAX_INPUT_LINE_BYTES:
        raise InputError(f"line {number}: exceeds {MAX_INPUT_LINE_BYTES} byte input limit")
    try:
        value = loads(line)
    except InputError as exc:
        raise InputError(f"line {number}: {exc}") from None
    if (
        isinstance(value, dict)
        and isinstance(value.get("responses"), list)
        and len(value["responses"]) > MAX_RESPONSES_PER_PROMPT
    ):
        raise InputError(f"line {number}: exceeds {MAX_RESPONSES_PER_PROMPT} responses per prompt")
    return value


def record_id(record: Any) -> str | None:
    """A record's prompt id as the evaluator names it, or ``None`` if it has no valid one."""
    ident = record.get("id") if isinstance(record, dict) else None
    if isinstance(ident, bool) or not isinstance(ident, (str, int)):
        return None
    return str(ident)


def input_file(path: str | os.PathLike[str]) -> Path:
    """The absolute path of an input that must be a readable regular file.

    Checked before anything is created, so a bad path leaves nothing behind; a FIFO or device
    would be read twice (hash, then validation) and may never end, so it is refused by name.
    """
    given = Path(path)
    try:
        source = given.resolve()
    except RuntimeError:  # Python < 3.13 reports a symlink loop this way
        raise InputError(f"[Errno 40] Too many levels of symbolic links: {str(given.absolute())!r}") from None
    info = os.stat(source)  # a missing file or dangling symlink: the OS error names the path
    if stat.S_ISDIR(info.st_mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(source))
    if not stat.S_ISREG(info.st_mode):
        raise InputError(f"input must be a regular file: {source}")
    guard.open_regular(source, "input").close()  # within the input's size cap
    with open(source, "rb"):  # unreadable: the OS error names the path
        pass
    return source
