"""Cell statistics as ratios of prompt sums, over weighted categories of identical prompts.

Every cell statistic here is ``R = Σ_p num_p / Σ_p den_p``: a plain mean has ``den_p = 1``; PCMD
has ``den_p = 1`` only for prompts with two or more successes; mode retention has
``den_p = |modes A found|``. Prompts are the clusters (Miller 2024: errors are clustered by
question, so the prompt, not the draw, is the unit of resampling).

* estimate: ``float(exact Σ num) / Σ den`` — the receipt's own convention (exact rational sum,
  one rounding, one division), so at k = n the numbers are bit-identical to the receipt's;
* standard error: the cluster-robust (linearised ratio) form
  ``√( m/(m−1) · Σ_p (num_p − R·den_p)² ) / Σ den`` over the ``m`` prompts with ``den_p > 0``;
  for a mean it is ``sd/√P``, for PCMD the receipt's ``pcmd.standard_error``.

Numerators are kept as integer pairs ``(p, q)`` rather than ``Fraction`` objects: exact sums are
then integer multiply-adds grouped by denominator, which keeps 100k-prompt comparisons fast.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction

__all__ = ["Column", "column", "difference", "estimate", "exact_total", "standard_error"]

Rational = tuple[int, int]  # numerator, positive denominator


@dataclass(frozen=True)
class Column:
    """One statistic's numerator and denominator for each category (distinct prompt profile)."""

    nums: tuple[Rational, ...]
    dens: tuple[int, ...]

    def values(self) -> list[float]:
        return [p / q for p, q in self.nums]


def column(pairs: Iterable[tuple[Fraction, int]]) -> Column:
    """A column from per-category ``(numerator, denominator)`` pairs."""
    nums, dens = [], []
    for x, d in pairs:
        nums.append((x.numerator, x.denominator))
        dens.append(d)
    return Column(tuple(nums), tuple(dens))


def difference(b: Column, a: Column) -> Column:
    """``b − a`` per category (same denominators), exactly."""
    nums = tuple((p2 * q1 - p1 * q2, q1 * q2) for (p1, q1), (p2, q2) in zip(a.nums, b.nums))
    return Column(nums, a.dens)


def exact_total(freqs: Sequence[int], col: Column) -> tuple[Fraction, int, int]:
    """Exact ``Σ f·num``, ``Σ f·den`` and the number of contributing prompts."""
    by_denominator: dict[int, int] = {}
    den = clusters = 0
    for f, (p, q), d in zip(freqs, col.nums, col.dens):
        if f and d:
            by_denominator[q] = by_denominator.get(q, 0) + f * p
            den += f * d
            clusters += f
    num = sum((Fraction(p, q) for q, p in by_denominator.items()), Fraction(0))
    return num, den, clusters


def estimate(freqs: Sequence[int], col: Column) -> float | None:
    """``float(Σ num) / Σ den``; None when no prompt contributes."""
    num, den, _ = exact_total(freqs, col)
    return float(num) / den if den else None


def standard_error(freqs: Sequence[int], col: Column) -> float | None:
    """Cluster-robust standard error of the ratio; None with fewer than two contributing prompts."""
    num, den, clusters = exact_total(freqs, col)
    if clusters < 2:
        return None
    ratio = float(num / den)
    squares = math.fsum(f * (x - ratio * d) ** 2 for f, x, d in zip(freqs, col.values(), col.dens) if f and d)
    return math.sqrt(clusters / (clusters - 1) * squares) / den


def scaled_column(values: Sequence[tuple[Fraction, Fraction]]) -> Column:
    """A ratio column from rational (numerator, denominator) pairs: both are multiplied by one
    common integer so the denominators are integers (the ratio, its clustered error and every
    bootstrap ratio are unchanged by a common factor)."""
    scale = 1
    for _, den in values:
        scale = math.lcm(scale, den.denominator)
    return column((num * scale, int(den * scale)) for num, den in values)
