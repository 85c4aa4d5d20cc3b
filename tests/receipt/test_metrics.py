"""Metric formulas and validation, checked against the worked examples of metrics.md."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from modebench.diagnostics import VerifierExecutionError
from modebench.metrics import (
    PER_GROUP,
    POOLED,
    CellAccumulator,
    cell_summary,
    effective_modes,
    mode_diversity,
    prompt_metrics,
    prompt_mode_diversity,
    rarefied_distinct,
    verified_mode_counts,
)


def ok(key: str) -> dict[str, object]:
    return {"status": "correct", "verified": True, "canonical_key": key, "graded_text": "", "detail": None}


def bad(status: str = "incorrect") -> dict[str, object]:
    return {"status": status, "verified": False, "canonical_key": None, "graded_text": "", "detail": None}


def prompt(*attempts: dict[str, object]) -> dict[str, object]:
    return {"draws": [{"attempts": list(attempts)}], **prompt_metrics(list(attempts))}


def test_single_prompt_examples() -> None:
    assert mode_diversity({"A": 1, "B": 1}) == 1.0
    assert mode_diversity([2, 1]) == 0.6666666666666667
    assert mode_diversity([4]) == 0.0
    assert mode_diversity([1]) is None and mode_diversity([]) is None
    assert mode_diversity([4, 2, 1, 1]) == 0.75
    assert [rarefied_distinct([4, 2, 1, 1], d) for d in (1, 2, 3, 4)] == [
        1.0,
        1.75,
        2.3214285714285716,
        2.7714285714285714,
    ]
    assert rarefied_distinct([1, 1], 3) is None and rarefied_distinct([9], 3) == 1.0


@pytest.mark.parametrize("value", [1.0, 0.5, math.nan, math.inf, "1", True, -1])
def test_counts_must_be_nonnegative_integers(value: object) -> None:
    with pytest.raises(ValueError, match="verified mode counts must be nonnegative integers"):
        mode_diversity([value])


def test_effective_modes() -> None:
    assert effective_modes(0.0) == 1.0 and effective_modes(0.5) == 2.0
    assert effective_modes(1.0) is None and effective_modes(None) is None
    for wrong in (-0.1, 1.1, True, math.nan, math.inf):
        with pytest.raises(ValueError, match="d_mode must be finite and between zero and one"):
            effective_modes(wrong)  # type: ignore[arg-type]


def test_five_prompt_cell() -> None:
    cell = [
        prompt(ok("A"), ok("A"), ok("B"), bad()),
        prompt(ok("A"), ok("B"), bad(), bad()),
        prompt(ok("A"), bad(), bad(), bad()),
        prompt(bad(), bad(), bad(), bad("malformed")),
        prompt(ok("A"), ok("A"), ok("A"), ok("A")),
    ]
    summary = cell_summary(cell, min_defined_prompts=3)
    assert summary["d_mode"] == 0.5555555555555556
    assert (summary["defined_prompts"], summary["prompts"], summary["support"], summary["reportable"]) == (
        3,
        5,
        0.6,
        True,
    )
    assert summary["standard_error"] == pytest.approx(0.2939723678960657, rel=1e-14)
    assert summary["rarefied_distinct_at_2"] == 1.5555555555555556
    assert summary["effective_modes"] == pytest.approx(2.25)
    assert cell_summary(cell)["reportable"] is False
    accumulator = CellAccumulator()
    for item in cell:
        accumulator.add(item)
    streamed = accumulator.summary(3)
    assert (streamed["accuracy"], streamed["pass_at_k"], streamed["distinct_at_k"]) == (0.5, 0.8, 1.2)
    assert streamed["pcmd"]["d_mode"] == summary["d_mode"]
    assert streamed["pcmd"]["standard_error"] == pytest.approx(
        summary["standard_error"], rel=1e-14, abs=1e-15
    )


def test_pooled_versus_per_group() -> None:
    four = [{"attempts": [ok(key)]} for key in "abcd"]
    assert prompt_mode_diversity(four, PER_GROUP) is None
    assert prompt_mode_diversity(four, POOLED) == 1.0
    two = [{"attempts": [ok("a"), ok("a"), ok("b")]}, {"attempts": [ok("a"), ok("a")]}]
    assert prompt_mode_diversity(two, PER_GROUP) == 0.33333333333333337
    assert prompt_mode_diversity(two, POOLED) == 0.4
    with pytest.raises(ValueError, match="unknown aggregation: 'nonsense'"):
        prompt_mode_diversity(two, "nonsense")


def test_gating_and_empty() -> None:
    results = [prompt(ok("a"), ok("b"))] * 4 + [prompt(ok("a"))] * 6
    gated = cell_summary(results, min_defined_prompts=4)
    assert (gated["defined_prompts"], gated["prompts"], gated["support"], gated["reportable"]) == (
        4,
        10,
        0.4,
        True,
    )
    assert gated["effective_modes"] is None and gated["rarefied_distinct_at_2"] == 2.0
    assert cell_summary(results, min_defined_prompts=5)["reportable"] is False
    empty = cell_summary([])
    assert (empty["prompts"], empty["defined_prompts"], empty["support"], empty["d_mode"]) == (
        0,
        0,
        0.0,
        None,
    )
    with pytest.raises(ValueError, match="min_defined_prompts must be a positive integer"):
        cell_summary(results, min_defined_prompts=0)


def test_unscorable_attempts_raise() -> None:
    with pytest.raises(VerifierExecutionError) as caught:
        verified_mode_counts([ok("a"), bad("timeout")])
    assert caught.value.diagnostic["status"] == "timeout"
    with pytest.raises(ValueError, match="boolean verified flag"):
        verified_mode_counts([{"verified": 1}])
    with pytest.raises(ValueError, match="disagree"):
        verified_mode_counts([{"status": "incorrect", "verified": True, "canonical_key": "a"}])
    with pytest.raises(ValueError, match="nonempty canonical_key"):
        verified_mode_counts([{"status": "correct", "verified": True, "canonical_key": ""}])
    assert prompt_metrics([ok("a"), bad("worker_failure")]) == {
        "pass_at_k": None,
        "distinct_at_k": None,
        "accuracy": None,
    }


@given(st.lists(st.integers(min_value=0, max_value=50), max_size=12))
def test_rarefied_identity_and_bounds(counts: list[int]) -> None:
    d_mode = mode_diversity(counts)
    if d_mode is None:
        assert sum(counts) < 2
        return
    assert 0.0 <= d_mode <= 1.0
    assert rarefied_distinct(counts, 2) == pytest.approx(1 + d_mode)
    total = sum(counts)
    exact = 1 - Fraction(sum(n * (n - 1) for n in counts), total * (total - 1))
    assert d_mode == pytest.approx(float(exact), abs=1e-15)


def _naive_sums(results: list[dict[str, object]]) -> tuple[Fraction, Fraction, int, Fraction, Fraction]:
    """The cell sums as Fractions added prompt by prompt (what CellAccumulator must equal exactly)."""
    accuracy = passed = pcmd = squares = Fraction(0)
    distinct = 0
    for result in results:
        accuracy += Fraction(result["accuracy"])  # type: ignore[arg-type]
        passed += Fraction(result["pass_at_k"])  # type: ignore[arg-type]
        distinct += result["distinct_at_k"]  # type: ignore[operator]
        value = prompt_mode_diversity(result["draws"])  # type: ignore[arg-type]
        if value is not None:
            pcmd += Fraction(value)
            squares += Fraction(value) ** 2
    return accuracy, passed, distinct, pcmd, squares


@pytest.mark.parametrize("groups", [3, 40])
def test_cell_accumulator_counts_values_exactly(groups: int, monkeypatch: pytest.MonkeyPatch) -> None:
    # Few distinct values (counted) and more than the counter holds (folded in as it goes).
    monkeypatch.setattr(CellAccumulator, "DISTINCT_VALUES", 16)
    results = []
    for index in range(300):
        attempts = [ok(f"m{(index * j) % groups}") for j in range(1 + index % 7)] + [bad()] * (index % 3)
        results.append({"draws": [{"attempts": attempts}], **prompt_metrics(attempts)})
    accumulator = CellAccumulator()
    for result in results:
        accumulator.add(result)
    got = (
        accumulator.accuracy,
        accumulator.passed,
        accumulator.distinct,
        accumulator.pcmd,
        accumulator.pcmd_squares,
    )
    assert got == _naive_sums(results)
    assert accumulator.prompts == 300 and accumulator.defined == sum(1 + i % 7 >= 2 for i in range(300))
    with pytest.raises(ValueError):  # a value the exact sum cannot take is refused when added
        accumulator.add({**results[0], "accuracy": math.nan})
