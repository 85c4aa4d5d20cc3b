"""Mode retention between two runs of the same prompt: which of A's solution modes B still finds.

Per prompt, with M_A and M_B the sets of canonical keys each run verified: retained = |M_A ∩ M_B|,
lost = |M_A ∖ M_B|, gained = |M_B ∖ M_A|, union = |M_A ∪ M_B|, and lost draws = how many of A's
verified draws fall in modes B never produces. Higher pass@1 together with lost modes is the
signature of mode collapse. Canonical keys are prompt-local, so sets are never pooled across prompts.

Two runs with different draw counts are compared at a *common* number of draws ``k``: the
expected retention counts when k of A's draws and k of B's draws are taken at random (every
subset equally likely, the two runs independent). With ``n_a`` draws of A, ``a_m`` of them in mode
``m``, the chance that a k-subset of A contains ``m`` is ``1 − C(n_a − a_m, k)/C(n_a, k)`` (the
rarefaction of Hurlbert 1971), so the expected counts are sums of products of such terms
(:func:`expected_retention`). At ``k = n_a = n_b`` they are the plain set counts above.

The *within-run baseline* (:func:`split_half`) asks how much of a run's own modes a second,
independent sample of the same size finds: two disjoint random halves ``S1``, ``S2`` of h draws
of one run, averaged exactly over all ways to choose them. Because ``S1 ∪ S2`` is a uniform
2h-subset, ``P(m ∈ S1 and m ∈ S2) = 1 − 2·C(n − a_m, h)/C(n, h) + C(n − a_m, 2h)/C(n, 2h)``.
Both this and A→B retention at h draws are unbiased for ``Σ_m (1 − (1 − p_m)^h)²`` when B samples
the same distribution as A (p_m a mode's probability per draw), which makes the baseline the
null of "B keeps A's modes as well as A keeps its own" (``docs/statistics.md``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from fractions import Fraction
from functools import lru_cache
from typing import Any, NamedTuple

__all__ = ["Expected", "Retention", "expected_retention", "prompt_record", "retention", "split_half"]

Joint = tuple[tuple[int, int], ...]  # (A's verified draws, B's verified draws) per mode of A ∪ B, sorted


class Retention(NamedTuple):
    modes_a: int
    modes_b: int
    retained: int
    lost: int
    gained: int
    union: int
    lost_draws_a: int
    # Per mode of A ∪ B (names dropped): what the expected counts at fewer draws depend on.
    joint: Joint = ()


def retention(modes_a: Mapping[str, int], modes_b: Mapping[str, int]) -> Retention:
    """Retention counts of one prompt from each run's verified draws per mode."""
    a, b = set(modes_a), set(modes_b)
    lost = a - b
    joint = tuple(sorted((modes_a.get(m, 0), modes_b.get(m, 0)) for m in a | b))
    return Retention(
        len(a), len(b), len(a & b), len(lost), len(b - a), len(a | b), sum(modes_a[m] for m in lost), joint
    )


@lru_cache(maxsize=65536)
def _found(n: int, hits: int, k: int) -> Fraction:
    """The chance that k of n draws (a uniform subset) include at least one of ``hits`` draws."""
    if hits <= 0:
        return Fraction(0)
    return 1 - Fraction(math.comb(n - hits, k), math.comb(n, k))


class Expected(NamedTuple):
    """Expected retention counts of one prompt at k draws of each run (exact fractions)."""

    modes_a: Fraction
    modes_b: Fraction
    retained: Fraction
    lost_draws_a: Fraction  # A's verified draws (of its k) in modes B's k draws miss
    verified_a: Fraction  # A's verified draws among its k

    @property
    def lost(self) -> Fraction:
        return self.modes_a - self.retained

    @property
    def gained(self) -> Fraction:
        return self.modes_b - self.retained

    @property
    def union(self) -> Fraction:
        return self.modes_a + self.modes_b - self.retained


def expected_retention(n_a: int, n_b: int, joint: Sequence[tuple[int, int]], k: int) -> Expected:
    """Expected counts when k of A's ``n_a`` and k of B's ``n_b`` draws are taken at random.

    ``joint``: per mode, (A's verified draws, B's verified draws). Requires ``1 ≤ k ≤ min(n_a, n_b)``.
    """
    if not 1 <= k <= min(n_a, n_b):
        raise ValueError(f"k must be between 1 and the common draws ({min(n_a, n_b)}), got {k}")
    modes_a = modes_b = retained = lost = Fraction(0)
    for a_m, b_m in joint:
        in_a, in_b = _found(n_a, a_m, k), _found(n_b, b_m, k)
        modes_a += in_a
        modes_b += in_b
        retained += in_a * in_b
        lost += Fraction(a_m * k, n_a) * (1 - in_b)  # E[A's draws in m] · P(B's k miss m)
    verified = Fraction(sum(a for a, _ in joint) * k, n_a)
    return Expected(modes_a, modes_b, retained, lost, verified)


def split_half(n: int, counts: Sequence[int], h: int) -> tuple[Fraction, Fraction]:
    """(E|M1 ∩ M2|, E|M1|) over all pairs of disjoint h-subsets M1, M2 of one run's n draws.

    ``counts``: verified draws per mode. Requires ``1 ≤ h`` and ``2h ≤ n``.
    """
    if not 1 <= h <= n // 2:
        raise ValueError(f"a split half needs 1 ≤ h ≤ n/2 (n = {n}), got {h}")
    both = single = Fraction(0)
    for a_m in counts:
        if a_m <= 0:
            continue
        in_one = _found(n, a_m, h)
        in_both = 1 - 2 * (1 - in_one) + (1 - _found(n, a_m, 2 * h))
        both += in_both
        single += in_one
    return both, single


def prompt_record(ident: str, modes_a: Mapping[str, int], modes_b: Mapping[str, int]) -> dict[str, Any]:
    """A per-prompt retention record with the mode keys themselves (``compare`` per-prompt output)."""
    a, b = set(modes_a), set(modes_b)
    verified_a = sum(modes_a.values())
    lost_draws = sum(modes_a[m] for m in a - b)
    return {
        "id": ident,
        "modes_a": sorted(a),
        "modes_b": sorted(b),
        "retained": sorted(a & b),
        "lost": sorted(a - b),
        "gained": sorted(b - a),
        "union": len(a | b),
        "lost_draw_share": lost_draws / verified_a if verified_a else None,
    }
