"""Unbiased estimators over k for one prompt: pure functions of (n draws, c verified, mode counts).

With ``n`` saved draws of which ``c`` are verified and ``n_m`` fall in mode ``m``:

* pass@k = 1 − C(n−c, k)/C(n, k)  (Chen et al. 2021, the HumanEval estimator);
* E[distinct@k] = Σ_m [1 − C(n−n_m, k)/C(n, k)]  (Hurlbert 1971 rarefaction; NoveltyBench's
  distinct@k counts distinct solutions among k samples).

Both are the exact average, over all C(n, k) subsets of k of the n draws, of the empirical
quantity on that subset, which is why they are unbiased for a model sampled k times. At k = n they
reduce to the receipt's empirical pass@k and distinct@k. The ``*_exact`` functions return
``Fraction``; the float versions use the numerically stable product form, so they work for n in
the thousands without huge binomials. These are the functions every consumer (``stats``,
``compare``, reports, reducers) calls; see ``docs/statistics.md``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from fractions import Fraction

from modebench.metrics import mode_diversity

__all__ = [
    "distinct_at_k",
    "distinct_at_k_exact",
    "pass_at_k",
    "pass_at_k_exact",
    "pcmd",
]


def _check(n: int, k: int) -> None:
    for name, value in (("n", n), ("k", k)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{name} must be an integer")
    if not 1 <= k <= n:
        raise ValueError(f"k must be between 1 and the number of draws ({n}), got {k}")


def _counts(n: int, counts: Iterable[int]) -> list[int]:
    values = [m for m in counts if m]
    if any(isinstance(m, bool) or not isinstance(m, int) or m < 0 for m in values) or sum(values) > n:
        raise ValueError("mode counts must be nonnegative integers summing to at most n")
    return values


def _miss(n: int, hit: int, k: int) -> float:
    """C(n−hit, k)/C(n, k) as Π_{i=n−hit+1}^{n} (1 − k/i): the chance k draws avoid ``hit`` draws."""
    if n - hit < k:
        return 0.0
    product = 1.0
    for i in range(n - hit + 1, n + 1):
        product *= 1.0 - k / i
    return product


def _miss_exact(n: int, hit: int, k: int) -> Fraction:
    return Fraction(math.comb(n - hit, k), math.comb(n, k))


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k of one prompt (float, stable product form)."""
    _check(n, k)
    if not 0 <= c <= n:
        raise ValueError("c must be between 0 and n")
    return 1.0 - _miss(n, c, k)


def pass_at_k_exact(n: int, c: int, k: int) -> Fraction:
    """Unbiased pass@k of one prompt as an exact fraction."""
    _check(n, k)
    if not 0 <= c <= n:
        raise ValueError("c must be between 0 and n")
    return 1 - _miss_exact(n, c, k)


def distinct_at_k(n: int, counts: Iterable[int], k: int) -> float:
    """Expected number of distinct verified modes among k of the n draws (float)."""
    _check(n, k)
    return math.fsum(1.0 - _miss(n, m, k) for m in _counts(n, counts))


def distinct_at_k_exact(n: int, counts: Iterable[int], k: int) -> Fraction:
    """Expected number of distinct verified modes among k of the n draws (exact)."""
    _check(n, k)
    values = _counts(n, counts)
    return sum((1 - _miss_exact(n, m, k) for m in values), Fraction(0))


def pcmd(counts: Iterable[int]) -> float | None:
    """Pairwise correct-mode diversity of one prompt; the receipt's float, None below two successes."""

    return mode_diversity(list(counts))
