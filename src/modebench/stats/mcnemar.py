"""Exact McNemar test with mid-p for paired binary outcomes.

Given ``b`` items only A solves and ``c`` items only B solves, under H0 the discordant items split
as Binomial(b + c, 1/2). The exact two-sided p-value is ``min(1, 2·P(X ≤ min(b, c)))``; the mid-p
version (Lancaster 1961; Fagerland, Lydersen & Laake 2013 recommend it for McNemar) counts only
half the probability of the observed table: ``2·[P(X < m) + ½·P(X = m)]``. No discordant items
gives p = 1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

__all__ = ["McNemar", "mcnemar"]

_EXACT_LIMIT = 2000  # above this many discordant items, sum the binomial terms in log space


@dataclass(frozen=True)
class McNemar:
    a_only: int
    b_only: int
    p_value: float
    mid_p_value: float


def _tail_exact(total: int, m: int) -> tuple[Fraction, Fraction]:
    """P(X < m) and P(X = m) for X ~ Binomial(total, 1/2)."""
    scale = 2**total
    below = sum(math.comb(total, i) for i in range(m))
    return Fraction(below, scale), Fraction(math.comb(total, m), scale)


def _log_pmf(total: int, i: int) -> float:
    return math.lgamma(total + 1) - math.lgamma(i + 1) - math.lgamma(total - i + 1) - total * math.log(2)


def _tail_float(total: int, m: int) -> tuple[float, float]:
    at = _log_pmf(total, m)
    # Terms fall off geometrically below the centre; sum relative to the largest (the one at m).
    below = math.fsum(math.exp(_log_pmf(total, i) - at) for i in range(m))
    return below * math.exp(at), math.exp(at)


def mcnemar(a_only: int, b_only: int) -> McNemar:
    """Exact and mid-p two-sided McNemar test from the two discordant counts."""
    for value in (a_only, b_only):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError("discordant counts must be nonnegative integers")
    total = a_only + b_only
    if total == 0:
        return McNemar(a_only, b_only, 1.0, 1.0)
    m = min(a_only, b_only)
    if total <= _EXACT_LIMIT:
        below_f, at_f = _tail_exact(total, m)
        exact = min(Fraction(1), 2 * (below_f + at_f))
        mid = min(Fraction(1), 2 * below_f + at_f)
        return McNemar(a_only, b_only, float(exact), float(mid))
    below, at = _tail_float(total, m)
    return McNemar(a_only, b_only, min(1.0, 2 * (below + at)), min(1.0, 2 * below + at))
