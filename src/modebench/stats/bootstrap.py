"""Seeded prompt-level bootstrap (percentile intervals) over weighted categories.

Resampling P prompts with replacement is the same, in distribution, as drawing category counts
from Multinomial(P, frequencies / P), where a category is a distinct prompt profile. That turns
100k prompts × 1000 resamples into 1000 multinomial draws over a few dozen (``stats``) or a few
thousand (``compare``) categories. Each resample's statistic is ``Σ w·num / Σ w·den`` (resamples
with ``Σ w·den = 0`` are left out); the interval is the linear-interpolated percentile pair.

Engines (recorded in every output, since the same seed gives different draws in each):
``numpy-pcg64`` when NumPy is installed (the ``stats`` extra), else ``python-mt19937``.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from modebench.stats.ratio import Column
from modebench.validation import OptionError

__all__ = ["Bootstrap", "engine", "intervals", "quantile"]

Interval = tuple[float, float] | None
_CHUNK = 200  # resamples per NumPy batch: bounds memory to _CHUNK × categories counts


@dataclass(frozen=True)
class Bootstrap:
    """Settings of the percentile bootstrap."""

    seed: int = 0
    resamples: int = 1000
    level: float = 0.95

    def __post_init__(self) -> None:
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise OptionError("nonnegative_integer", "seed must be a nonnegative integer", option="seed")
        if isinstance(self.resamples, bool) or not isinstance(self.resamples, int) or self.resamples < 1:
            raise OptionError("positive_integer", "resamples must be a positive integer", option="resamples")
        if isinstance(self.level, bool) or not 0 < self.level < 1:
            raise OptionError("unit_fraction", "level must be between 0 and 1", option="level")


def engine() -> str:
    try:
        import numpy  # noqa: F401, PLC0415 - optional extra: stats (numpy)
    except ImportError:
        return "python-mt19937"
    return "numpy-pcg64"


def quantile(values: Sequence[float], q: float) -> float:
    """Linear-interpolated quantile of sorted ``values`` (NumPy's default method)."""
    position = q * (len(values) - 1)
    low = math.floor(position)
    high = min(low + 1, len(values) - 1)
    return values[low] + (values[high] - values[low]) * (position - low)


def _interval(values: list[float], level: float) -> Interval:
    finite = sorted(v for v in values if not math.isnan(v))
    if not finite:
        return None
    tail = (1 - level) / 2
    return quantile(finite, tail), quantile(finite, 1 - tail)


def _numpy_intervals(freqs: Sequence[int], columns: Sequence[Column], settings: Bootstrap) -> list[Interval]:
    import numpy as np  # noqa: PLC0415 - optional extra: stats (numpy)

    total = sum(freqs)
    rng = np.random.Generator(np.random.PCG64(settings.seed))
    probabilities = np.asarray(freqs, dtype=float) / total
    dens = np.array([c.dens for c in columns], dtype=float).T  # categories × statistics
    nums = np.array([c.values() for c in columns], dtype=float).T * (dens > 0)
    both = np.concatenate([nums, dens], axis=1)
    batches = []
    done = 0
    with np.errstate(invalid="ignore", divide="ignore"):
        while done < settings.resamples:
            size = min(_CHUNK, settings.resamples - done)
            weights = rng.multinomial(total, probabilities, size=size).astype(float)
            # einsum, not ``@``: multithreaded BLAS spends ten times the CPU on these small
            # products on a busy machine, and einsum's own loop is deterministic and single-threaded.
            sums = np.einsum("rc,cs->rs", weights, both)
            batches.append(sums[:, : len(columns)] / sums[:, len(columns) :])
            done += size
    ratios = np.concatenate(batches)  # resamples × statistics; NaN where a resample has no data
    tail = (1 - settings.level) / 2
    defined = ~np.isnan(ratios).all(axis=0)
    bounds = np.full((2, len(columns)), np.nan)
    if defined.any():  # linear interpolation over each column's defined resamples, as ``quantile``
        bounds[:, defined] = np.nanquantile(ratios[:, defined], [tail, 1 - tail], axis=0)
    return [(float(bounds[0, i]), float(bounds[1, i])) if defined[i] else None for i in range(len(columns))]


def _python_statistics(
    freqs: Sequence[int], columns: Sequence[Column], settings: Bootstrap
) -> list[list[float]]:
    rng = random.Random(settings.seed)
    total = sum(freqs)
    cumulative = []
    running = 0
    for f in freqs:
        running += f
        cumulative.append(running)
    categories = range(len(freqs))
    nums = [c.values() for c in columns]
    out: list[list[float]] = [[] for _ in columns]
    for _ in range(settings.resamples):
        # The same draws as ever (``choices`` consumes one random() per prompt), counted by
        # Counter's C loop instead of an interpreted one.
        drawn = Counter(rng.choices(categories, cum_weights=cumulative, k=total))
        weights = [drawn.get(index, 0) for index in categories]
        for column, values, series in zip(columns, nums, out):
            num = math.fsum(w * x for w, x, d in zip(weights, values, column.dens) if w and d)
            den = sum(w * d for w, d in zip(weights, column.dens))
            series.append(num / den if den else math.nan)
    return out


def intervals(freqs: Sequence[int], columns: Sequence[Column], settings: Bootstrap) -> list[Interval]:
    """Percentile interval of each column's ratio statistic (None when no resample defines it)."""
    if not columns or not sum(freqs):
        return [None for _ in columns]
    if engine() == "numpy-pcg64":
        return _numpy_intervals(freqs, columns, settings)
    series = _python_statistics(freqs, columns, settings)
    return [_interval(values, settings.level) for values in series]
