"""Where the cache lives: ``<base>/<sha256 of registry bytes>/data/`` per registry, and
``<base>/registries/`` for registries downloaded over http(s)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

__all__ = ["cache_base", "remembered_registry"]


def cache_base(cache_dir: str | os.PathLike[str] | None) -> Path:
    if cache_dir is not None:
        base = Path(cache_dir)
    elif os.environ.get("XDG_CACHE_HOME"):
        base = Path(os.environ["XDG_CACHE_HOME"]) / "modebench"
    else:
        base = Path("~/.cache/modebench")
    return base.expanduser().resolve()


def remembered_registry(source: str, cache_dir: str | os.PathLike[str] | None) -> Path:
    return cache_base(cache_dir) / "registries" / f"{hashlib.sha256(source.encode('utf-8')).hexdigest()}.json"
