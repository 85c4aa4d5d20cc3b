"""The MathIR fast paths agree exactly with the SymPy procedures they stand in for.

``target`` answers linear equations by exact arithmetic and falls back to the reference's SymPy
procedure otherwise; reference sides and transitions are memoised by their symbolic inputs.
These tests compare both paths on seeded random equations (zero bindings, reciprocals of zero,
x in denominators and products of x included) and on every generated family.
"""

from __future__ import annotations

import json
import random
from fractions import Fraction

import pytest

from modebench.domains.mathir.algebra import (
    NoTarget,
    _sympy_target,
    normalise,
    normalise_tree,
    target,
    to_sympy,
)
from modebench.domains.mathir.expr import Tree
from modebench.domains.mathir.generate import FAMILIES, generate
from modebench.domains.mathir.reference import validate_reference


def _random_tree(rng: random.Random, names: str, depth: int) -> Tree:
    if depth == 0 or rng.random() < 0.3:
        return rng.choice(names)
    op = rng.choice(["add", "sub", "mul", "div", "neg"])
    if op == "neg":
        return ("neg", _random_tree(rng, names, depth - 1))
    return (op, _random_tree(rng, names, depth - 1), _random_tree(rng, names, depth - 1))


def _outcome(function, lhs, rhs, bindings):  # type: ignore[no-untyped-def]
    try:
        return ("ok", function(lhs, rhs, bindings))
    except NoTarget as exc:
        return ("no target", str(exc))


def test_target_fast_path_matches_sympy_on_random_equations() -> None:
    rng = random.Random(20261201)
    checked = fast = 0
    while checked < 400:
        lhs_tree = _random_tree(rng, "abcx", 3)
        rhs_tree = _random_tree(rng, "abcx", 2)
        lhs, rhs = normalise(to_sympy(lhs_tree)), normalise(to_sympy(rhs_tree))
        if lhs is None or rhs is None:
            continue
        bindings = {name: Fraction(rng.randint(-3, 3), rng.choice([1, 1, 2, 3])) for name in "abc"}
        expected = _outcome(_sympy_target, lhs[0], rhs[0], bindings)
        assert _outcome(target, lhs[0], rhs[0], bindings) == expected, (lhs_tree, rhs_tree, bindings)
        checked += 1
        fast += expected[0] == "ok"
    assert fast > 100  # the comparison really exercised solvable equations


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_target_fast_path_matches_sympy_on_families(name: str) -> None:
    family = FAMILIES[name]
    lhs, rhs = normalise_tree(_parse(family.lhs)), normalise_tree(_parse(family.rhs))
    assert lhs is not None and rhs is not None
    rng = random.Random(name)
    for _ in range(25):
        bindings = {letter: Fraction(rng.randint(-4, 4)) for letter in "abcdef"}
        expected = _outcome(_sympy_target, lhs[0], rhs[0], bindings)
        assert _outcome(target, lhs[0], rhs[0], bindings) == expected, bindings


def _parse(text: str) -> Tree:
    from modebench.domains.mathir.expr import parse_expr

    return parse_expr(text, frozenset("abcdefx"), 31)


def test_memoised_reference_sides_are_the_fresh_normal_forms() -> None:
    for level in range(1, 6):
        row = generate(level, random.Random(level))
        answer = json.loads(row["answer"])
        ref = validate_reference(level, answer)
        for side, expr in (("initial_lhs", ref.lhs), ("initial_rhs", ref.rhs)):
            fresh = normalise(to_sympy(_parse(answer[side])))
            assert fresh is not None and normalise_tree(_parse(answer[side])) == fresh
            assert expr == fresh[0] and fresh[1] in ref.start_key


def test_table_entries_are_exactly_what_cancel_computes() -> None:
    from sympy import srepr

    from modebench.domains.mathir import algebra, table

    loaded = table._load()
    assert loaded.transitions and loaded.sides, "transitions.json missing or built under another SymPy"
    for text, printed in loaded.sides.items():
        fresh = algebra.compute_side(_parse(text))
        assert (None if fresh is None else fresh[1]) == printed
    rng = random.Random(7)
    for key in rng.sample(sorted(loaded.transitions), 60):
        side, op, arg = key.split("|")
        fresh = algebra.compute_transition(algebra.rebuild(side), op, algebra.rebuild(arg))
        assert (None if fresh is None else fresh[1]) == loaded.transitions[key], key
        if fresh is not None:
            assert srepr(algebra.rebuild(fresh[1])) == srepr(fresh[0])


def test_table_is_used_and_ignored_under_another_sympy(monkeypatch: pytest.MonkeyPatch) -> None:
    from modebench.domains.mathir import algebra, table

    side = algebra.rebuild("add(b,mul(a,x))")
    arg = algebra.rebuild("b")
    key = table.transition_key("add(b,mul(a,x))", "sub", "b")
    assert table._load().transitions[key] == "mul(a,x)"

    def no_cancel(expr: object) -> object:
        raise AssertionError("cancel called for a tabled transition")

    monkeypatch.setattr(algebra, "cancel", no_cancel)
    algebra.apply.cache_clear()
    assert algebra.apply(side, "sub", arg) == (algebra.rebuild("mul(a,x)"), "mul(a,x)")
    import sympy

    assert table.sympy_version() == sympy.__version__  # read without importing SymPy
    monkeypatch.setattr(table, "sympy_version", lambda: "0.0-other")
    table._load.cache_clear()
    try:
        assert table.lookup_transition("add(b,mul(a,x))", "sub", "b") is table.MISS
    finally:
        table._load.cache_clear()
        algebra.apply.cache_clear()


def test_tabled_unsupported_terms_are_what_cancel_names(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every transition the table holds as not representable has its term, and a sample of them
    is exactly what ``unrepresentable_term`` computes with ``cancel``; a tabled term is used."""
    from modebench.domains.mathir import algebra, table

    loaded = table._load()
    unrepresentable = sorted(key for key, printed in loaded.transitions.items() if printed is None)
    assert unrepresentable and set(loaded.terms) == set(unrepresentable)
    compute = algebra.unrepresentable_term.__wrapped__
    for key in random.Random(11).sample(unrepresentable, 40):
        side, op, arg = key.split("|")
        expected = loaded.terms[key]
        loaded.terms.pop(key)  # the cancel path, as for a transition outside the table
        try:
            fresh = compute(algebra.rebuild(side), op, algebra.rebuild(arg))
        finally:
            loaded.terms[key] = expected
        assert fresh == expected, key

    def no_cancel(expr: object) -> object:
        raise AssertionError("cancel called for a tabled term")

    monkeypatch.setattr(algebra, "cancel", no_cancel)
    side, op, arg = unrepresentable[0].split("|")
    assert compute(algebra.rebuild(side), op, algebra.rebuild(arg)) == loaded.terms[unrepresentable[0]]
