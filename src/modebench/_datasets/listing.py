"""What a registry offers: its bytes, its records, and the text of ``datasets list``."""

from __future__ import annotations

import json
from typing import Any

from modebench._datasets.sources import RegistryLike, load_registry
from modebench._datasets.suggest import unknown_hint
from modebench.validation import InputError, with_hint

__all__ = ["discover", "listing", "registry_bytes"]


def registry_bytes(registry: RegistryLike = None) -> bytes:
    """The exact registry bytes (for the packaged one: the 0.4.0 ``frozen_splits.json``)."""
    return load_registry(registry).raw


def discover(
    config: str | None = None, split: str | None = None, *, registry: RegistryLike = None
) -> list[dict[str, Any]]:
    """Registry records matching the optional filters, in registry order.

    A selection that matches nothing is an error, as in 0.4.0 (whose message this is): a caller
    never mistakes a typo, or a path such as ``../../escape``, for an empty registry.
    """
    chosen = load_registry(registry)
    records = chosen.select(config, split)
    if not records:
        raise with_hint(
            InputError(f"unknown dataset selection: {config or '*'}/{split or '*'}; use datasets list"),
            unknown_hint(config, split, chosen.records).strip() or None,
        )
    return records


def listing(
    config: str | None = None,
    split: str | None = None,
    *,
    as_json: bool = False,
    registry: RegistryLike = None,
) -> str:
    """The text of ``datasets list``; no network for the packaged registry."""
    chosen = load_registry(registry)
    records = chosen.select(config, split)
    if not records:
        raise InputError(
            f"unknown dataset selection: {config or '*'}/{split or '*'}; use datasets list"
            + unknown_hint(config, split, chosen.records)
        )
    if as_json:
        return json.dumps(records, indent=2)
    lines = ["level domain config split rows"]
    for record in sorted(records, key=lambda r: (r["level"], r["domain"], r["config_name"], r["split"])):
        lines.append(
            f"{record['level']} {record['domain']} {record['config_name']} {record['split']} {record['rows']}"
        )
    return "\n".join(lines)
