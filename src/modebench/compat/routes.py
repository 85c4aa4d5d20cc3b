"""Exploration identities of 0.4.0's ``validated_modebench_exploration_identity``: an endpoint key
per verified answer and, where the domain defines one, a literal-abstracted route signature.

Neither appears in graded results; they exist for trainers that reward exploration
(``docs/compatibility.md``). The rules are the spec's (``python_factors.md`` §12,
``mathir.md`` §4.6, ``countdown.md``), checked against 0.4.0 by ``ops/fidelity/surface_vs_040.py``.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from modebench.domains._protocol import Malformed
from modebench.domains.python_factors.language import parse_lambda

PYTHON_ROUTE_PREFIX = "python-factor-route:v1:"
COUNTDOWN_ROUTE_PREFIX = "countdown-route:v1:"
COUNTDOWN_VALUE_PREFIX = "countdown-value:"
MATHIR_SOLUTION_PREFIX = "mathir-solution:"
MATHIR_ROUTE_PREFIX = "mathir-route:linear-route-v1:"


class PythonModeBenchError(ValueError):
    """A Python factor candidate outside the restricted language (0.4.0's error type)."""


# Operator names of the route language; ``add`` and ``mult`` children are sorted (commutative).
_BINARY = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mult", ast.FloorDiv: "floordiv", ast.Mod: "mod"}
_UNARY = {ast.USub: "usub", ast.UAdd: "uadd", ast.Not: "not"}
_COMPARE = {ast.Eq: "eq", ast.NotEq: "noteq", ast.Lt: "lt", ast.LtE: "lte", ast.Gt: "gt", ast.GtE: "gte"}
_SORTED_BINARY = frozenset({"add", "mult"})


def fraction_text(value: Fraction) -> str:
    """``p/q`` with the denominator always printed (``18/1``)."""
    return f"{value.numerator}/{value.denominator}"


def _skeleton(node: ast.AST) -> str:
    if isinstance(node, ast.Lambda):
        return f"lambda({_skeleton(node.body)})"
    if isinstance(node, ast.Name):
        return "input"
    if isinstance(node, ast.Constant):
        return "literal"
    if isinstance(node, ast.IfExp):
        return f"if({_skeleton(node.test)},{_skeleton(node.body)},{_skeleton(node.orelse)})"
    if isinstance(node, ast.BinOp):
        name = _BINARY[type(node.op)]
        parts = [_skeleton(node.left), _skeleton(node.right)]
        if name in _SORTED_BINARY:
            parts.sort()
        return f"{name}({','.join(parts)})"
    if isinstance(node, ast.UnaryOp):
        return f"{_UNARY[type(node.op)]}({_skeleton(node.operand)})"
    if isinstance(node, ast.BoolOp):
        operands = sorted(_skeleton(value) for value in node.values)
        return f"{'and' if isinstance(node.op, ast.And) else 'or'}({','.join(operands)})"
    if isinstance(node, ast.Compare):
        ops = [_COMPARE[type(op)] for op in node.ops]
        rights = [_skeleton(value) for value in node.comparators]
        return f"compare({','.join([_skeleton(node.left), *ops, *rights])})"
    raise ValueError(f"unsupported route node: {type(node).__name__}")


def python_factor_route_signature(candidate: str) -> str:
    """The route signature of a lambda candidate; the candidate is parsed, never run."""

    try:
        tree = parse_lambda(candidate)  # the restricted language's own static checks
    except Malformed as exc:
        raise PythonModeBenchError(exc.detail) from None
    return PYTHON_ROUTE_PREFIX + _skeleton(tree.body)


def countdown_route(key: str) -> str:
    """Route of a Countdown canonical key: literals → ``input``, ``add``/``mul`` children re-sorted."""
    body = key.split(":", 1)[1]
    stack: list[list[str]] = [[]]
    names: list[str] = []
    token = ""
    for char in body:
        if char == "(":
            names.append(token)
            stack.append([])
            token = ""
        elif char in ",)":
            if token:
                stack[-1].append("input")
                token = ""
            if char == ")":
                children = stack.pop()
                name = names.pop()
                if name in ("add", "mul"):
                    children.sort()
                stack[-1].append(f"{name}({','.join(children)})")
        else:
            token += char
    if token:
        stack[-1].append("input")
    return COUNTDOWN_ROUTE_PREFIX + stack[0][0]


# A printed MathIR term: a leaf name/number, or [operator, children...].
Term = str | list[Any]
_FLAT = frozenset({"add", "mul"})


def _parse_printed(text: str) -> Term:
    """Read a printed key term (``eq(mul(a,inv(b)),c)``) back into a tree."""
    stack: list[list[Any]] = [["", []]]
    token = ""
    for char in text:
        if char == "(":
            stack.append([token, []])
            token = ""
        elif char in ",)":
            if token:
                stack[-1][1].append(token)
                token = ""
            if char == ")":
                name, children = stack.pop()
                stack[-1][1].append([name, *children])
        else:
            token += char
    if token:
        stack[-1][1].append(token)
    found: Term = stack[0][1][0]
    return found


def _raw_term(tree: Any) -> Term:
    """A raw expression tree (``domains.mathir.expr``) with ``sub``/``div`` rewritten (mathir.md §4.1)."""
    if isinstance(tree, str):
        return tree
    op, *children = tree
    terms = [_raw_term(child) for child in children]
    if op == "sub":
        return ["add", terms[0], ["neg", terms[1]]]
    if op == "div":
        return ["mul", terms[0], ["inv", terms[1]]]
    return [op, *terms]


def _print(term: Term, names: dict[str, str]) -> str:
    """Print with ``names`` renamed; ``add``/``mul`` flattened and their children sorted."""
    if isinstance(term, str):
        return names.get(term, term)
    op, *children = term
    if op in _FLAT:
        parts: list[str] = []
        pending = list(children)
        while pending:
            child = pending.pop(0)
            if isinstance(child, list) and child[0] == op:
                pending[:0] = child[1:]
            else:
                parts.append(_print(child, names))
        parts.sort()
    else:
        parts = [_print(child, names) for child in children]
    return f"{op}({','.join(parts)})"


def mathir_route(start_key: str, symbols: Sequence[str], commands: Sequence[tuple[str, Any]]) -> str:
    """The renaming-invariant route: initial state and raw commands, minimal over symbol renamings."""
    start = _parse_printed(start_key)
    steps = [(op, _raw_term(arg)) for op, arg in commands]
    ordered = sorted(symbols)
    best: str | None = None
    for order in itertools.permutations(range(len(ordered))):
        names = {symbol: f"c{index}" for symbol, index in zip(ordered, order, strict=True)}
        route = f"{MATHIR_ROUTE_PREFIX}init={_print(start, names)}|commands=" + ">".join(
            f"{op}({_print(arg, names)})" for op, arg in steps
        )
        if best is None or route < best:
            best = route
    assert best is not None  # one renaming exists even without symbols
    return best


__all__ = [
    "PythonModeBenchError",
    "mathir_route",
    "countdown_route",
    "fraction_text",
    "python_factor_route_signature",
]
