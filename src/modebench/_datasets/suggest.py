"""The second line of an "unknown configuration" error: the name as given and the closest ones.

The first line of these errors is 0.4.0's text and stays as it was; the suggestion follows on a
line of its own, so a reader (or a test) matching the old message still finds it.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["closest_configs", "unknown_hint"]

#: How many close names to offer, and how close a name must be (difflib's ratio) to be offered.
MAX_SUGGESTIONS = 3
CUTOFF = 0.6


def closest_configs(name: str, configs: Iterable[str]) -> list[str]:
    """Configuration names close to ``name``, best first."""
    return difflib.get_close_matches(name, sorted(set(configs)), n=MAX_SUGGESTIONS, cutoff=CUTOFF)


def unknown_hint(config: str | None, split: str | None, records: Iterable[Mapping[str, Any]]) -> str:
    """``"\\n  …"`` naming what is wrong with (config, split) among ``records``, or ``""``."""
    if config is None:
        return ""
    known = [record for record in records if isinstance(record.get("config_name"), str)]
    splits = sorted(str(record.get("split")) for record in known if record["config_name"] == config)
    if splits:
        if split is None or split in splits:
            return ""
        return f"\n  {config!r} has the splits: {', '.join(splits)}"
    close = closest_configs(config, (record["config_name"] for record in known))
    if close:
        return f"\n  no configuration named {config!r}; closest: {', '.join(close)}"
    return f"\n  no configuration named {config!r} in this registry"
