"""Atomic, never-overwriting publication of files (receipts, exports, journal rewrites).

One rule for every writer (evaluate, merge, ingest, stats/report outputs, generate, suites):

* a destination is never overwritten: the finished temporary is hard-linked to its final name,
  which fails if anything (a file, a directory, a dangling symlink) is already there;
* a destination that is a symbolic link is refused before anything is written (``destination``):
  resolving it would write wherever the link points;
* temporaries are created exclusively (``O_CREAT | O_EXCL | O_NOFOLLOW``) under unpredictable
  names, so a file or link planted at a temporary's name is never written through.

``replace=True`` (a journal rewrite inside a work directory, a cache refresh) renames over the
destination instead; ``os.replace`` replaces a link itself, never its target.
"""

from __future__ import annotations

import os
import secrets
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from modebench.validation import InputError, OutputExistsError, output_exists


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def destination(path: str | os.PathLike[str]) -> Path:
    """The absolute destination ``path`` names, refused if it is a symbolic link (even a dangling one)."""
    given = Path(path)
    if given.is_symlink():
        raise InputError(f"output is a symbolic link (never followed): {given.absolute()}")
    return given.resolve()


def exclusive_temporary(final: Path, *, binary: bool = False) -> tuple[Path, IO[Any]]:
    """A new temporary sibling of ``final`` under an unpredictable name, created exclusively."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    # The naming sweepers know (`_ledger.sweep_temporaries`): 48 random bits, never reused (O_EXCL)
    temp = final.parent / f".{final.name}-{secrets.token_hex(6)}"
    fd = os.open(temp, flags, 0o666)
    if binary:
        return temp, os.fdopen(fd, "wb")
    return temp, os.fdopen(fd, "w", encoding="utf-8", newline="")


def publish_new(temp: Path, final: Path) -> None:
    """Give the finished ``temp`` its name ``final``, never replacing what is there; ``temp`` goes."""
    try:
        os.link(temp, final, follow_symlinks=False)
    except FileExistsError:
        raise output_exists(final, OutputExistsError) from None
    finally:
        temp.unlink(missing_ok=True)


@contextmanager
def atomic_output(
    path: str | os.PathLike[str], *, replace: bool = False, binary: bool = False
) -> Iterator[IO[str]]:
    """Write to a temporary sibling, then hard-link (never overwrite) or rename (``replace``)."""
    final = Path(path)
    final.parent.mkdir(parents=True, exist_ok=True)
    if not replace and os.path.lexists(final):  # before the work: a link is not followed either
        raise output_exists(final, OutputExistsError)
    temp, handle = exclusive_temporary(final, binary=binary)
    try:
        with handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        if replace:
            os.replace(temp, final)
        else:
            publish_new(temp, final)
        _fsync_dir(final.parent)
    finally:
        if temp.exists():
            temp.unlink()


@contextmanager
def atomic_directory(path: str | os.PathLike[str], label: str) -> Iterator[Path]:
    """Fill a new temporary sibling directory, then rename it to ``path``; on any error remove it.

    ``path`` must not exist (``<label> destination already exists: <path>``), so a published
    directory is never changed: a changed one is a new one.
    """
    target = Path(path)
    if target.exists():
        raise InputError(f"{label} destination already exists: {os.fspath(path)}")
    target.parent.mkdir(parents=True, exist_ok=True)
    temp = target.parent / f".modebench-{label}-{secrets.token_hex(6)}"
    temp.mkdir()
    try:
        yield temp
        os.rename(temp, target)
    except BaseException:
        shutil.rmtree(temp, ignore_errors=True)
        raise


__all__ = ["atomic_directory", "atomic_output", "destination", "exclusive_temporary", "publish_new"]
