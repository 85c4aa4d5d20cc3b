"""Property tests of the MathIR invariants stated in spec/domains/mathir.md."""

from __future__ import annotations

import copy
import json
import re
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from modebench.domains._pipeline import grade_in_process
from tests.reference_data import SKIP_REASON, conformance_fixtures

FIXTURES = [f for f in conformance_fixtures() if f["domain"] == "mathir"]
needs_fixtures = pytest.mark.skipif(not FIXTURES, reason=SKIP_REASON)
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

GRADED = {"correct", "incorrect", "malformed"}
ALL_STATUSES = GRADED | {"invalid_reference", "resource_limit", "worker_failure", "timeout"}

FREE = {
    "verifier": "mathir_algebra",
    "mathir_version": "linear-v0",
    "bindings": {"a": 3, "b": 5, "c": 14},
    "initial_lhs": "add(mul(a,x),b)",
    "initial_rhs": "c",
    "max_steps": 4,
}

programs = st.lists(st.sampled_from("ABCDEF"), min_size=1, max_size=4)
fixture_index = st.integers(min_value=0, max_value=4)


def _answer(fixture: dict[str, Any]) -> dict[str, Any]:
    answer = fixture["row"]["answer"]
    return copy.deepcopy(json.loads(answer) if isinstance(answer, str) else answer)


def _grade(level: int, answer: Any, text: Any) -> dict[str, Any]:
    return grade_in_process(level, "mathir", {"answer": answer}, text)


def _check_shape(got: dict[str, Any], text: Any) -> None:
    assert got["verified"] == (got["status"] == "correct")
    assert (got["canonical_key"] is not None) == got["verified"]
    if got["status"] in GRADED:
        assert got["graded_text"] == text


@needs_fixtures
@SETTINGS
@given(
    index=fixture_index, text=st.text() | st.text(alphabet="ABCDEFGHabc;,{} \n\\boxed`<>mathir", max_size=40)
)
def test_arbitrary_text_gets_a_graded_status(index: int, text: str) -> None:
    fixture = FIXTURES[index]
    got = grade_in_process(fixture["level"], "mathir", fixture["row"], text)
    assert got["status"] in GRADED
    _check_shape(got, text)


@needs_fixtures
@SETTINGS
@given(
    index=fixture_index,
    ids=programs,
    gaps=st.lists(st.sampled_from(["", " ", "\n", "\t", "\u00a0", "  "]), min_size=9, max_size=9),
)
def test_whitespace_and_surface_are_formatting_only(index: int, ids: list[str], gaps: list[str]) -> None:
    fixture = FIXTURES[index]
    plain = grade_in_process(fixture["level"], "mathir", fixture["row"], ";".join(ids))
    spaced = gaps[0] + "".join(f"{i}{gaps[n + 1]};{gaps[n + 5]}" for n, i in enumerate(ids))
    for text in (
        f"\\boxed{{{spaced}}}",
        f"reasoning <think>A;B</think> \\boxed{{{spaced}}}",
        f"```mathir\n{spaced}\n```",
    ):
        got = grade_in_process(fixture["level"], "mathir", fixture["row"], text)
        assert (got["status"], got["canonical_key"]) == (plain["status"], plain["canonical_key"])
        _check_shape(got, text)


@needs_fixtures
@SETTINGS
@given(index=fixture_index, ids=programs, order=st.permutations("ABCDEF"))
def test_relabelled_menu_keeps_status_and_key(index: int, ids: list[str], order: list[str]) -> None:
    fixture = FIXTURES[index]
    answer = _answer(fixture)
    relabel = dict(zip("ABCDEF", order))  # old ID -> new ID
    moved = {relabel[old]: command for old, command in answer["actions"].items()}
    answer["actions"] = {new: moved[new] for new in "ABCDEF"}
    before = _grade(fixture["level"], _answer(fixture), ";".join(ids))
    after = _grade(fixture["level"], answer, ";".join(relabel[i] for i in ids))
    assert (after["status"], after["canonical_key"]) == (before["status"], before["canonical_key"])


@needs_fixtures
@SETTINGS
@given(index=fixture_index, ids=programs)
def test_verified_key_lists_one_state_per_step(index: int, ids: list[str]) -> None:
    fixture = FIXTURES[index]
    got = grade_in_process(fixture["level"], "mathir", fixture["row"], ";".join(ids))
    assert got["status"] in {"correct", "incorrect"}  # every ID exists, count is within max_steps
    if got["verified"]:
        key = got["canonical_key"]
        assert key.startswith("mathir:linear-menu-v1:eq(")
        states = key[len("mathir:linear-menu-v1:") :].split(">")
        assert len(states) == len(ids)
        assert len(set(states)) == len(states)  # repeated states are rejected
        assert re.fullmatch(r"eq\(x,.*\)|eq\(.*,x\)", states[-1])
        assert " " not in key


@needs_fixtures
@SETTINGS
@given(index=fixture_index, ids=programs, extra=st.lists(st.sampled_from("ABCDEF"), min_size=1, max_size=3))
def test_too_many_steps_is_malformed(index: int, ids: list[str], extra: list[str]) -> None:
    fixture = FIXTURES[index]
    answer = _answer(fixture)
    answer["max_steps"] = len(ids)
    assert _grade(fixture["level"], answer, ";".join(ids))["status"] in {"correct", "incorrect"}
    assert _grade(fixture["level"], answer, ";".join(ids + extra))["status"] == "malformed"


@SETTINGS
@given(
    a=st.integers(-30, 30).filter(bool),
    b=st.integers(-30, 30),
    s=st.fractions(min_value=-20, max_value=20, max_denominator=7),
    rotate=st.booleans(),
)
def test_keys_are_symbolic_and_value_is_checked(a: int, b: int, s: Fraction, rotate: bool) -> None:
    """The key never depends on the bindings (the state is symbolic)."""
    c = a * s + b
    answer = dict(FREE, bindings={"a": a, "b": b, "c": f"{c.numerator}/{c.denominator}"})
    if rotate:
        answer["initial_lhs"], answer["initial_rhs"] = answer["initial_rhs"], answer["initial_lhs"]
    got = _grade(1, answer, "sub(b);div(a)")
    assert got["status"] == "correct"
    expected = "eq(mul(a,x),add(c,mul(-1,b)))>eq(x,mul(add(c,mul(-1,b)),inv(a)))"
    if rotate:
        expected = "eq(add(c,mul(-1,b)),mul(a,x))>eq(mul(add(c,mul(-1,b)),inv(a)),x)"
    assert got["canonical_key"] == "mathir:linear-v0:" + expected
    # Numerically coinciding symbols are never merged: sub(c) leaves b - c symbolic even if b == c.
    assert _grade(1, answer, "sub(c);div(a)")["status"] == "incorrect"


terms = st.sampled_from(["a", "b", "c", "x", "mul(a,b)", "div(b,a)", "neg(c)", "add(a,c)", "mul(a,x)"])


@SETTINGS
@given(steps=st.lists(st.tuples(st.sampled_from(["add", "sub"]), terms), min_size=1, max_size=3))
def test_sub_and_add_neg_are_aliases(steps: list[tuple[str, str]]) -> None:
    plain = ";".join(f"{op}({t})" for op, t in steps) + ";div(a)"
    alias = ";".join(f"{'sub' if op == 'add' else 'add'}(neg({t}))" for op, t in steps) + ";div(a)"
    first, second = _grade(1, FREE, plain), _grade(1, FREE, alias)
    assert (first["status"], first["canonical_key"]) == (second["status"], second["canonical_key"])
    assert first["status"] in {"correct", "incorrect"}


json_leaf = (
    st.none()
    | st.booleans()
    | st.integers(-10, 10)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
json_value = st.recursive(
    json_leaf,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=8,
)
fields = st.sampled_from(
    ["verifier", "mathir_version", "bindings", "initial_lhs", "initial_rhs", "max_steps", "actions"]
)


@needs_fixtures
@SETTINGS
@given(
    index=fixture_index,
    patch=st.dictionaries(fields, json_value, max_size=3),
    drop=st.lists(fields, max_size=2),
)
def test_mutated_references_never_escape(index: int, patch: dict[str, Any], drop: list[str]) -> None:
    fixture = FIXTURES[index]
    answer = _answer(fixture)
    answer.update(patch)
    for name in drop:
        answer.pop(name, None)
    text = fixture["cases"][0]["response"]
    got = _grade(fixture["level"], answer, text)
    assert got["status"] in ALL_STATUSES - {"worker_failure", "timeout"}
    _check_shape(got, text)
    if got["status"] == "invalid_reference":
        assert got["graded_text"] == text


@SETTINGS
@given(answer=json_value, text=st.none() | st.text(max_size=20))
def test_arbitrary_answers_are_structured(answer: Any, text: Any) -> None:
    got = _grade(3, answer, text)
    assert got["status"] in {"invalid_reference", "malformed"}
    _check_shape(got, text)
