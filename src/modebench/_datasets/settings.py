"""The names of ``modebench.dataset_cache`` that callers replace at call time.

``urlopen``, ``MAX_DOWNLOAD_BYTES`` and ``DOWNLOAD_TIMEOUT_SECONDS`` are ModeBench 0.4.0 names
that its tests replace on ``modebench.dataset_cache`` (◆ in the API spec, §4). The private
modules read them from there each time they are used — by name, through :func:`public`, because
``dataset_cache`` is the public module over these private ones and importing it back would make
a circle of imports.
"""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["public"]


def public() -> ModuleType:
    """``modebench.dataset_cache`` itself (already imported by whoever uses the private modules)."""
    return importlib.import_module("modebench.dataset_cache")
