"""Frozen splits: lookup, verified Parquet loading, prompt IDs, request export, and the frozen
checks of the evaluator.

The public names of this module (the 0.4.0 surface) are re-exported from private modules:
``modebench._datasets.parquet`` (find, verify and read a split), ``roots`` (which data directory),
``export`` (tasks, ``prepare`` requests, ``datasets inspect``) and ``frozen`` (``FrozenSplit``).

:func:`load_split` returns a ``datasets.Dataset`` as ModeBench 0.4.0 did (for user code:
``.to_pandas()``, ``.map()``, column access); :func:`load_rows` returns plain row dictionaries and
needs only pyarrow — the evaluator and every internal caller use it.
"""

from __future__ import annotations

from modebench._datasets.export import export_requests, inspect, iter_tasks, prepare_requests
from modebench._datasets.frozen import UNIQUE_ANSWER_NOTE, FrozenSplit, open_frozen
from modebench._datasets.parquet import (
    DATA_EXTRA_MESSAGE,
    PathLike,
    load_rows,
    load_split,
    prompt_id,
    split_record,
)
from modebench._datasets.roots import resolve_data_root

__all__ = [
    "DATA_EXTRA_MESSAGE",
    "UNIQUE_ANSWER_NOTE",
    "FrozenSplit",
    "PathLike",
    "export_requests",
    "inspect",
    "iter_tasks",
    "load_rows",
    "load_split",
    "open_frozen",
    "prepare_requests",
    "prompt_id",
    "resolve_data_root",
    "split_record",
]

# ModeBench 0.4.0 surface names (docs/compatibility.md).
from modebench.validation import InputError, loads, positive_integer  # noqa: E402

__all__ += ["InputError", "loads", "positive_integer"]
