"""0.4.0's per-domain helpers over this implementation: MathIR commands, states, parsers and menu
enumeration; Pantry totals, spec parser, support actions and masks.

Expected values are ModeBench 0.4.0's answers to the same calls (``ops/fidelity/surface_vs_040.py``
replays these functions on the conformance and bundled references against 0.4.0 itself).
"""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction
from typing import Any

import pytest

from modebench.diagnostics import result
from modebench.domains.mathir import verifier as mathir
from modebench.domains.pantry_plan import support
from modebench.domains.pantry_plan import verifier as pantry

MENU = {
    "actions": {
        "A": "mul(a)",
        "B": "sub(b)",
        "C": "add(b)",
        "D": "sub(div(b,a))",
        "E": "div(a)",
        "F": "sub(c)",
    },
    "bindings": {"a": 1, "b": -8, "c": 0},
    "initial_lhs": "add(mul(a,x),b)",
    "initial_rhs": "c",
    "mathir_version": "linear-menu-v1",
    "max_steps": 4,
    "verifier": "mathir_action_menu",
}
FREE = {
    **{k: v for k, v in MENU.items() if k != "actions"},
    "verifier": "mathir_algebra",
    "mathir_version": "linear-v0",
}


def _show(expr: mathir.Expr) -> str:
    """A compact form that keeps the tree's shape (argument order, nesting, constants)."""
    if expr.op == "symbol":
        return str(expr.value)
    if expr.op == "const":
        return str(expr.value)
    return f"{expr.op}({','.join(_show(arg) for arg in expr.args)})"


def test_a_menu_validation_carries_0_4_0_s_commands_and_states() -> None:
    found = mathir.validate_mathir_action_menu("E;D", MENU)
    assert found is not None
    assert found.canonical_key == (
        "mathir:linear-menu-v1:eq(mul(add(b,mul(a,x)),inv(a)),mul(c,inv(a)))>eq(x,mul(add(c,mul(-1,b)),inv(a)))"
    )
    assert found.solution == Fraction(8)
    assert found.action_ids == ("E", "D")
    assert [(c.op, _show(c.argument)) for c in found.commands] == [("div", "a"), ("sub", "div(b,a)")]
    # The states are the normalised sides as SymPy orders them, n-ary nodes folded left.
    assert [(_show(s.lhs), _show(s.rhs)) for s in found.states] == [
        ("mul(inv(a),add(b,mul(a,x)))", "mul(c,inv(a))"),
        ("x", "mul(inv(a),add(c,mul(-1,b)))"),
    ]
    assert found.states[1].rhs.args[1].args[1].args[0] == mathir.Expr("const", (), Fraction(-1))
    assert mathir.mathir_command_histogram(found) == {"div": 1, "sub": 1}


def test_a_free_program_validation_carries_its_commands_and_states() -> None:
    found = mathir.validate_mathir_algebra("sub(b);div(a)", FREE)
    assert found is not None
    assert found.action_ids == ()
    assert [(_show(s.lhs), _show(s.rhs)) for s in found.states] == [
        ("mul(a,x)", "add(c,mul(-1,b))"),
        ("x", "mul(inv(a),add(c,mul(-1,b)))"),
    ]
    assert (
        found.route_signature
        == "mathir-route:linear-route-v1:init=eq(add(c0,mul(c1,x)),c2)|commands=sub(c0)>div(c1)"
    )


def test_validators_answer_none_for_another_verifier_and_refuse_a_non_mapping() -> None:
    assert mathir.validate_mathir_action_menu("C;F", FREE) is None
    assert mathir.validate_mathir_algebra("sub(b)", MENU) is None
    with pytest.raises(AttributeError, match="'str' object has no attribute 'get'"):
        mathir.validate_mathir_action_menu("C;F", "x")  # type: ignore[arg-type]


def test_certified_strategies_must_all_verify() -> None:
    assert mathir.certified_mathir_strategy_keys(FREE, ["sub(b);div(a)"]) == {
        "mathir:linear-v0:eq(mul(a,x),add(c,mul(-1,b)))>eq(x,mul(add(c,mul(-1,b)),inv(a)))"
    }
    with pytest.raises(mathir.MathIRError, match=r"^certified program failed validation: sub\(b\)$"):
        mathir.certified_mathir_strategy_keys(FREE, ["sub(b)"])


def test_menu_enumeration_is_the_certified_support() -> None:
    found = mathir.enumerate_mathir_action_menu_validations(MENU)
    assert [v.action_ids for v in found] == [
        ("C", "E", "D", "D"),
        ("B", "E"),
        ("E", "B", "D", "C"),
        ("E", "C", "D", "B"),
        ("E", "D"),
    ]
    keys = mathir.enumerate_mathir_action_menu_keys(MENU)
    assert keys == {v.canonical_key for v in found} and len(keys) == 5
    assert len(mathir.enumerate_mathir_action_menu_route_signatures(MENU)) == 5
    with pytest.raises(mathir.MathIRError, match="^wrong menu verifier$"):
        mathir.enumerate_mathir_action_menu_keys(FREE)
    with pytest.raises(mathir.MathIRError, match="^unsupported menu MathIR version$"):
        mathir.enumerate_mathir_action_menu_keys({"verifier": "mathir_action_menu"})


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        (lambda: mathir.parse_mathir_action_program(" C ; F ; ", action_ids="ABCDEF", max_steps=4), ("C", "F")),
        (lambda: mathir.parse_mathir_action_program("C;G", action_ids="ABCDEF", max_steps=4), "unknown action ID"),
        (
            lambda: mathir.parse_mathir_action_program("A;A;A;A;A", action_ids="ABCDEF", max_steps=4),
            "action program has an invalid number of steps",
        ),
        (lambda: _show(mathir.parse_mathir_expression("sub(neg(a),div(b,x))", allowed_symbols="abx")), "sub(neg(a),div(b,x))"),
        (lambda: mathir.parse_mathir_expression("sub(a,q)", allowed_symbols="abx"), "unknown symbol 'q'"),
        (lambda: mathir.parse_mathir_expression("add(a,1)", allowed_symbols="abx"), "unsupported MathIR character or numeric literal"),
        (
            lambda: mathir.parse_mathir_expression("add(add(add(a,b),add(a,b)),add(add(a,b),add(a,b)))", allowed_symbols="ab"),
            "expression is too large",
        ),
        (
            lambda: [(c.op, _show(c.argument)) for c in mathir.parse_mathir_program("sub(b); div(a);", allowed_symbols="abx", max_steps=4)],
            [("sub", "b"), ("div", "a")],
        ),
        (lambda: mathir.parse_mathir_program("foo(b)", allowed_symbols="abx", max_steps=4), "unsupported command 'foo'"),
    ],
)  # fmt: skip
def test_mathir_parsers(call: Any, expected: Any) -> None:
    if isinstance(expected, str) and not expected.startswith(("sub(", "(")):
        with pytest.raises(mathir.MathIRError) as caught:
            call()
        assert str(caught.value) == expected
    else:
        assert call() == expected


def _ingredient(ident: str, energy: str, fiber: str, tags: tuple[str, ...] = ()) -> dict[str, Any]:
    return {
        "id": ident,
        "available_g": 150,
        "step_g": 25,
        "min_if_used_g": 50,
        "attributes_per_100g": {"energy_kcal": energy, "fiber_g": fiber},
        "tags": list(tags),
    }


PANTRY = {
    "verifier": "pantry_plan",
    "pantry_version": "pantry-v1",
    "certified_mode_count": 3,
    "min_ingredients": 2,
    "max_ingredients": 3,
    "forbidden_tags": ["tree_nut"],
    "ingredients": [
        _ingredient("oats", "379", "10.1"),
        _ingredient("banana", "97.0", "2.6"),
        _ingredient("almonds", "584", "10.8", ("tree_nut",)),
        _ingredient("kale", "35.0", "4.1"),
        _ingredient("carrots", "45.0", "3.1"),
        _ingredient("apple", "53.0", "2.51"),
    ],
    "targets": {
        "energy_kcal": {"min": "300", "max": "700"},
        "fiber_g": {"min": "6"},
        "mass_g": {"max": "250"},
    },
}


def test_a_pantry_validation_carries_0_4_0_s_totals() -> None:
    found = pantry.validate_pantry_plan("banana=100;oats=100", PANTRY)
    assert found == pantry.PantryPlanValidation(
        "pantry_plan:pantry-v1:banana+oats",
        (("banana", 100), ("oats", 100)),
        (("energy_kcal", Decimal("476.0")), ("fiber_g", Decimal("12.7")), ("mass_g", Decimal("200"))),
    )
    assert str(found.totals[0][1]) == "476.0"  # the exponent too: value * grams / 100, exactly
    assert pantry.validate_pantry_plan("oats=50;kale=150", PANTRY) is None


def test_the_pantry_spec_parser() -> None:
    parsed = pantry.parse_pantry_plan_spec(PANTRY)
    assert [i.ingredient_id for i in parsed.ingredients] == [
        "oats",
        "banana",
        "almonds",
        "kale",
        "carrots",
        "apple",
    ]
    assert parsed.ingredients[2].tags == frozenset({"tree_nut"})
    assert parsed.targets == (
        pantry.PantryTarget("energy_kcal", Decimal("300"), Decimal("700")),
        pantry.PantryTarget("fiber_g", Decimal("6"), None),
        pantry.PantryTarget("mass_g", None, Decimal("250")),
    )
    assert (parsed.min_ingredients, parsed.max_ingredients, parsed.certified_mode_count) == (2, 3, 3)
    with pytest.raises(pantry.PantryPlanError, match="^unsupported PantryPlan version$"):
        pantry.parse_pantry_plan_spec({"verifier": "pantry_plan"})


@pytest.mark.parametrize(
    ("action", "expected"),
    [
        ("Support: oats + banana", ("banana", "oats")),
        ("{ingredients = kale;oats}", ("kale", "oats")),
        ("oats", "support action uses the wrong number of ingredients"),
        ("oats+zzz+yyy", "unknown ingredient 'zzz'"),
        ("kale;kale", "support action contains a duplicate ingredient"),
        ("  ", "support action is empty or too long"),
    ],
)
def test_support_actions(action: str, expected: Any) -> None:
    if isinstance(expected, str):
        with pytest.raises(pantry.PantryPlanError) as caught:
            support.parse_pantry_support_action(action, PANTRY)
        assert str(caught.value) == expected
        assert support.validate_pantry_support_action(action, PANTRY) is None
    else:
        assert support.parse_pantry_support_action(action, PANTRY) == expected


def test_support_projection_and_masks() -> None:
    projected = support.project_pantry_support(("oats", "kale"), PANTRY)
    assert projected is not None
    assert projected.allocations_g == (("kale", 50), ("oats", 75))
    assert projected.totals[0] == ("energy_kcal", Decimal("301.75"))
    assert support.project_pantry_support(("oats", "almonds"), PANTRY) is None  # a forbidden row
    assert support.validate_pantry_support_action("oats+kale", PANTRY) == projected
    assert support.pantry_support_from_mask("100100", PANTRY) == ("kale", "oats")
    assert support.decode_pantry_support_mask("100100", PANTRY) == "kale=50;oats=75"
    assert support.decode_pantry_support_mask("111111", PANTRY) == support.PANTRY_SUPPORT_MASK_INVALID
    assert support.pantry_support_mask_from_allocation("oats=75;kale=50", PANTRY) == "100100"
    with pytest.raises(pantry.PantryPlanError, match="^replayed Pantry allocation fails its verifier$"):
        support.pantry_support_mask_from_allocation("oats=50;kale=150", PANTRY)
    seven = {**PANTRY, "ingredients": [*PANTRY["ingredients"], _ingredient("pear", "57.0", "3.1")]}  # type: ignore[list-item]
    with pytest.raises(
        pantry.PantryPlanError, match="^Pantry support masks require exactly 6 public ingredient rows$"
    ):
        support.pantry_support_mask_from_allocation("oats=75;kale=50", seven)
    assert support.decode_pantry_support_mask("100100", seven) == support.PANTRY_SUPPORT_MASK_INVALID


def test_result_refuses_an_unknown_status_as_0_4_0_did() -> None:
    with pytest.raises(AssertionError):
        result("nope", key="k", text="t", detail=None, outputs=[1])
    assert result("correct", key="k")["verified"] is True
