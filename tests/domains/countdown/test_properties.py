"""Hypothesis properties of the Countdown verifier (spec §4–6), checked through the contract."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from modebench.domains._pipeline import grade_in_process
from modebench.domains._protocol import Malformed
from modebench.domains.countdown import PLUGIN
from modebench.domains.countdown.reference import CountdownRef


@dataclass(frozen=True)
class Tree:
    """An independent expression model: op in "+-*/", "neg", or "lit"."""

    op: str
    value: int = 0
    left: Tree | None = None
    right: Tree | None = None


def _trees(max_leaves: int = 5) -> st.SearchStrategy[Tree]:
    leaf = st.integers(0, 120).map(lambda n: Tree("lit", n))
    return st.recursive(
        leaf,
        lambda sub: st.one_of(
            st.builds(lambda o, a, b: Tree(o, 0, a, b), st.sampled_from("+-*/"), sub, sub),
            sub.map(lambda a: Tree("neg", 0, a)),
        ),
        max_leaves=max_leaves,
    )


def value(tree: Tree) -> Fraction:
    if tree.op == "lit":
        return Fraction(tree.value)
    if tree.op == "neg":
        return -value(tree.left)  # type: ignore[arg-type]
    a, b = value(tree.left), value(tree.right)  # type: ignore[arg-type]
    if tree.op == "/":
        if b == 0:
            raise ZeroDivisionError
        return a / b
    return {"+": a + b, "-": a - b, "*": a * b}[tree.op]


def key(tree: Tree) -> str:
    if tree.op == "lit":
        return str(tree.value)
    if tree.op == "neg":
        return f"neg({key(tree.left)})"  # type: ignore[arg-type]
    a, b = key(tree.left), key(tree.right)  # type: ignore[arg-type]
    name = {"+": "add", "-": "sub", "*": "mul", "/": "div"}[tree.op]
    if tree.op in "+*":
        a, b = min(a, b), max(a, b)
    return f"{name}({a},{b})"


def render(tree: Tree, pad: str = "") -> str:
    """Fully parenthesised text (always parses back to exactly this tree)."""
    if tree.op == "lit":
        return str(tree.value)
    if tree.op == "neg":
        return f"-({render(tree.left, pad)})"  # type: ignore[arg-type]
    return f"({render(tree.left, pad)}{pad}{tree.op}{pad}{render(tree.right, pad)})"  # type: ignore[arg-type]


def swap(tree: Tree, mask: int) -> Tree:
    """Swap the operands of commutative nodes chosen by the bits of ``mask``."""
    if tree.op == "lit":
        return tree
    if tree.op == "neg":
        return Tree("neg", 0, swap(tree.left, mask))  # type: ignore[arg-type]
    left, right = swap(tree.left, mask >> 1), swap(tree.right, mask >> 2)  # type: ignore[arg-type]
    if tree.op in "+*" and mask & 1:
        left, right = right, left
    return Tree(tree.op, 0, left, right)


def literals(tree: Tree) -> list[int]:
    if tree.op == "lit":
        return [tree.value]
    return literals(tree.left) + (literals(tree.right) if tree.right else [])  # type: ignore[arg-type]


def _solvable(tree: Tree) -> tuple[dict[str, Any], int]:
    try:
        exact = value(tree)
    except ZeroDivisionError:
        assume(False)
        raise AssertionError from None
    assume(exact.denominator == 1)
    numbers = literals(tree)
    return {"answer": {"verifier": "countdown", "numbers": numbers[::-1], "target": int(exact)}}, int(exact)


@settings(max_examples=300, deadline=None)
@given(_trees(), st.integers(0, 2**20), st.sampled_from(["", " ", "\t"]), st.booleans())
def test_solved_tree_is_correct_with_its_key(tree: Tree, mask: int, pad: str, boxed: bool) -> None:
    row, _ = _solvable(tree)
    text = render(tree, pad)
    got = grade_in_process(1, "countdown", row, f"\\boxed{{{text}}}" if boxed else text)
    if not boxed and len(text) > 160:
        assert got["status"] == "malformed"
        return
    assert got["status"] == "correct", got
    assert got["canonical_key"] == "countdown:" + key(tree)
    # Commutativity of + and * keeps the mode; redundant parentheses never matter.
    swapped = grade_in_process(1, "countdown", row, f"\\boxed{{(({render(swap(tree, mask))}))}}")
    assert swapped["canonical_key"] == got["canonical_key"]


@settings(max_examples=200, deadline=None)
@given(_trees(), st.integers(-5, 5))
def test_wrong_target_or_operands_is_incorrect(tree: Tree, delta: int) -> None:
    row, target = _solvable(tree)
    assume(delta != 0)
    wrong_target = {"answer": dict(row["answer"], target=target + delta)}
    assert (
        grade_in_process(2, "countdown", wrong_target, f"\\boxed{{{render(tree)}}}")["status"] == "incorrect"
    )
    extra_literal = {"answer": dict(row["answer"], numbers=row["answer"]["numbers"] + [7])}
    assert (
        grade_in_process(2, "countdown", extra_literal, f"\\boxed{{{render(tree)}}}")["status"] == "incorrect"
    )


@settings(max_examples=100, deadline=None)
@given(_trees(), st.text(alphabet="abcxyz ", max_size=6))
def test_any_equals_side_may_carry_the_answer(tree: Tree, junk: str) -> None:
    row, target = _solvable(tree)
    # The bare-target side must not verify on its own (e.g. numbers [0], target 0).
    assume(literals(tree) != [abs(target)])
    text = f"\\boxed{{{junk} = {target} = {render(tree)} = 0}}"
    got = grade_in_process(1, "countdown", row, text)
    assert (got["status"], got["canonical_key"]) == ("correct", "countdown:" + key(tree))


_EXPRESSION_CHARS = st.text(alphabet="0123456789+-*/(). =^x\\boxed{}\n", max_size=40)


@settings(max_examples=500, deadline=None)
@given(st.one_of(st.text(max_size=60), _EXPRESSION_CHARS))
def test_arbitrary_text_gets_a_structured_verdict(text: str) -> None:
    row = {"answer": {"verifier": "countdown", "numbers": [3, 6, 9], "target": 18}}
    got = grade_in_process(1, "countdown", row, text)
    assert got["status"] in {"correct", "incorrect", "malformed"}
    assert got["verified"] is (got["status"] == "correct")
    assert (got["canonical_key"] is not None) is got["verified"]
    assert got["graded_text"] == text
    if got["verified"]:
        assert got["canonical_key"].startswith("countdown:")


_JSONISH = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-50, 50)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=5),
    lambda sub: st.lists(sub, max_size=4) | st.dictionaries(st.text(max_size=6), sub, max_size=4),
    max_leaves=8,
)


@settings(max_examples=300, deadline=None)
@given(
    st.fixed_dictionaries(
        {"verifier": st.sampled_from(["countdown", "Countdown", None])},
        optional={"numbers": _JSONISH | st.lists(st.integers(-3, 20), max_size=4), "target": _JSONISH},
    ),
    st.sampled_from(["3+6+9", "\\boxed{3*6}", "", "x"]),
)
def test_arbitrary_reference_gets_a_structured_verdict(answer: dict[str, Any], text: str) -> None:
    got = grade_in_process(1, "countdown", {"answer": answer}, text)
    assert got["status"] in {"correct", "incorrect", "malformed", "invalid_reference"}
    valid = (
        answer["verifier"] == "countdown"
        and isinstance(answer.get("numbers"), list)
        and answer["numbers"]
        and type(answer.get("target")) is int
        and all(type(n) is int for n in answer["numbers"])
    )
    assert (got["status"] != "invalid_reference") == bool(valid), got
    assert got["graded_text"] == text


@pytest.mark.parametrize(
    ("text", "detail"),
    [
        ("not a solution", "invalid expression syntax"),
        ("\\boxed{3+6+9", "invalid response surface"),
        ("18", "arithmetic or operand mismatch"),
        ("3/0+6+9", "arithmetic or operand mismatch"),
        ("1.5+(6/0)", "invalid expression syntax"),
        ("(6/0)+1.5", "arithmetic or operand mismatch"),
        ("(2**3)+(6/0)", "invalid expression syntax"),
        ("3(6/0)", "invalid expression syntax"),
        ("3+6+9+0", "arithmetic or operand mismatch"),
        ("(" * 200 + "3+6+9" + ")" * 200, None),  # 200 levels: still legal (boxed, no cap)
        ("(" * 201 + "3+6+9" + ")" * 201, "invalid expression syntax"),
        ("1" * 4301 + "+3+6+9", "invalid expression syntax"),
    ],
)
def test_details_and_evaluation_order(text: str, detail: str | None) -> None:
    row = {"answer": {"verifier": "countdown", "numbers": [3, 6, 9], "target": 18}}
    got = grade_in_process(1, "countdown", row, f"\\boxed{{{text}}}" if "boxed" not in text else text)
    assert got["detail"] == detail
    assert got["status"] == {None: "correct", "invalid expression syntax": "malformed"}.get(
        detail, "malformed" if detail == "invalid response surface" else "incorrect"
    )


def test_reference_details_in_spec_order() -> None:
    def detail(answer: dict[str, Any]) -> str:
        return grade_in_process(1, "countdown", {"answer": {"verifier": "countdown", **answer}}, "3")[
            "detail"
        ]

    assert (
        detail({"target": "x"})
        == "invalid countdown reference: answer.numbers must be a nonempty list of integers"
    )
    assert (
        detail({"numbers": [1.0], "target": "18"})
        == "invalid countdown reference: answer.target must contain integers"
    )
    assert (
        detail({"numbers": [3, False], "target": 3})
        == "invalid countdown reference: answer.numbers must contain integers"
    )
    assert PLUGIN.validate_reference(1, {"numbers": [9, 3, 6], "target": 18}) == CountdownRef(
        (9, 3, 6), 18, (3, 6, 9)
    )


def test_deep_expression_recursion_error_propagates() -> None:
    ref = PLUGIN.validate_reference(1, {"verifier": "countdown", "numbers": [1] * 3000, "target": 3000})
    with pytest.raises(RecursionError):
        PLUGIN.grade(1, ref, "\\boxed{" + "+".join(["1"] * 3000) + "}")
    with pytest.raises(Malformed):
        PLUGIN.grade(1, ref, "\\boxed{1+}")
