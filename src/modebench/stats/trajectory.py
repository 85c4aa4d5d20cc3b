"""Trajectories: the statistics of many runs of the same tasks, ordered by training step.

Per step and cell (level, domain): accuracy, unbiased pass@k and E[distinct@k], PCMD and effective
modes — the rows of :func:`modebench.stats.curves` for that step's receipt — and mode retention
against the first step: modes of step 0 kept, lost and gained, summed over the prompts both steps
graded (:func:`modebench.stats.iter_prompt_retention`), and the share of step-0 modes still
produced. The mode keys lost at each step, per prompt, travel in the JSON document. Each receipt's
journal is read once (``modebench.stats.journal``). See ``docs/ingest.md``.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from typing import Any

from modebench.identity import file_sha256
from modebench.stats import chunks
from modebench.stats.profiles import CellKey, Profile, PromptSummary, completed_receipt, entry_summary
from modebench.stats.summary import curves_from_profiles
from modebench.stats.table import StatsTable
from modebench.validation import InputError

__all__ = ["COLUMNS", "SCHEMA", "trajectory_table"]

SCHEMA = "modebench-trajectory-v1"
COLUMNS = ("step", "level", "domain", "draws", "metric", "k", "estimate", "prompts")
_RETENTION = ("modes_first", "modes_kept", "modes_lost", "modes_gained", "retention_share")
_SHOWN = 5
PromptKey = tuple[int, str, str]  # level, domain, id: the evaluator's prompt identity


class _Step:
    """One pass over a step's receipt: profile frequencies per cell and retention against step 0.

    ``first`` holds the first step's verified modes per prompt (empty while reading the first
    step itself, which keeps them): the only per-prompt state, so each journal is read once.
    """

    def __init__(self, path: str, first: dict[PromptKey, tuple[str, dict[str, int]]] | None) -> None:
        self.path = path
        self.first = first
        self.keep: dict[PromptKey, tuple[str, dict[str, int]]] = {}
        self.profiles: dict[CellKey, Counter[Profile]] = {}
        self.totals: dict[tuple[int, str], list[int]] = {}
        self.lost: dict[str, list[str]] = {}
        self.seen: set[PromptKey] = set()
        self.differing: list[str] = []
        self.twice: str | None = None

    def add(self, summary: PromptSummary) -> None:
        self.profiles.setdefault(summary.cell, Counter())[summary.profile] += 1
        key = (summary.cell[0], summary.cell[1], summary.id)
        if key in self.seen:
            self.twice = self.twice or summary.id
            return
        self.seen.add(key)
        if self.first is None:
            self.keep[key] = (summary.reference_sha256, dict(summary.modes))
            found: tuple[str, dict[str, int]] | None = self.keep[key]
        else:
            found = self.first.get(key)
        if found is None:
            return
        reference, modes_first = found
        if reference != summary.reference_sha256:
            self.differing.append(summary.id)
            return
        a, b = set(modes_first), set(summary.modes)
        totals = self.totals.setdefault(key[:2], [0, 0, 0, 0, 0])
        for i, value in enumerate((len(a), len(a & b), len(a - b), len(b - a), 1)):
            totals[i] += value
        if a - b:
            self.lost[summary.id] = sorted(a - b)

    def check(self) -> None:
        if self.twice is not None:
            raise InputError(f"{self.path}: prompt {self.twice!r} appears twice")
        if self.differing:
            shown = ", ".join(repr(i) for i in self.differing[:_SHOWN])
            more = f" and {len(self.differing) - _SHOWN} more" if len(self.differing) > _SHOWN else ""
            raise InputError(f"the runs grade different prompts under the same id: {shown}{more}")

    def retention_rows(self, step: int) -> list[dict[str, Any]]:
        rows = []
        for (level, domain), (first_modes, kept, gone, gained, prompts) in sorted(self.totals.items()):
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
    """The trajectory of completed receipts given as ``(step, receipt)``; steps must be distinct.

    Each receipt's journal is read once; the first step's verified modes per prompt are kept for
    the retention of every later step.
    """
    if not steps:
        raise InputError("a trajectory needs at least one run")
    ordered = sorted((step, os.fspath(path)) for step, path in steps)
    seen = [step for step, _ in ordered]
    if len(set(seen)) != len(seen):
        raise InputError(f"two runs share a training step: {sorted({s for s in seen if seen.count(s) > 1})}")
    rows: list[dict[str, Any]] = []
    lost: dict[str, dict[str, list[str]]] = {}
    sources = []
    first: dict[PromptKey, tuple[str, dict[str, int]]] | None = None
    for step, receipt in ordered:
        reader = _Step(receipt, first)
        for summary in chunks.entries(completed_receipt(receipt), entry_summary, light=True):
            reader.add(summary)
        reader.check()
        if first is None:
            first = reader.keep
        source = {"receipt": receipt, "sha256": file_sha256(receipt)}
        table = curves_from_profiles(reader.profiles, ks, None, source)
        sources.append({"step": step, **source})
        for row in table.rows:
            rows.append({"step": step, **{c: row[c] for c in COLUMNS if c != "step"}})
        lost[str(step)] = reader.lost
        rows.extend(reader.retention_rows(step))
    return StatsTable(SCHEMA, COLUMNS, tuple(rows), {"runs": sources, "lost_modes": lost})
