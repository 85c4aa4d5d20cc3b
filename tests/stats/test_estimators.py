"""The estimators over k equal the exact average over all k-subsets of the saved draws."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from modebench.metrics import prompt_metrics, rarefied_distinct
from modebench.stats.estimators import (
    distinct_at_k,
    distinct_at_k_exact,
    pass_at_k,
    pass_at_k_exact,
)

# A group: each draw is a failure (None) or a verified draw in one of a few modes.
groups = st.lists(st.one_of(st.none(), st.sampled_from("abcd")), min_size=1, max_size=10)


def _profile(group: list[str | None]) -> tuple[int, int, list[int]]:
    modes = [m for m in group if m is not None]
    return len(group), len(modes), [modes.count(m) for m in sorted(set(modes))]


@given(groups, st.data())
def test_unbiased_estimators_equal_the_average_over_all_k_subsets(
    group: list[str | None], data: st.DataObject
) -> None:
    n, c, counts = _profile(group)
    k = data.draw(st.integers(1, n))
    subsets = list(itertools.combinations(group, k))
    passed = Fraction(sum(any(m is not None for m in s) for s in subsets), len(subsets))
    distinct = Fraction(sum(len({m for m in s if m is not None}) for s in subsets), len(subsets))
    assert pass_at_k_exact(n, c, k) == passed
    assert distinct_at_k_exact(n, counts, k) == distinct
    assert math.isclose(pass_at_k(n, c, k), float(passed), rel_tol=1e-12, abs_tol=1e-15)
    assert math.isclose(distinct_at_k(n, counts, k), float(distinct), rel_tol=1e-12, abs_tol=1e-15)


@given(groups)
def test_at_k_equal_n_they_are_the_receipt_metrics(group: list[str | None]) -> None:
    n, c, counts = _profile(group)
    attempts = [
        {"status": "incorrect", "verified": False, "canonical_key": None}
        if m is None
        else {"status": "correct", "verified": True, "canonical_key": m}
        for m in group
    ]
    empirical = prompt_metrics(attempts)
    assert float(pass_at_k_exact(n, c, n)) == pass_at_k(n, c, n) == empirical["pass_at_k"]
    assert distinct_at_k_exact(n, counts, n) == distinct_at_k(n, counts, n) == empirical["distinct_at_k"]


def test_known_values_and_stability() -> None:
    assert pass_at_k_exact(4, 2, 2) == Fraction(5, 6)
    # With every draw verified, E[distinct@k] is the receipt's rarefied distinct (worked example).
    assert distinct_at_k_exact(8, [4, 2, 1, 1], 2) == Fraction(7, 4)
    for depth in (1, 2, 3, 4):
        assert math.isclose(distinct_at_k(8, [4, 2, 1, 1], depth), rarefied_distinct([4, 2, 1, 1], depth))
    # A large group: the product form needs no huge binomials and agrees with the exact value.
    assert math.isclose(pass_at_k(2000, 3, 100), float(pass_at_k_exact(2000, 3, 100)), rel_tol=1e-12)
    assert math.isclose(
        distinct_at_k(2000, [3, 500, 7], 64), float(distinct_at_k_exact(2000, [3, 500, 7], 64)), rel_tol=1e-12
    )


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: pass_at_k(4, 1, 5), "k must be between 1 and the number of draws"),
        (lambda: pass_at_k(4, 1, 0), "k must be between 1 and the number of draws"),
        (lambda: pass_at_k(4, 5, 2), "c must be between 0 and n"),
        (lambda: distinct_at_k(4, [3, 2], 2), "mode counts must be nonnegative integers"),
        (lambda: distinct_at_k(4, [True], 2), "mode counts must be nonnegative integers"),
        (lambda: pass_at_k(4, 1, True), "k must be an integer"),
    ],
)
def test_invalid_arguments(call: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()  # type: ignore[operator]


def test_the_two_distinct_quantities_of_the_worked_example() -> None:
    """docs/statistics.md: n = 4 draws, verified modes x, x, y and one incorrect draw."""
    from fractions import Fraction

    from modebench.stats.profiles import Profile
    from modebench.stats.summary import metrics_for

    profile = Profile(4, 3, (2, 1), True)
    values = {(name, k): f(profile) for name, k, f in metrics_for([1, 2])}
    assert values[("distinct_at_k", 2)] == (Fraction(4, 3), 1)
    assert values[("distinct_verified_at_k", 2)] == (Fraction(5, 3), 1)  # = 1 + PCMD
    assert values[("distinct_at_k", 1)] == (Fraction(3, 4), 1)  # = accuracy
    assert values[("distinct_verified_at_k", 1)] == (Fraction(1), 1)
    assert float(values[("pcmd", None)][0]) == pytest.approx(2 / 3)
    # fewer verified draws than k: left out of the verified-only mean
    assert metrics_for([4])[3][2](profile) == (Fraction(0), 0)
