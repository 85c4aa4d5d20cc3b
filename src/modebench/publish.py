"""Atomic, never-overwriting publication of files (receipts, exports, journal rewrites)."""

from __future__ import annotations

import os
import secrets
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from modebench.validation import InputError, OutputExistsError


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextmanager
def atomic_output(
    path: str | os.PathLike[str], *, replace: bool = False, binary: bool = False
) -> Iterator[IO[str]]:
    """Write to a temporary sibling, then hard-link (never overwrite) or rename (``replace``)."""
    final = Path(path)
    final.parent.mkdir(parents=True, exist_ok=True)
    temp = final.parent / f".{final.name}-{secrets.token_hex(6)}"
    handle = open(
        temp, "wb" if binary else "w", encoding=None if binary else "utf-8", newline=None if binary else ""
    )  # noqa: SIM115
    try:
        with handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        if replace:
            os.replace(temp, final)
        else:
            try:
                os.link(temp, final)
            except FileExistsError:
                raise OutputExistsError(f"output already exists: {final}") from None
            os.unlink(temp)
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


__all__ = ["atomic_directory", "atomic_output"]
