"""Trajectories: the statistics of many runs of the same tasks, ordered by training step.

Per step and cell (level, domain): accuracy, unbiased pass@k and E[distinct@k], PCMD and effective
modes — the rows of :func:`modebench.stats.curves` for that step's receipt — and mode retention
against the first step: modes of step 0 kept, lost and gained, summed over the prompts both steps
graded (:func:`modebench.stats.iter_prompt_retention`), and the share of step-0 modes still
produced. The mode keys lost at each step, per prompt, travel in the JSON document. See
``docs/ingest.md``.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from typing import Any

from modebench.identity import file_sha256
from modebench.stats.comparison import join_summaries, retention_records
from modebench.stats.profiles import CellKey, Profile, PromptSummary, iter_summaries
from modebench.stats.summary import curves_from_profiles
from modebench.stats.table import StatsTable
from modebench.validation import InputError

__all__ = ["COLUMNS", "SCHEMA", "trajectory_table"]

SCHEMA = "modebench-trajectory-v1"
COLUMNS = ("step", "level", "domain", "draws", "metric", "k", "estimate", "prompts")
_RETENTION = ("modes_first", "modes_kept", "modes_lost", "modes_gained", "retention_share")


def _retention_rows(
    step: int, first: tuple[str, list[PromptSummary]], receipt: tuple[str, list[PromptSummary]],
    lost: dict[str, list[str]],
) -> list[dict[str, Any]]:  # fmt: skip
    cells: dict[tuple[int, str], list[int]] = {}
    pairs = join_summaries(first[1], receipt[1], (first[0], receipt[0]))
    for record in retention_records(pairs):
        totals = cells.setdefault((record["level"], record["domain"]), [0, 0, 0, 0, 0])
        for i, value in enumerate(
            (len(record["modes_a"]), len(record["retained"]), len(record["lost"]), len(record["gained"]), 1)
        ):
            totals[i] += value
        if record["lost"]:
            lost[record["id"]] = record["lost"]
    rows = []
    for (level, domain), (first_modes, kept, gone, gained, prompts) in sorted(cells.items()):
        share = kept / first_modes if first_modes else None
        values: tuple[float | None, ...] = (first_modes, kept, gone, gained, share)
        for name, estimate in zip(_RETENTION, values):
            rows.append(
                {"step": step, "level": level, "domain": domain, "draws": None, "metric": name,
                 "k": None, "estimate": estimate, "prompts": prompts}
            )  # fmt: skip
    return rows


def trajectory_table(
    steps: Sequence[tuple[int, str | os.PathLike[str]]], ks: Sequence[int] | None = None
) -> StatsTable:
    """The trajectory of completed receipts given as ``(step, receipt)``; steps must be distinct."""
    if not steps:
        raise InputError("a trajectory needs at least one run")
    ordered = sorted((step, os.fspath(path)) for step, path in steps)
    seen = [step for step, _ in ordered]
    if len(set(seen)) != len(seen):
        raise InputError(f"two runs share a training step: {sorted({s for s in seen if seen.count(s) > 1})}")
    # Each receipt is read (and its journal verified) once; its prompt summaries feed both its
    # curves and its retention against the first step, which stays in memory for every step.
    first: tuple[str, list[PromptSummary]] | None = None
    rows: list[dict[str, Any]] = []
    lost: dict[str, dict[str, list[str]]] = {}
    sources = []
    for step, receipt in ordered:
        summaries = list(iter_summaries(receipt))
        current = (receipt, summaries)
        first = first or current
        cells: dict[CellKey, Counter[Profile]] = {}
        for summary in summaries:
            cells.setdefault(summary.cell, Counter())[summary.profile] += 1
        source = {"receipt": receipt, "sha256": file_sha256(receipt)}
        table = curves_from_profiles(cells, ks, None, source)
        sources.append({"step": step, **source})
        for row in table.rows:
            rows.append(
                {"step": step, **{c: row[c] for c in COLUMNS if c != "step"}, "estimate": row["estimate"]}
            )
        lost[str(step)] = {}
        rows.extend(_retention_rows(step, first, current, lost[str(step)]))
    return StatsTable(SCHEMA, COLUMNS, tuple(rows), {"runs": sources, "lost_modes": lost})
