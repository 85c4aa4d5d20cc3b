"""Curves over k with uncertainty for every cell of one receipt (the ``stats`` table).

Rows, one per (cell, metric, k): accuracy; unbiased pass@k and E[distinct@k] for each k point;
PCMD over prompts with two or more successes; effective modes ``1/(1 − PCMD)``. Each row carries
the estimate, its clustered standard error and a seeded bootstrap interval (``docs/statistics.md``).
"""

from __future__ import annotations

import dataclasses
import os
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from fractions import Fraction
from functools import lru_cache
from typing import Any

from modebench.identity import file_sha256
from modebench.metrics import mode_diversity
from modebench.stats import bootstrap, estimators
from modebench.stats.bootstrap import Bootstrap
from modebench.stats.profiles import CellKey, Profile, cell_profiles
from modebench.stats.ratio import column, estimate, scaled_column, standard_error
from modebench.stats.retention import split_half
from modebench.stats.sources import Filters, label_runs, reportable_threshold, resolve_run
from modebench.stats.table import StatsTable
from modebench.validation import InputError

__all__ = ["SCHEMA", "STATS_COLUMNS", "Metric", "curves", "curves_from_profiles", "metrics_for", "k_points"]

SCHEMA = "modebench-stats-v2"
STATS_COLUMNS = (
    "level",
    "domain",
    "draws",
    "metric",
    "k",
    "estimate",
    "standard_error",
    "ci_low",
    "ci_high",
    "prompts",
    "reportable",
)
_PCMD_ROWS = ("pcmd", "effective_modes")
DISPLAY = tuple(c for c in STATS_COLUMNS if c != "standard_error")
# name, k (None when the metric has no k), per-profile (numerator, denominator)
Metric = tuple[str, int | None, Callable[[Profile], tuple[Fraction, int]]]


@lru_cache(maxsize=65536)
def _pass(n: int, c: int, k: int) -> Fraction:
    return estimators.pass_at_k_exact(n, c, k)


@lru_cache(maxsize=65536)
def _distinct(n: int, counts: tuple[int, ...], k: int) -> Fraction:
    return estimators.distinct_at_k_exact(n, counts, k)


@lru_cache(maxsize=65536)
def _accuracy_value(c: int, n: int) -> Fraction:
    # The receipt sums the float c/n exactly; doing the same keeps k = n bit-identical.
    return Fraction(c / n)


@lru_cache(maxsize=65536)
def _pcmd_value(counts: tuple[int, ...]) -> Fraction | None:
    value = mode_diversity(counts)
    return None if value is None else Fraction(value)


def _accuracy(p: Profile) -> tuple[Fraction, int]:
    return _accuracy_value(p.c, p.n), 1


def _pcmd(p: Profile) -> tuple[Fraction, int]:
    value = _pcmd_value(p.counts)
    return (Fraction(0), 0) if value is None else (value, 1)


def _pass_metric(k: int) -> Callable[[Profile], tuple[Fraction, int]]:
    return lambda p: (_pass(p.n, p.c, k), 1)


def _distinct_metric(k: int) -> Callable[[Profile], tuple[Fraction, int]]:
    return lambda p: (_distinct(p.n, p.counts, k), 1)


def _distinct_verified_metric(k: int) -> Callable[[Profile], tuple[Fraction, int]]:
    # Rarefaction over the verified draws only: defined for prompts with at least k of them.
    return lambda p: (_distinct(p.c, p.counts, k), 1) if p.c >= k else (Fraction(0), 0)


def metrics_for(ks: Iterable[int]) -> list[Metric]:
    """The per-profile metric functions of the stats table, in row order.

    ``distinct_at_k`` is E[distinct@k] over all draws (an incorrect draw is one of the k, so
    distinct@1 = accuracy); ``distinct_verified_at_k`` is E[distinct verified modes@k] among k of
    the prompt's verified draws only (prompts with fewer than k verified draws left out; at k = 2
    it is the receipt's ``rarefied_distinct_at_2`` = 1 + PCMD of each prompt).
    """
    points = list(ks)
    chosen: list[Metric] = [("accuracy", None, _accuracy)]
    chosen.extend(("pass_at_k", k, _pass_metric(k)) for k in points)
    chosen.extend(("distinct_at_k", k, _distinct_metric(k)) for k in points)
    chosen.extend(("distinct_verified_at_k", k, _distinct_verified_metric(k)) for k in points)
    chosen.append(("pcmd", None, _pcmd))
    return chosen


def check_points(ks: Sequence[int] | None, most: int) -> None:
    """Refuse k points no cell can estimate (a k above every cell's saved draws)."""
    if ks is None:
        return
    if any(isinstance(k, bool) or not isinstance(k, int) or k < 1 for k in ks):
        raise ValueError("k points must be positive integers")
    above = sorted({k for k in ks if k > most})
    if above:
        raise InputError(
            f"k = {', '.join(map(str, above))} exceeds the {most} saved draws per prompt: pass@k and "
            "E[distinct@k] are estimated only for k up to the draws"
        )


def k_points(draws: int, requested: Sequence[int] | None) -> list[int]:
    """Requested points up to ``draws``; by default 1, 2, 4, … and ``draws`` itself."""
    if requested is not None:
        return sorted({k for k in requested if k <= draws})
    points = {draws}
    k = 1
    while k < draws:
        points.add(k)
        k *= 2
    return sorted(points)


def _effective(value: float | None) -> float | None:
    return None if value is None or value >= 1.0 else 1.0 / (1.0 - value)


def _row(
    cell: tuple[int | None, str | None, int | None],
    name: str,
    k: int | None,
    value: float | None,
    error: float | None,
    interval: tuple[float | None, float | None] | None,
    prompts: int,
) -> dict[str, Any]:
    level, domain, draws = cell
    low, high = interval if interval is not None else (None, None)
    return {
        "level": level,
        "domain": domain,
        "draws": draws,
        "metric": name,
        "k": k,
        "estimate": value,
        "standard_error": error,
        "ci_low": low,
        "ci_high": high,
        "prompts": prompts,
        "reportable": None,
    }


def cell_rows(
    cell: tuple[int | None, str | None, int | None],
    profiles: Counter[Profile],
    ks: Sequence[int] | None,
    settings: Bootstrap,
    threshold: int | None = None,
) -> list[dict[str, Any]]:
    categories = sorted(profiles)
    freqs = [profiles[p] for p in categories]
    smallest = min(p.n for p in categories)
    metrics = metrics_for(k_points(smallest, ks))
    columns = [column(function(p) for p in categories) for _, _, function in metrics]
    half = smallest // 2
    if half >= 1:  # the within-run baseline of mode retention (split halves; stats/retention.py)
        halves = [split_half(p.n, p.counts, half) for p in categories]
        columns.append(_scaled(halves))
    found = bootstrap.intervals(freqs, columns, settings)
    rows = []
    baseline = None
    for (name, k, _), col, interval in zip(metrics, columns, found):
        prompts = sum(f for f, d in zip(freqs, col.dens) if d)
        rows.append(_row(cell, name, k, estimate(freqs, col), standard_error(freqs, col), interval, prompts))
    if half >= 1:
        col = columns[-1]
        prompts = sum(f for f, d in zip(freqs, col.dens) if d)
        baseline = _row(cell, "retention_baseline", half, estimate(freqs, col),
                        standard_error(freqs, col), found[-1], prompts)  # fmt: skip
    pcmd_row = rows[-1]
    d_mode, error = pcmd_row["estimate"], pcmd_row["standard_error"]
    # Effective modes is a monotone transform of PCMD: delta-method error, transformed interval.
    effective_error = (
        None if error is None or d_mode is None or d_mode >= 1.0 else error / (1.0 - d_mode) ** 2
    )
    low, high = pcmd_row["ci_low"], pcmd_row["ci_high"]
    # An upper PCMD bound of 1 means unboundedly many effective modes: the bound is null.
    effective = None if low is None else (_effective(low), _effective(high))
    effective_row = _row(
        cell, "effective_modes", None, _effective(d_mode), effective_error, effective, pcmd_row["prompts"]
    )
    rows.append(effective_row)
    if threshold is not None:
        for row in (pcmd_row, effective_row):
            row["reportable"] = row["prompts"] >= threshold
    if baseline is not None:
        rows.append(baseline)
    return rows


_scaled = scaled_column


def _pooled(
    cells: dict[CellKey, Counter[Profile]],
) -> list[tuple[tuple[int | None, str | None, int | None], Counter[Profile]]]:
    """Per-domain groups (when a domain has several cells) and all cells (when there are several)."""
    by_domain: dict[str, list[CellKey]] = {}
    for cell in cells:
        by_domain.setdefault(cell[1], []).append(cell)
    groups = []

    def merge(keys: list[CellKey], level: int | None, domain: str | None) -> None:
        merged: Counter[Profile] = Counter()
        for key in keys:
            merged.update(cells[key])
        draws = {key[2] for key in keys}
        groups.append(((level, domain, min(draws) if len(draws) == 1 else None), merged))

    for domain, keys in sorted(by_domain.items()):
        if len(keys) > 1 and len(by_domain) > 1:
            merge(keys, None, domain)
    if len(cells) > 1:
        merge(list(cells), None, None)
    return groups


def curves_from_profiles(
    cells: dict[CellKey, Counter[Profile]],
    ks: Sequence[int] | None = None,
    settings: Bootstrap | None = None,
    source: dict[str, Any] | None = None,
    *,
    threshold: int | None = None,
    pooled: bool = False,
) -> StatsTable:
    """The stats table from profile frequencies per cell (the pure core of :func:`curves`).

    ``threshold``: PCMD's ``min_defined_prompts`` (fills ``reportable``); ``pooled``: add rows per
    domain (level null) and over all cells (level and domain null), prompts as the clusters."""
    chosen = settings if settings is not None else Bootstrap()
    check_points(ks, max((key[2] for key in cells), default=0))
    rows: list[dict[str, Any]] = []
    for cell in sorted(cells):
        rows.extend(cell_rows(cell, cells[cell], ks, chosen, threshold))
    if pooled:
        for key, merged in _pooled(cells):
            rows.extend(cell_rows(key, merged, ks, chosen, threshold))
    meta = {
        "source": source or {},
        "bootstrap": {
            "method": "percentile, prompts resampled with replacement",
            "engine": bootstrap.engine(),
            "seed": chosen.seed,
            "resamples": chosen.resamples,
            "level": chosen.level,
        },
    }
    return StatsTable(SCHEMA, STATS_COLUMNS, tuple(rows), meta, DISPLAY)


def curves(
    receipt: str | os.PathLike[str],
    ks: Sequence[int] | None = None,
    settings: Bootstrap | None = None,
    *,
    label: str | None = None,
    cells: Sequence[tuple[int, str]] | None = None,
    domains: Sequence[str] | None = None,
    levels: Sequence[int] | None = None,
) -> StatsTable:
    """Curves over k with standard errors and bootstrap intervals for every cell of a run (a
    receipt, a ``suite.json`` or a directory of receipts), then per domain and over all cells."""

    run = resolve_run(receipt, label)
    chosen = Filters(cells, domains, levels)
    found: dict[CellKey, Counter[Profile]] = {}
    for path in run.receipts:
        for key, counts in cell_profiles(path).items():
            if chosen.keep(key[0], key[1]):
                found.setdefault(key, Counter()).update(counts)
    if not found:
        raise InputError(f"{os.fspath(receipt)}: no cell matches the selection")
    receipts = [{"part": part, "receipt": path, "sha256": file_sha256(path)} for part, path in run.parts]
    source: dict[str, Any] = dict(receipts[0]) if len(receipts) == 1 else {"path": run.path}
    source.pop("part", None)
    source["label"] = label_runs([run])[0]
    if len(receipts) > 1:
        source["receipts"] = receipts
    threshold = reportable_threshold(run.receipts)
    table = curves_from_profiles(found, ks, settings, source, threshold=threshold, pooled=True)
    if run.failed:  # a suite's configurations without statistics: said, never dropped silently
        table = dataclasses.replace(table, meta={**table.meta, "notes": run.notes(source["label"])})
    return table
