"""Prompt-id lists: the files ``calibrate`` writes and ``prepare``/``evaluate`` select with.

Format (``docs/prompt-ids.md``): UTF-8 text, one prompt id per line; surrounding whitespace is
ignored, and so are blank lines and lines starting with ``#`` (comments). An id listed twice is an
error, so is an empty list. Ids are written in numeric order: ``…/eval/2`` before ``…/eval/10``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from modebench.guard import read_capped
from modebench.publish import atomic_output
from modebench.validation import InputError

__all__ = ["PromptIds", "natural_key", "read_ids", "write_ids"]

_DIGITS = re.compile(r"(\d+)")


def natural_key(text: str) -> tuple[tuple[int, int | str], ...]:
    """Sort key that compares digit runs as numbers: ``t2`` < ``t10``, ``a/eval/9`` < ``a/eval/10``."""
    return tuple((1, int(part)) if part.isdigit() else (0, part) for part in _DIGITS.split(text) if part)


@dataclass(frozen=True)
class PromptIds:
    """An id list read from ``path``: each id with the line it is on (file order)."""

    path: str
    lines: dict[str, int]

    def __contains__(self, ident: object) -> bool:
        return ident in self.lines

    def __len__(self) -> int:
        return len(self.lines)

    def ordered(self) -> list[str]:
        """The ids in numeric order (how receipts and identities record a selection)."""
        return sorted(self.lines, key=natural_key)

    def require_within(self, known: Collection[str], where: str) -> None:
        """Refuse the first listed id that ``known`` lacks, naming this file's line and ``where``."""
        for ident, line in self.lines.items():
            if ident not in known:
                raise InputError(f"{self.path} line {line}: unknown prompt id {ident!r}: not in {where}")


def read_ids(path: str | os.PathLike[str]) -> PromptIds:
    """Read an id list; every problem is an ``InputError`` naming the file (and line)."""
    name = os.fspath(path)
    try:
        text = read_capped(path, "ids").decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{name}: prompt id list is not UTF-8 text") from None
    except OSError as exc:
        raise InputError(f"cannot read prompt id list {name}: {exc.strerror or exc}") from None
    lines: dict[str, int] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        ident = raw.strip()
        if number == 1:
            ident = ident.lstrip("\ufeff")
        if not ident or ident.startswith("#"):
            continue
        if ident in lines:
            raise InputError(
                f"{name} line {number}: duplicate prompt id {ident!r} (first on line {lines[ident]})"
            )
        lines[ident] = number
    if not lines:
        raise InputError(f"{name}: no prompt ids (one id per line; '#' starts a comment)")
    return PromptIds(name, lines)


def write_ids(path: str | os.PathLike[str], ids: Iterable[str], comment: str) -> None:
    """Publish an id list (numeric order, a ``#`` comment first) atomically; never overwrite."""
    with atomic_output(path) as handle:
        handle.write(f"# {comment}\n")
        handle.writelines(f"{ident}\n" for ident in sorted(ids, key=natural_key))
