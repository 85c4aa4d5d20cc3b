"""Streaming one array member of a large JSON object: ``{…, "samples": [ {…}, {…}, … ], …}``.

An Inspect ``.json`` log is one JSON object whose ``samples`` array holds every sample with its full
transcript, so it can be many times larger than what ingest keeps. The standard library has no
streaming parser, so this walks the top-level object itself and hands each value to
``json.JSONDecoder.raw_decode`` on a sliding text buffer: memory holds the largest single value
(one sample, or one header field), never the whole file.

A value that fails to decode is retried with more text until the end of the file, because a value
cut by the buffer's end and a malformed one look alike to the decoder; so a corrupt log may be read
to its end before it is reported — the report still names the character where decoding failed.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from modebench.guard import MAX_LINE_BYTES, open_regular
from modebench.validation import InputError

__all__ = ["iter_array", "iter_member"]

_CHUNK = 1 << 20
_SPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


class _Reader:
    """A text buffer over ``handle`` with a cursor; ``offset`` counts characters dropped before it."""

    def __init__(self, handle: TextIO, path: Path) -> None:
        self.handle = handle
        self.path = path
        self.text = ""
        self.pos = 0
        self.offset = 0
        self.eof = False

    def _fill(self) -> bool:
        """Read more text (at least as much as is buffered, so retries stay linear); False at EOF."""
        if self.eof:
            return False
        if self.pos > len(self.text) // 2:
            self.offset += self.pos
            self.text = self.text[self.pos :]
            self.pos = 0
        try:
            more = self.handle.read(max(_CHUNK, len(self.text)))
        except UnicodeDecodeError as exc:
            raise InputError(f"{self.path}: invalid JSON (not UTF-8: {exc.reason})") from None
        if not more:
            self.eof = True
            return False
        self.text += more
        if len(self.text) - self.pos > MAX_LINE_BYTES:  # one value (or a corrupt tail) past the cap
            raise InputError(f"{self.path}: a JSON value exceeds {MAX_LINE_BYTES} characters")
        return True

    def fail(self, what: str) -> InputError:
        return InputError(f"{self.path}: invalid JSON ({what} at character {self.offset + self.pos})")

    def peek(self) -> str:
        """The next non-space character ('' at EOF), without consuming it."""
        while True:
            self.pos = _SPACE.match(self.text, self.pos).end()  # type: ignore[union-attr]
            if self.pos < len(self.text):
                return self.text[self.pos]
            if not self._fill():
                return ""

    def expect(self, char: str) -> None:
        if self.peek() != char:
            raise self.fail(f"expected {char!r}")
        self.pos += 1

    def value(self) -> Any:
        self.peek()
        while True:
            try:
                value, end = _DECODER.raw_decode(self.text, self.pos)
            except json.JSONDecodeError as exc:
                if self._fill():
                    continue
                self.pos = exc.pos
                raise self.fail(exc.msg) from None
            # A number or literal that ends exactly at the buffer's end may continue past it.
            if end == len(self.text) and self._fill():
                continue
            self.pos = end
            return value


def iter_member(path: Path, member: str, missing: str) -> Iterator[Any]:
    """Each element of the top-level object's array ``member``, one at a time.

    Raises :class:`InputError` naming ``path``: ``missing`` when the file is not a JSON object or
    its ``member`` is not an array (``null`` counts as an empty one); "invalid JSON" when it is not
    JSON at all.
    """
    with io.TextIOWrapper(open_regular(path, "log"), encoding="utf-8") as handle:
        reader = _Reader(handle, path)
        if reader.peek() != "{":
            reader.value()  # invalid JSON is reported as such, other JSON values as ``missing``
            raise InputError(f"{path}: {missing}")
        reader.pos += 1
        found = False
        if reader.peek() == "}":
            reader.pos += 1
        else:
            while True:
                key = reader.value()
                if not isinstance(key, str):
                    raise reader.fail("expected a key")
                reader.expect(":")
                if key != member:
                    reader.value()
                elif reader.peek() == "[":
                    found = True
                    reader.pos += 1
                    yield from _elements(reader)
                elif reader.value() is None:
                    found = True
                else:
                    raise InputError(f"{path}: {missing}")
                if reader.peek() == ",":
                    reader.pos += 1
                    continue
                reader.expect("}")
                break
        if reader.peek() != "":
            raise reader.fail("extra data")
        if not found:
            raise InputError(f"{path}: {missing}")


def _elements(reader: _Reader) -> Iterator[Any]:
    """The rest of an array whose ``[`` was consumed, through its ``]``."""
    if reader.peek() == "]":
        reader.pos += 1
        return
    while True:
        yield reader.value()
        if reader.peek() == "]":
            reader.pos += 1
            return
        reader.expect(",")


def iter_array(path: Path) -> Iterator[Any]:
    """Each element of a file that is one top-level JSON array (lm-eval 0.4.0–0.4.2 sample files)."""
    with path.open("r", encoding="utf-8") as handle:
        reader = _Reader(handle, path)
        reader.expect("[")
        yield from _elements(reader)
        if reader.peek() != "":
            raise reader.fail("extra data")
