"""Which configurations a suite covers: names (comma lists allowed) or ``all`` of a registry.

A selection is a list of strings; each may hold several names separated by commas, and the
name ``all`` stands for every configuration of the registry that has the chosen split (in the
registry's order, which is by name). Duplicates are dropped, keeping the first occurrence. A name
the registry does not have is refused with 0.4.0's message plus the closest names.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from modebench._datasets.sources import RegistryLike, load_registry
from modebench._datasets.suggest import unknown_hint
from modebench.validation import InputError

__all__ = ["ALL", "expand_configs", "is_single", "split_names"]

#: The selection word for every configuration of a registry (with the chosen split).
ALL = "all"


def split_names(selection: str | Sequence[str]) -> list[str]:
    """The names of a selection as given, commas split, blanks refused (no registry needed)."""
    items = [selection] if isinstance(selection, str) else list(selection)
    names: list[str] = []
    for item in items:
        parts = [part.strip() for part in item.split(",")]
        if not item.strip() or any(not part for part in parts):
            raise InputError(f"empty configuration name in {item!r}")
        names.extend(parts)
    return names


def is_single(selection: str | Sequence[str]) -> bool:
    """True when the selection is one plain name: the classic one-configuration run."""
    names = split_names(selection)
    return len(names) == 1 and names[0] != ALL and (isinstance(selection, str) or len(selection) == 1)


def expand_configs(
    selection: str | Sequence[str],
    split: str = "eval",
    *,
    registry: RegistryLike = None,
    offline: bool = False,
    cache_dir: str | os.PathLike[str] | None = None,
) -> list[str]:
    """The configurations a selection names, checked against the registry, in selection order."""
    chosen = load_registry(registry, offline=offline, cache_dir=cache_dir)
    having = [record["config_name"] for record in chosen.select(split=split)]
    found: list[str] = []
    for name in split_names(selection):
        for config in having if name == ALL else [name]:
            if config not in having:
                raise InputError(
                    f"unknown dataset selection: {config}/{split}; use datasets list"
                    + unknown_hint(config, split, chosen.records)
                )
            if config not in found:
                found.append(config)
    if not found:
        raise InputError(f"unknown dataset selection: */{split}; use datasets list")
    return found
