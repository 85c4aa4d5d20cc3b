"""Hugging Face Hub support: release directories as Hub datasets, and the Hub as a data origin.

* :func:`refresh_card` and ``modebench build`` write a release's ``README.md`` dataset card;
* :func:`export_release` (``modebench datasets export``) turns any registry's splits into such a
  directory;
* ``hf://datasets/OWNER/NAME@COMMIT`` registries fetch files with ``huggingface_hub`` at a pinned
  commit and verify them against the registry before use (:mod:`modebench.hub.origin`).

Attributes are imported on first use, so importing the registry code (which parses Hub
addresses) stays light, and only fetching from the Hub needs the ``data`` extra.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["HubAddress", "export_release", "parse_address", "refresh_card"]

_HOMES = {
    "HubAddress": "modebench.hub.address",
    "parse_address": "modebench.hub.address",
    "export_release": "modebench.hub.export",
    "refresh_card": "modebench.hub.release_dir",
}


def __getattr__(name: str) -> Any:
    if name in _HOMES:
        return getattr(importlib.import_module(_HOMES[name]), name)
    raise AttributeError(f"module 'modebench.hub' has no attribute {name!r}")
