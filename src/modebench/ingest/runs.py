"""The runs of a trajectory: receipts (``PATH`` or ``STEP=PATH``) and rollout sources
(``verl:DIR``, ``trl:DIR``) graded step by step through the content-hash cache."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from modebench.api_types import EvaluationOptions
from modebench.ingest import STEPPED, prompt_index
from modebench.ingest.grading import graded_steps
from modebench.validation import InputError

__all__ = ["resolve_runs"]


def _split_spec(spec: str, position: int) -> tuple[str, Any]:
    """``("rollout", (fmt, dir))`` or ``("receipt", (step, path))``."""
    head, sep, rest = spec.partition(":")
    if sep and head in STEPPED:
        return "rollout", (head, rest)
    head, sep, rest = spec.partition("=")
    if sep:
        try:
            return "receipt", (int(head), rest)
        except ValueError:
            raise InputError(f"run {spec!r}: the step before '=' must be an integer") from None
    return "receipt", (position, spec)


def resolve_runs(
    specs: Sequence[str],
    *,
    cache_dir: str | os.PathLike[str],
    options: EvaluationOptions,
    workers: int = 1,
    id_field: str | None = None,
) -> tuple[list[tuple[int, Path]], dict[str, Any]]:
    """``(step, receipt)`` of every run, grading rollout sources as needed, and grading counts.

    ``id_field`` names the rollout sources' prompt-id field (as ``ingest``'s); receipts ignore it.
    """
    runs: list[tuple[int, Path]] = []
    counts = {"graded": 0, "cached": 0, "unmatched": 0}
    index = None
    for position, spec in enumerate(specs):
        kind, value = _split_spec(spec, position)
        if kind == "receipt":
            step, path = value
            if not Path(path).is_file() and not Path(path).is_dir():
                raise InputError(f"run {spec!r}: no such receipt, suite.json or directory: {path}")
            runs.append((step, Path(path)))
            continue
        if options.config is None:
            raise InputError(
                f"run {spec!r}: grading a rollout source needs a config to match prompts against"
            )
        if index is None:
            index = prompt_index(
                options.registry, options.config, options.split,
                data_root=options.data_root, cache_dir=options.cache_dir, offline=options.offline,
            )  # fmt: skip
        fmt, source = value
        steps, graded = graded_steps(
            fmt, source, cache_dir, index=index, options=options, workers=workers, id_field=id_field
        )
        runs.extend(steps)
        for key in counts:
            counts[key] += graded[key]
    return runs, counts
