"""Hypothesis properties of the PantryPlan verifier against an independent exact-rational oracle."""

from __future__ import annotations

import copy
import itertools
import json
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from modebench.domains._pipeline import grade_in_process
from tests.reference_data import SKIP_REASON, conformance_fixtures

FIXTURES = [f for f in conformance_fixtures() if f["domain"] == "pantry_plan"]
pytestmark = pytest.mark.skipif(not FIXTURES, reason=SKIP_REASON)
SENTINEL = "__INVALID_PANTRY_SUPPORT_MASK__"
PREFIX = "pantry_plan:pantry-v1:"
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
fixture_index = st.integers(0, max(len(FIXTURES) - 1, 0))


def answer_of(fixture: dict[str, Any]) -> dict[str, Any]:
    answer = fixture["row"]["answer"]
    return copy.deepcopy(json.loads(answer) if isinstance(answer, str) else answer)


def oracle_feasible(answer: dict[str, Any], alloc: dict[str, int]) -> bool:
    """Spec §6.2 written independently, with Fractions (exact for every bundled value)."""
    rows = {row["id"]: row for row in answer["ingredients"]}
    if not answer["min_ingredients"] <= len(alloc) <= answer["max_ingredients"]:
        return False
    forbidden = set(answer.get("forbidden_tags", []))
    for ident, grams in alloc.items():
        row = rows.get(ident)
        if row is None or forbidden & set(row.get("tags", [])):
            return False
        if not (row["min_if_used_g"] <= grams <= row["available_g"] and grams % row["step_g"] == 0):
            return False
    for name, bounds in answer["targets"].items():
        if name == "mass_g":
            total = Fraction(sum(alloc.values()))
        else:
            total = sum(Fraction(rows[i]["attributes_per_100g"][name]) * g / 100 for i, g in alloc.items())
        if "min" in bounds and total < Fraction(bounds["min"]):
            return False
        if "max" in bounds and total > Fraction(bounds["max"]):
            return False
    return True


def lattice(row: dict[str, Any]) -> range:
    return range(row["min_if_used_g"], row["available_g"] + 1, row["step_g"])


@st.composite
def allocations(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, int]]:
    answer = answer_of(FIXTURES[draw(fixture_index)])
    rows = answer["ingredients"]
    chosen = draw(st.lists(st.sampled_from(rows), min_size=1, max_size=5, unique_by=lambda r: r["id"]))
    alloc = {}
    for row in chosen:
        on_grid = st.sampled_from(list(lattice(row)))
        alloc[row["id"]] = draw(st.one_of(on_grid, on_grid, st.integers(1, 200)))
    return answer, alloc


def render(alloc: dict[str, int], order: list[str], sep: str, box: bool) -> str:
    body = sep.join(f"{ident}={alloc[ident]}" for ident in order)
    return f"\\boxed{{{body}}}" if box else body


@SETTINGS
@given(
    allocations(),
    st.integers(2, 5),
    st.randoms(use_true_random=False),
    st.sampled_from([";", ",", " ; ", ", "]),
    st.booleans(),
)
def test_allocation_matches_oracle_and_key_ignores_order(case, level, rnd, sep, box) -> None:
    answer, alloc = case
    order = list(alloc)
    rnd.shuffle(order)
    text = render(alloc, order, sep, box)
    got = grade_in_process(level, "pantry_plan", {"answer": answer}, text)
    feasible = oracle_feasible(answer, alloc)
    assert got["status"] == ("correct" if feasible else "incorrect"), (text, got)
    assert got["graded_text"] == text
    if feasible:
        assert got["canonical_key"] == PREFIX + "+".join(sorted(alloc))


def oracle_projection(answer: dict[str, Any], mask: str) -> str | None:
    rows = sorted((r for bit, r in zip(mask, answer["ingredients"]) if bit == "1"), key=lambda r: r["id"])
    if not answer["min_ingredients"] <= len(rows) <= answer["max_ingredients"]:
        return None
    for point in itertools.product(*(lattice(r) for r in rows)):
        alloc = {r["id"]: g for r, g in zip(rows, point)}
        if oracle_feasible(answer, alloc):
            return ";".join(f"{i}={g}" for i, g in alloc.items())
    return None


@SETTINGS
@given(fixture_index, st.text(alphabet="01", min_size=6, max_size=6), st.booleans())
def test_level1_projection_is_first_feasible_point(index, mask, reverse) -> None:
    answer = answer_of(FIXTURES[index])
    if reverse:  # bits follow the printed order of whatever array the reference holds
        answer["ingredients"].reverse()
    got = grade_in_process(1, "pantry_plan", {"answer": answer}, mask)
    expected = oracle_projection(answer, mask)
    if expected is None:
        assert (got["status"], got["graded_text"], got["canonical_key"]) == ("incorrect", SENTINEL, None)
        return
    ids = [pair.split("=")[0] for pair in expected.split(";")]
    assert (got["status"], got["graded_text"]) == ("correct", expected)
    assert got["canonical_key"] == PREFIX + "+".join(ids)
    # The projected allocation is a valid Level 2 answer of the same mode.
    again = grade_in_process(2, "pantry_plan", {"answer": answer}, expected)
    assert (again["status"], again["canonical_key"]) == ("correct", got["canonical_key"])


@SETTINGS
@given(fixture_index, st.integers(1, 5), st.text(max_size=80))
def test_arbitrary_text_gives_structured_result(index, level, text) -> None:
    fixture = FIXTURES[index]
    got = grade_in_process(level, "pantry_plan", fixture["row"], text)
    assert got["status"] in {"correct", "incorrect", "malformed"}
    assert got["verified"] is (got["status"] == "correct")
    assert (got["canonical_key"] is not None) is got["verified"]
    if level == 1 and not got["verified"]:
        assert got["graded_text"] == SENTINEL
    if level > 1:
        assert got["graded_text"] == text


@SETTINGS
@given(fixture_index, st.text(alphabet="{}\\boxed=;,_ab 0123456789\n", max_size=60))
def test_surface_like_text_never_crashes(index, text) -> None:
    got = grade_in_process(2, "pantry_plan", FIXTURES[index]["row"], text)
    assert got["status"] in {"correct", "incorrect", "malformed"}
    assert got["graded_text"] == text


JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-5, 20000)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*prefix, index))
    return found


@SETTINGS
@given(
    fixture_index,
    st.data(),
    JSON,
    st.integers(1, 5),
    st.sampled_from(["110000", "almonds=50;banana=75", "x"]),
)
def test_mutated_references_give_structured_result(index, data, replacement, level, text) -> None:
    answer = answer_of(FIXTURES[index])
    path = data.draw(st.sampled_from(_paths(answer)[1:]))
    target = answer
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = replacement
    got = grade_in_process(level, "pantry_plan", {"answer": answer}, text)
    assert got["status"] in {"correct", "incorrect", "malformed", "invalid_reference"}
    if got["status"] == "invalid_reference":
        assert got["graded_text"] == text and got["detail"]
