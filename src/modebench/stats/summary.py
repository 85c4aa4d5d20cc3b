"""Curves over k with uncertainty for every cell of one receipt (the ``stats`` table).

Rows, one per (cell, metric, k): accuracy; unbiased pass@k and E[distinct@k] for each k point;
PCMD over prompts with two or more successes; effective modes ``1/(1 − PCMD)``. Each row carries
the estimate, its clustered standard error and a seeded bootstrap interval (``docs/statistics.md``).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from fractions import Fraction
from functools import lru_cache
from typing import Any

from modebench.metrics import mode_diversity
from modebench.stats import bootstrap, estimators
from modebench.stats.bootstrap import Bootstrap
from modebench.stats.profiles import CellKey, Profile, cell_profiles
from modebench.stats.ratio import column, estimate, standard_error
from modebench.stats.table import StatsTable

__all__ = ["SCHEMA", "STATS_COLUMNS", "Metric", "curves", "curves_from_profiles", "metrics_for", "k_points"]

SCHEMA = "modebench-stats-v1"
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
)
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


def metrics_for(ks: Iterable[int]) -> list[Metric]:
    """The per-profile metric functions of the stats table, in row order."""
    points = list(ks)
    chosen: list[Metric] = [("accuracy", None, _accuracy)]
    chosen.extend(("pass_at_k", k, _pass_metric(k)) for k in points)
    chosen.extend(("distinct_at_k", k, _distinct_metric(k)) for k in points)
    chosen.append(("pcmd", None, _pcmd))
    return chosen


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
    cell: CellKey,
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
    }


def cell_rows(
    cell: CellKey, profiles: Counter[Profile], ks: Sequence[int] | None, settings: Bootstrap
) -> list[dict[str, Any]]:
    categories = sorted(profiles)
    freqs = [profiles[p] for p in categories]
    smallest = min(p.n for p in categories)
    metrics = metrics_for(k_points(smallest, ks))
    columns = [column(function(p) for p in categories) for _, _, function in metrics]
    found = bootstrap.intervals(freqs, columns, settings)
    rows = []
    for (name, k, _), col, interval in zip(metrics, columns, found):
        prompts = sum(f for f, d in zip(freqs, col.dens) if d)
        rows.append(_row(cell, name, k, estimate(freqs, col), standard_error(freqs, col), interval, prompts))
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
    return rows


def curves_from_profiles(
    cells: dict[CellKey, Counter[Profile]],
    ks: Sequence[int] | None = None,
    settings: Bootstrap | None = None,
    source: dict[str, Any] | None = None,
) -> StatsTable:
    """The stats table from profile frequencies per cell (the pure core of :func:`curves`)."""
    chosen = settings if settings is not None else Bootstrap()
    if ks is not None and any(isinstance(k, bool) or not isinstance(k, int) or k < 1 for k in ks):
        raise ValueError("k points must be positive integers")
    rows: list[dict[str, Any]] = []
    for cell in sorted(cells):
        rows.extend(cell_rows(cell, cells[cell], ks, chosen))
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
    return StatsTable(SCHEMA, STATS_COLUMNS, tuple(rows), meta)


def curves(
    receipt: str | os.PathLike[str], ks: Sequence[int] | None = None, settings: Bootstrap | None = None
) -> StatsTable:
    """Curves over k with standard errors and bootstrap intervals for every cell of a receipt."""
    from modebench.identity import file_sha256

    source = {"receipt": os.fspath(receipt), "sha256": file_sha256(os.fspath(receipt))}
    return curves_from_profiles(cell_profiles(receipt), ks, settings, source)
