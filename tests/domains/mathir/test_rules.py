"""Spec rules of spec/domains/mathir.md §1.1, §3.1–§3.3 not covered by the §7 vectors.

Expected statuses are read off the spec text (cited per case), not from the implementation.
"""

from __future__ import annotations

from typing import Any

import pytest

from modebench.domains._pipeline import grade_in_process

MENU: dict[str, Any] = {
    "verifier": "mathir_action_menu",
    "mathir_version": "linear-menu-v1",
    "bindings": {"a": 3, "b": 5, "c": 14},
    "initial_lhs": "add(mul(a,x),b)",
    "initial_rhs": "c",
    "actions": {"A": "sub(b)", "B": "div(a)"},
}
FREE: dict[str, Any] = {
    "verifier": "mathir_algebra",
    "mathir_version": "linear-v0",
    "bindings": {"a": 3, "b": 5, "c": 14},
    "initial_lhs": "add(mul(a,x),b)",
    "initial_rhs": "c",
}
EIGHT = {
    "A": "sub(b)",
    "B": "div(a)",
    "C": "sub(c)",
    "D": "add(b)",
    "E": "mul(a)",
    "F": "sub(a)",
    "G": "add(a)",
    "H": "add(c)",
}
KEY_MENU = "mathir:linear-menu-v1:eq(mul(a,x),add(c,mul(-1,b)))>eq(x,mul(add(c,mul(-1,b)),inv(a)))"


def _nest(depth: int) -> str:
    return "neg(" * depth + "b" + ")" * depth


REFERENCE_CASES = [
    # §1.1 bindings
    ("bind-int-string", {"bindings": {"a": "3", "b": "5", "c": "14"}}, "correct"),
    ("bind-neg-rational", {"bindings": {"a": "-3/2", "b": 5, "c": 14}}, "correct"),
    ("bind-unicode-digits", {"bindings": {"a": "\u0663", "b": 5, "c": 14}}, "correct"),
    ("bind-plus", {"bindings": {"a": "+3", "b": 5, "c": 14}}, "invalid_reference"),
    ("bind-zero-den", {"bindings": {"a": "1/0", "b": 5, "c": 14}}, "invalid_reference"),
    ("bind-leading-zero-den", {"bindings": {"a": "3/04", "b": 5, "c": 14}}, "invalid_reference"),
    ("bind-decimal", {"bindings": {"a": "0.5", "b": 5, "c": 14}}, "invalid_reference"),
    ("bind-bool", {"bindings": {"a": True, "b": 5, "c": 14}}, "invalid_reference"),
    ("bind-null", {"bindings": {"a": None, "b": 5, "c": 14}}, "invalid_reference"),
    ("bind-x", {"bindings": {"a": 3, "b": 5, "c": 14, "x": 1}}, "invalid_reference"),
    ("bind-upper", {"bindings": {"A": 3, "b": 5, "c": 14}}, "invalid_reference"),
    ("bind-long-name", {"bindings": {"aa": 3, "b": 5, "c": 14}}, "invalid_reference"),
    ("bind-empty", {"bindings": {}}, "invalid_reference"),
    ("bind-list", {"bindings": [["a", 3]]}, "invalid_reference"),
    ("bind-seven", {"bindings": dict(zip("abcdefg", range(1, 8)))}, "invalid_reference"),
    ("bind-unbound-symbol", {"bindings": {"a": 3, "b": 5}}, "invalid_reference"),
    # §1.1 sides
    ("side-blank", {"initial_rhs": "   "}, "invalid_reference"),
    ("side-number", {"initial_rhs": "14"}, "invalid_reference"),
    ("side-not-string", {"initial_rhs": ["c"]}, "invalid_reference"),
    ("side-missing", {"initial_lhs": None}, "invalid_reference"),
    ("side-spaces-ok", {"initial_lhs": " add( mul(a, x) ,\nb) "}, "correct"),
    # §1.1 max_steps
    ("steps-bool", {"max_steps": True}, "invalid_reference"),
    ("steps-zero", {"max_steps": 0}, "invalid_reference"),
    ("steps-float", {"max_steps": 4.0}, "invalid_reference"),
    ("steps-two", {"max_steps": 2}, "correct"),
    # §1.1 actions
    ("actions-missing", {"actions": None}, "invalid_reference"),
    ("actions-gap", {"actions": {"A": "sub(b)", "C": "div(a)"}}, "invalid_reference"),
    ("actions-lowercase", {"actions": {"a": "sub(b)", "b": "div(a)"}}, "invalid_reference"),
    ("actions-nine", {"actions": dict(zip("ABCDEFGHI", [*EIGHT.values(), "mul(b)"]))}, "invalid_reference"),
    ("actions-eight", {"actions": EIGHT}, "correct"),
    ("actions-non-string", {"actions": {"A": "sub(b)", "B": 3}}, "invalid_reference"),
    ("actions-neg-command", {"actions": {"A": "sub(b)", "B": "neg(a)"}}, "invalid_reference"),
    ("actions-unknown-symbol", {"actions": {"A": "sub(b)", "B": "div(d)"}}, "invalid_reference"),
    (
        "actions-12-nodes",
        {"actions": {"A": "sub(b)", "B": "div(a)", "C": "sub(add(add(add(add(add(b,b),b),b),b),neg(b)))"}},
        "invalid_reference",
    ),
    (
        "actions-depth-7",
        {"actions": {"A": "sub(b)", "B": "div(a)", "C": f"sub({_nest(7)})"}},
        "invalid_reference",
    ),
    ("actions-illegal-ok", {"actions": {"A": "sub(b)", "B": "div(a)", "C": "div(add(x,x))"}}, "correct"),
    ("actions-alias-ok", {"actions": {"A": "sub(b)", "B": "div(a)", "C": "add(neg(b))"}}, "correct"),
    # §1.1 versions
    ("version-swapped", {"mathir_version": "linear-v0"}, "invalid_reference"),
    ("version-missing", {"mathir_version": None}, "invalid_reference"),
    # §3.5 target
    ("target-x-denominator", {"initial_lhs": "add(div(a,x),b)"}, "invalid_reference"),
    ("target-rational-ok", {"bindings": {"a": 2, "b": 5, "c": 6}}, "correct"),
]


@pytest.mark.parametrize(("name", "patch", "status"), REFERENCE_CASES, ids=[c[0] for c in REFERENCE_CASES])
def test_reference_rules(name: str, patch: dict[str, Any], status: str) -> None:
    answer = dict(MENU, **patch)
    answer = {k: v for k, v in answer.items() if v is not None}
    got = grade_in_process(1, "mathir", {"answer": answer}, "A;B")
    assert got["status"] == status, got
    if status == "correct":
        assert got["canonical_key"] == KEY_MENU


def _balanced(leaves: list[str]) -> str:
    if len(leaves) == 1:
        return leaves[0]
    half = len(leaves) // 2
    return f"add({_balanced(leaves[:half])},{_balanced(leaves[half:])})"


def test_side_node_limit_is_31_and_depth_6() -> None:
    leaves = ["a", "b", "c", "c"] * 4  # 16 leaves + 15 adds = 31 nodes, depth 4
    ok = dict(MENU, initial_rhs=_balanced(leaves))
    assert grade_in_process(1, "mathir", {"answer": ok}, "A")["status"] == "incorrect"
    over = dict(MENU, initial_rhs=_balanced(["neg(c)", *leaves[1:]]))  # 32 nodes
    assert grade_in_process(1, "mathir", {"answer": over}, "A")["status"] == "invalid_reference"
    # Depth > 6 is rejected in reference sides too (same grammar): c under 7 nested negs.
    deep = dict(MENU, initial_rhs=_nest(7).replace("b", "c"))
    assert grade_in_process(1, "mathir", {"answer": deep}, "A")["status"] == "invalid_reference"
    six = dict(MENU, initial_rhs=_nest(6).replace("b", "c"))
    assert grade_in_process(1, "mathir", {"answer": six}, "A")["status"] == "incorrect"


FREE_CASES = [
    ("sub(b);div(a)", "correct"),
    ("sub(b);div(a);", "correct"),
    (" sub ( b ) ; div ( a ) ", "correct"),
    ("sub(b);div(a);;", "malformed"),
    (";sub(b);div(a)", "malformed"),
    ("Sub(b);div(a)", "malformed"),
    ("sqrt(b);div(a)", "malformed"),
    ("sub(b)div(a)", "malformed"),
    ("sub(b,a);div(a)", "malformed"),
    ("sub();div(a)", "malformed"),
    ("sub(b));div(a)", "malformed"),
    ("sub(a1);div(a)", "malformed"),
    ("sub(add);div(a)", "malformed"),
    ("sub(b(a));div(a)", "malformed"),
    ("sub(neg(b,a));div(a)", "malformed"),
    ("sub(b);div(a);add(b);sub(b);div(b)", "malformed"),
    ("sub(b);div(a);mul(a);div(a)", "incorrect"),  # mul(a) returns to the state after step 1
    ("sub(b);div(mul(a,neg(neg(b))));mul(b)", "correct"),
    ("sub(b);div(a);sub(x)", "incorrect"),
    ("sub(b);div(sub(a,neg(neg(a))))", "incorrect"),
    ("sub(b);div(b);mul(b);div(a)", "incorrect"),  # returns to an earlier state
    ("sub(b);div(a)" + " " * 200, "correct"),  # raw cap counts the stripped text
    ("\\boxed{sub(b);div(a)}", "correct"),
    ("```mathir sub(b);div(a)```", "correct"),
    ("```MathIR\nsub(b);div(a)\n```", "correct"),
    ("sub(b);mul(div(add(b,c),add(b,c)));div(a)", "incorrect"),  # mul by 1: same state repeated
    ("\\boxed{" + "sub(b);" + "add(a);sub(a);" * 12 + "div(a)}", "malformed"),  # > 160 chars (and > 4 steps)
]


@pytest.mark.parametrize(("text", "status"), FREE_CASES)
def test_free_program_rules(text: str, status: str) -> None:
    got = grade_in_process(1, "mathir", {"answer": FREE}, text)
    assert got["status"] == status, got
    assert got["graded_text"] == text
