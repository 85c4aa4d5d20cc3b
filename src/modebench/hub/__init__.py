"""Hugging Face Hub support: release directories as Hub datasets, and the Hub as a data origin.

* :func:`refresh_card` / ``modebench build`` write a release's ``README.md`` dataset card;
* :func:`export_release` (``modebench datasets export``) turns any registry's splits into such a
  directory;
* ``hf://datasets/OWNER/NAME@COMMIT`` registries fetch files with ``huggingface_hub`` at a pinned
  commit and verify them against the registry before use (:mod:`modebench.hub.origin`).

Nothing here imports ``huggingface_hub`` or ``datasets`` at import time: a core install can read
and write cards, and only fetching from the Hub needs the ``data`` extra.
"""

from __future__ import annotations

from modebench.hub.release_dir import refresh_card

__all__ = ["refresh_card"]
