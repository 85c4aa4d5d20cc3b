"""Per-side evaluation, the correctness test and the canonical mode key (spec §4.3–6).

A side is parsed by CPython's own parser (``ast``, eval mode, never executed) because the
reference's grammar *is* Python's expression grammar: token rules such as leading zeros, the
200-level parenthesis limit, implicit line joining inside parentheses and the 4300-digit literal
limit all come from it. Only sides made of digits, ``+-*/().`` and whitespace ever reach it.

The tree walks are deliberately recursive (one Python frame per node): the reference fails with
``RecursionError`` on extremely deep expressions, which the worker turns into ``worker_failure``.
"""

from __future__ import annotations

import ast
import re
from fractions import Fraction

from modebench.domains.countdown.reference import CountdownRef

# ASCII digits only (not ``\d``); ``\s`` is Python's Unicode whitespace, as in the reference.
_ALLOWED = re.compile(r"[0-9+\-*/().\s]*")
_ONLY_AST = ast.PyCF_ONLY_AST

_BinOp, _UnaryOp, _Constant = ast.BinOp, ast.UnaryOp, ast.Constant
_Add, _Sub, _Mult, _Div, _USub, _UAdd = ast.Add, ast.Sub, ast.Mult, ast.Div, ast.USub, ast.UAdd
_OP_NAMES = {_Add: "add", _Sub: "sub", _Mult: "mul", _Div: "div"}

Number = int | Fraction


class _NotCountdown(Exception):
    """Non-integer constant, unsupported operator or node: the side is not evaluable."""


class _DivisionByZero(Exception):
    """An exact-zero divisor: the side counts as evaluable but cannot be correct."""


def _evaluate(node: ast.AST, literals: list[int]) -> Number:
    """Exact value, post-order, left before right, operator checked after both children."""
    kind = type(node)
    if kind is _BinOp:
        left = _evaluate(node.left, literals)  # type: ignore[attr-defined]
        right = _evaluate(node.right, literals)  # type: ignore[attr-defined]
        op = type(node.op)  # type: ignore[attr-defined]
        if op is _Add:
            return left + right
        if op is _Sub:
            return left - right
        if op is _Mult:
            return left * right
        if op is _Div:
            if right == 0:
                raise _DivisionByZero
            if type(left) is int and type(right) is int:
                quotient, remainder = divmod(left, right)
                return quotient if remainder == 0 else Fraction(left, right)
            return Fraction(left) / right  # at least one Fraction: exact
        raise _NotCountdown("unsupported operator")  # **, //, …
    if kind is _Constant:
        value = node.value  # type: ignore[attr-defined]
        if type(value) is not int:  # floats, Ellipsis, … (bool cannot come out of the filter)
            raise _NotCountdown("non-integer constant")
        literals.append(value)
        return value
    if kind is _UnaryOp:
        operand = _evaluate(node.operand, literals)  # type: ignore[attr-defined]
        op = type(node.op)  # type: ignore[attr-defined]
        if op is _USub:
            return -operand
        if op is _UAdd:
            return operand
        raise _NotCountdown("unsupported operator")  # unreachable after the character filter
    # Calls (``3(6+9)``), tuples (``()``), …: rejected without visiting their children.
    raise _NotCountdown("unsupported node")


def compose_key(name: str, left: str, right: str) -> str:
    """Key of a binary node from its children's keys; shared with the mode-count enumeration."""
    if (name == "add" or name == "mul") and right < left:  # plain code-point string order
        left, right = right, left
    return f"{name}({left},{right})"


def _key(node: ast.AST) -> str:
    """§6.1: children of ``+``/``*`` sorted as strings; no flattening, no other rewriting."""
    kind = type(node)
    if kind is _BinOp:
        left = _key(node.left)  # type: ignore[attr-defined]
        right = _key(node.right)  # type: ignore[attr-defined]
        return compose_key(_OP_NAMES[type(node.op)], left, right)  # type: ignore[attr-defined]
    if kind is _UnaryOp:
        inner = _key(node.operand)  # type: ignore[attr-defined]
        return f"neg({inner})" if type(node.op) is _USub else inner  # type: ignore[attr-defined]
    return str(node.value)  # type: ignore[attr-defined]  # plain decimal: ``00`` → ``0``


def check_sides(ref: CountdownRef, side_texts: list[str]) -> tuple[str | None, bool]:
    """``(key, evaluable)``: the key of the first verifying side, else whether any side evaluated."""
    evaluable = False
    for side in side_texts:
        if _ALLOWED.fullmatch(side) is None:
            continue
        try:
            # As ast.parse does, minus inherited __future__ flags (dont_inherit=True).
            tree = compile(side, "<unknown>", "eval", _ONLY_AST, True)
        except SyntaxError:
            continue
        body = tree.body
        literals: list[int] = []
        try:
            value = _evaluate(body, literals)
        except _DivisionByZero:
            evaluable = True
            continue
        except _NotCountdown:
            continue
        evaluable = True
        if (
            value == ref.target
            and len(literals) == len(ref.sorted_numbers)
            and sorted(literals) == list(ref.sorted_numbers)
        ):
            return "countdown:" + _key(body), True
    return None, evaluable


__all__ = ["check_sides", "compose_key"]
