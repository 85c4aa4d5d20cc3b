"""Comparisons of several runs (receipts, suites or directories of receipts) against a baseline.

Every run is compared with the baseline run (the first, or the one named) exactly as two receipts
are (:mod:`modebench.stats.comparison`): per cell, per domain when a domain has several levels,
and over all cells. A run made of several receipts (a suite) is paired with the baseline part by
part (the configuration or file name); the joint counts of all parts are pooled before any row is
computed, so domain and all-cells rows resample prompts across the whole suite.

Every row with a test carries its p-value (``p_value``: exact McNemar for the binary outcomes, a
one-sided normal test for retention against the within-run baseline, a two-sided normal test of
the clustered difference otherwise) and its Holm–Bonferroni adjustment ``p_holm`` over *all* the
tests of the output — every compared run, cell, domain, metric and k (Holm 1979, *A simple
sequentially rejective multiple test procedure*). The family is what was printed, so filters
(``cells``, ``domains``, ``levels``) and ``--k`` change it; the document says how large it was.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from modebench.identity import file_sha256
from modebench.stats.bootstrap import Bootstrap
from modebench.stats.comparison import (
    COMPARE_COLUMNS,
    SCHEMA,
    Pair,
    bootstrap_meta,
    budget_notes,
    compare_pairs,
    coverage,
    paired_counts,
)
from modebench.stats.sources import Filters, Run, label_runs, reportable_threshold
from modebench.stats.table import StatsTable
from modebench.validation import InputError

__all__ = ["COLUMNS", "Filters", "compare_runs", "holm", "pair_runs", "reportable_threshold"]

COLUMNS = ("run_a", "run_b", *COMPARE_COLUMNS, "p_holm", "reportable")
_PCMD_ROWS = ("pcmd", "effective_modes")
DISPLAY = ("run_b", "level", "domain", "metric", "k", "a", "b", "estimate", "ci_low", "ci_high", "p_value",
           "p_holm", "reportable")  # fmt: skip


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm–Bonferroni adjusted p-values, in the input order.

    Sorted ascending p_(1) ≤ … ≤ p_(m): adjusted p_(i) = max_{j ≤ i} min(1, (m − j + 1)·p_(j)).
    """
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted


def pair_runs(
    base: Run, other: Run
) -> tuple[dict[tuple[int, str], Counter[Pair]], dict[str, int], list[str]]:
    """Pooled joint counts of two runs paired part by part; the parts only one run has."""
    mine = dict(base.parts)
    theirs = dict(other.parts)
    if len(base.parts) == 1 and len(other.parts) == 1:
        pairs = [(base.parts[0][1], other.parts[0][1])]
        unmatched: list[str] = []
    else:
        pairs = [(mine[name], theirs[name]) for name, _ in base.parts if name in theirs]
        unmatched = sorted(set(mine) ^ set(theirs))
        if not pairs:
            raise InputError(f"{base.path} and {other.path} have no configuration in common")
    groups: dict[tuple[int, str], Counter[Pair]] = {}
    totals = {"prompts_a": 0, "prompts_b": 0}
    for a, b in pairs:
        found, counts = paired_counts(a, b)
        for key, part in found.items():
            groups.setdefault(key, Counter()).update(part)
        totals["prompts_a"] += counts["prompts_a"]
        totals["prompts_b"] += counts["prompts_b"]
    return groups, totals, unmatched


def compare_runs(
    runs: Sequence[Run],
    ks: Sequence[int] | None = None,
    settings: Bootstrap | None = None,
    *,
    baseline: str | None = None,
    allow_unequal_draws: bool = False,
    filters: Filters | None = None,
) -> StatsTable:
    """Every run against the baseline (the first run, or the one labelled ``baseline``)."""

    if len(runs) < 2:
        raise InputError("a comparison needs at least two runs")
    chosen = settings if settings is not None else Bootstrap()
    labels = label_runs(list(runs))
    if baseline is None:
        first = 0
    elif baseline in labels:
        first = labels.index(baseline)
    else:
        raise InputError(f"--baseline {baseline!r} names no run; the runs are {', '.join(map(repr, labels))}")
    threshold = reportable_threshold([r for run in runs for r in run.receipts])
    rows: list[dict[str, Any]] = []
    comparisons = []
    for index, run in enumerate(runs):
        if index == first:
            continue
        groups, counts, unmatched = pair_runs(runs[first], run)
        if filters:
            groups = filters.apply(groups)
        if not groups:
            what = "in the selected cells" if filters else "in common"
            raise InputError(f"{runs[first].path} and {run.path} have no prompt {what}")
        try:
            found = compare_pairs(groups, ks, chosen, allow_unequal_draws=allow_unequal_draws)
        except InputError as exc:
            raise InputError(f"{labels[first]} vs {labels[index]}: {exc}") from None
        for row in found:
            pcmd_row = row["metric"] in _PCMD_ROWS
            full = {"run_a": labels[first], "run_b": labels[index], **row, "p_holm": None,
                    "reportable": (row["prompts"] >= threshold) if pcmd_row else None}  # fmt: skip
            rows.append({name: full[name] for name in COLUMNS})
        comparisons.append(
            {
                "a": labels[first],
                "b": labels[index],
                "coverage": coverage(groups, counts),
                "unmatched_parts": unmatched,
                "notes": [
                    *budget_notes(groups),
                    *runs[first].notes(labels[first]),
                    *run.notes(labels[index]),
                ],
            }  # fmt: skip
        )
    tested = [i for i, row in enumerate(rows) if row["p_value"] is not None]
    for i, adjusted in zip(tested, holm([rows[i]["p_value"] for i in tested])):
        rows[i]["p_holm"] = adjusted
    meta: dict[str, Any] = {
        "runs": [
            {
                "label": label,
                "path": run.path,
                "receipts": [
                    {"part": part, "receipt": path, "sha256": file_sha256(path)} for part, path in run.parts
                ],
            }
            for label, run in zip(labels, runs)
        ],  # fmt: skip
        "baseline": labels[first],
        "comparisons": comparisons,
        "multiple_comparisons": {"method": "holm-bonferroni", "tests": len(tested)},
        "pcmd_min_defined_prompts": threshold,
        "bootstrap": bootstrap_meta(chosen),
    }
    if len(runs) == 2:  # the two-run document keeps its coverage at the top, as before
        meta["coverage"] = comparisons[0]["coverage"]
    shown = DISPLAY if len(runs) > 2 else DISPLAY[1:]
    return StatsTable(SCHEMA, COLUMNS, tuple(rows), meta, shown, _headers(labels, first))


def _headers(labels: list[str], first: int) -> dict[str, str]:
    """The value columns a and b named after their runs in the displayed tables: the baseline's
    label for a, and for a two-run comparison the other's for b (with more runs, run_b says)."""
    headers = {"a": labels[first]}
    if len(labels) == 2:
        headers["b"] = labels[1 - first]
    return headers
