"""Cell statistics as ratios of prompt sums, over weighted categories of identical prompts.

Every cell statistic here is ``R = Σ_p num_p / Σ_p den_p``: a plain mean has ``den_p = 1``; PCMD
has ``den_p = 1`` only for prompts with two or more successes; mode retention has
``den_p = |modes A found|``. Prompts are the clusters (Miller 2024: errors are clustered by
question, so the prompt, not the draw, is the unit of resampling).

* estimate: ``float(exact Σ num) / Σ den`` — the receipt's own convention (exact rational sum,
  one rounding, one division), so at k = n the numbers are bit-identical to the receipt's;
* standard error: the cluster-robust (linearised ratio) form
  ``√( m/(m−1) · Σ_p (num_p − R·den_p)² ) / Σ den`` over the ``m`` prompts with ``den_p > 0``;
  for a mean it is ``sd/√P``, for PCMD exactly the receipt's ``pcmd.standard_error``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

__all__ = ["Column", "estimate", "standard_error"]


@dataclass(frozen=True)
class Column:
    """One statistic's numerator and denominator for each category (distinct prompt profile)."""

    nums: tuple[Fraction, ...]
    dens: tuple[int, ...]


def _totals(freqs: Sequence[int], column: Column) -> tuple[Fraction, int, int]:
    num = Fraction(0)
    den = 0
    clusters = 0
    for f, x, d in zip(freqs, column.nums, column.dens):
        if f and d:
            num += f * x
            den += f * d
            clusters += f
    return num, den, clusters


def estimate(freqs: Sequence[int], column: Column) -> float | None:
    """``float(Σ num) / Σ den``; None when no prompt contributes."""
    num, den, _ = _totals(freqs, column)
    return float(num) / den if den else None


def standard_error(freqs: Sequence[int], column: Column) -> float | None:
    """Cluster-robust standard error of the ratio; None with fewer than two contributing prompts."""
    num, den, clusters = _totals(freqs, column)
    if clusters < 2:
        return None
    ratio = num / den
    squares = math.fsum(
        f * float((x - ratio * d) ** 2) for f, x, d in zip(freqs, column.nums, column.dens) if f and d
    )
    return math.sqrt(clusters / (clusters - 1) * squares) / den
