"""Trajectories: the statistics of many runs of the same tasks, ordered by training step.

Per step and cell (level, domain): accuracy, unbiased pass@k and E[distinct@k], PCMD and effective
modes — the rows of :func:`modebench.stats.curves` for that step's receipt, with their bootstrap
intervals — and mode retention against the first step, exactly as ``compare`` computes it
(:mod:`modebench.stats.comparison`): modes of step 0 kept, lost and gained as means per prompt over
the prompts both steps graded, and the share of step-0 modes still produced, all at the common
number of draws; beside it the first step's within-run baseline (split halves) and the paired
difference from it with its one-sided p-value. The first step has only its baseline (retention of
a run against itself is 1 by construction, so it is not shown). A later step with no prompt in
common with the first is refused. A step may be a receipt, a ``suite.json`` or a directory of
receipts (its receipts' cells read together). The mode keys lost at each step, per prompt, travel in the JSON
document. Each receipt's journal is read once (``modebench.stats.journal``). See ``docs/ingest.md``.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from typing import Any

from modebench.identity import file_sha256
from modebench.stats import bootstrap, chunks
from modebench.stats.bootstrap import Bootstrap
from modebench.stats.comparison import _group_rows
from modebench.stats.many import reportable_threshold
from modebench.stats.profiles import CellKey, Profile, PromptSummary, completed_receipt, entry_summary
from modebench.stats.retention import retention
from modebench.stats.sources import resolve_run
from modebench.stats.summary import curves_from_profiles
from modebench.stats.table import StatsTable
from modebench.validation import InputError

__all__ = ["COLUMNS", "SCHEMA", "trajectory_table"]

SCHEMA = "modebench-trajectory-v2"
COLUMNS = ("step", "level", "domain", "draws", "metric", "k", "estimate", "ci_low", "ci_high", "prompts",
           "p_value", "reportable")  # fmt: skip
# compare's row name -> the trajectory's
_RETENTION = {"modes_retained": "modes_kept", "modes_lost": "modes_lost", "modes_gained": "modes_gained",
              "mode_retention": "retention_share", "retention_baseline": "first_step_baseline",
              "retention_vs_baseline": "retention_vs_baseline"}  # fmt: skip
_SHOWN = 5
PromptKey = tuple[int, str, str]  # level, domain, id: the evaluator's prompt identity


class _Step:
    """One pass over a step's receipt: profile frequencies per cell and retention against step 0.

    ``first`` holds the first step's verified modes per prompt (empty while reading the first
    step itself, which keeps them): the only per-prompt state, so each journal is read once.
    """

    def __init__(self, path: str, first: dict[PromptKey, tuple[str, dict[str, int], Profile]] | None) -> None:
        self.path = path
        self.first = first
        self.keep: dict[PromptKey, tuple[str, dict[str, int], Profile]] = {}
        self.profiles: dict[CellKey, Counter[Profile]] = {}
        self.pairs: dict[tuple[int, str], Counter[Any]] = {}
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
            self.keep[key] = (summary.reference_sha256, dict(summary.modes), summary.profile)
            found: tuple[str, dict[str, int], Profile] | None = self.keep[key]
        else:
            found = self.first.get(key)
        if found is None:
            return
        reference, modes_first, profile_first = found
        if reference != summary.reference_sha256:
            self.differing.append(summary.id)
            return
        pair = (profile_first, summary.profile, retention(modes_first, summary.modes))
        self.pairs.setdefault(key[:2], Counter())[pair] += 1
        a, b = set(modes_first), set(summary.modes)
        if a - b:
            self.lost[summary.id] = sorted(a - b)

    def check(self) -> None:
        if self.twice is not None:
            raise InputError(f"{self.path}: prompt {self.twice!r} appears twice")
        if self.differing:
            shown = ", ".join(repr(i) for i in self.differing[:_SHOWN])
            more = f" and {len(self.differing) - _SHOWN} more" if len(self.differing) > _SHOWN else ""
            raise InputError(f"the runs grade different prompts under the same id: {shown}{more}")

    def retention_rows(self, step: int, first: bool, settings: Bootstrap) -> list[dict[str, Any]]:
        if not first and not self.pairs:
            raise InputError(f"step {step} ({self.path}) has no prompt in common with the first step")
        rows: list[dict[str, Any]] = []
        for (level, domain), pairs in sorted(self.pairs.items()):
            found = _group_rows(level, domain, pairs, [], settings)
            if not first:  # the first step's modes found: kept + lost (means per prompt)
                kept, gone = (
                    next(r for r in found if r["metric"] == m) for m in ("modes_retained", "modes_lost")
                )
                rows.append({"step": step, "level": level, "domain": domain, "draws": None,
                             "metric": "modes_first", "k": kept["k"], "estimate": kept["estimate"] + gone["estimate"],
                             "ci_low": None, "ci_high": None, "prompts": kept["prompts"], "p_value": None,
                             "reportable": None})  # fmt: skip
            for row in found:
                name = _RETENTION.get(row["metric"])
                if name is None or first:  # the first step's own baseline is among its stats rows
                    continue
                if name == "retention_vs_baseline":  # retention at the baseline's draws, beside it
                    rows.append({"step": step, "level": level, "domain": domain, "draws": None,
                                 "metric": "retention_share", "k": row["k"], "estimate": row["b"],
                                 "ci_low": None, "ci_high": None, "prompts": row["prompts"],
                                 "p_value": None, "reportable": None})  # fmt: skip
                rows.append({"step": step, "level": level, "domain": domain, "draws": None, "metric": name,
                             "k": row["k"], "estimate": row["estimate"], "ci_low": row["ci_low"],
                             "ci_high": row["ci_high"], "prompts": row["prompts"], "p_value": row["p_value"],
                             "reportable": None})  # fmt: skip
        return rows


def trajectory_table(
    steps: Sequence[tuple[int, str | os.PathLike[str]]],
    ks: Sequence[int] | None = None,
    settings: Bootstrap | None = None,
) -> StatsTable:
    """The trajectory of completed runs given as ``(step, run)``; steps must be distinct. A run is
    a receipt, a ``suite.json`` or a directory of receipts (``stats.sources``): a suite's receipts
    are read as one step.

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
    first: dict[PromptKey, tuple[str, dict[str, int], Profile]] | None = None
    chosen = settings if settings is not None else Bootstrap()
    runs = [resolve_run(receipt) for _, receipt in ordered]
    threshold = reportable_threshold([receipt for run in runs for receipt in run.receipts])
    for number, ((step, given), run) in enumerate(zip(ordered, runs)):
        reader = _Step(given, first)
        for receipt in run.receipts:
            for summary in chunks.entries(completed_receipt(receipt), entry_summary, light=True):
                reader.add(summary)
        reader.check()
        if first is None:
            first = reader.keep
        source: dict[str, Any] = {"receipt": given, "label": run.label or run.model}
        if len(run.parts) == 1:
            source["sha256"] = file_sha256(run.receipts[0])
        else:
            source["receipts"] = [{"part": part, "receipt": path, "sha256": file_sha256(path)}
                                  for part, path in run.parts]  # fmt: skip
        table = curves_from_profiles(reader.profiles, ks, chosen, source, threshold=threshold)
        sources.append({"step": step, **source})
        for row in table.rows:
            rows.append({"step": step, **{c: row.get(c) for c in COLUMNS if c != "step"}})
        lost[str(step)] = reader.lost
        rows.extend(reader.retention_rows(step, number == 0, chosen))
    notes = [note for (step, _), run in zip(ordered, runs) for note in run.notes(f"step {step}")]
    meta = {"runs": sources, "lost_modes": lost, **({"notes": notes} if notes else {}),
            "bootstrap": {"engine": bootstrap.engine(), "seed": chosen.seed, "resamples": chosen.resamples,
                          "level": chosen.level}}  # fmt: skip
    return StatsTable(SCHEMA, COLUMNS, tuple(rows), meta)
