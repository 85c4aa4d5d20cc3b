"""Frozen splits from registries: loading registries, listing them, the verified download cache.

The public names of this module (the 0.4.0 surface) are re-exported from private modules:

* ``modebench._datasets.transfer`` — downloads under one overall deadline and a byte cap;
* ``modebench._datasets.sources`` — the packaged, bundled, local or remote registry;
* ``modebench._datasets.listing`` — registry bytes, records and the ``datasets list`` text;
* ``modebench._datasets.cache`` — the verified cache and ``fetch``.

``urlopen``, ``MAX_DOWNLOAD_BYTES`` and ``DOWNLOAD_TIMEOUT_SECONDS`` are read from *this* module
at call time, so replacing them here (as tests do) takes effect everywhere.
"""

from __future__ import annotations

from modebench._datasets.cache import cache_data_root, fetch
from modebench._datasets.listing import discover, listing, registry_bytes
from modebench._datasets.sources import (
    BUNDLED,
    BUNDLED_PACKAGE,
    RegistryLike,
    bundled_registry_path,
    bundled_release_root,
    load_registry,
)
from modebench._datasets.transfer import CHUNK_BYTES, DOWNLOAD_TIMEOUT_SECONDS, MAX_DOWNLOAD_BYTES, urlopen
from modebench.registries import DATA_ORIGIN, DATA_REVISION

__all__ = [
    "BUNDLED",
    "BUNDLED_PACKAGE",
    "CHUNK_BYTES",
    "DATA_ORIGIN",
    "DATA_REVISION",
    "DOWNLOAD_TIMEOUT_SECONDS",
    "MAX_DOWNLOAD_BYTES",
    "RegistryLike",
    "bundled_registry_path",
    "bundled_release_root",
    "cache_data_root",
    "discover",
    "fetch",
    "listing",
    "load_registry",
    "registry_bytes",
    "urlopen",
]

# ModeBench 0.4.0 surface names (docs/compatibility.md).
from modebench.validation import InputError  # noqa: E402

__all__ += ["InputError"]
