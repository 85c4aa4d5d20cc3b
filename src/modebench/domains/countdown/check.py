"""Per-side evaluation, the correctness test and the canonical mode key.

A side is parsed by CPython's own parser (``ast``, eval mode, never executed) because the
reference's grammar *is* Python's expression grammar: token rules such as leading zeros, the
200-level parenthesis limit, implicit line joining inside parentheses and the 4300-digit literal
limit all come from it. Only sides made of digits, ``+-*/().`` and whitespace ever reach it.

ModeBench 0.4.0 walks the tree by plain recursion inside its worker, so an expression deep
enough ends there in ``RecursionError`` (``worker_failure``). Where that happens depends only on
the tree, never on how deep our caller's stack is: the walks here are iterative and charge each
step what it costs in the reference's worker (see ``docs/fidelity.md``), and ``RecursionError`` is
raised exactly where the reference raises it.
"""

from __future__ import annotations

import ast
import re
import sys
from fractions import Fraction
from types import FrameType
from typing import cast

from modebench.domains.countdown.reference import CountdownRef

# ASCII digits only (not ``\d``); ``\s`` is Python's Unicode whitespace, as in the reference.
_ALLOWED = re.compile(r"[0-9+\-*/().\s]*")
_ONLY_AST = ast.PyCF_ONLY_AST

_BinOp, _UnaryOp, _Constant = ast.BinOp, ast.UnaryOp, ast.Constant
_Add, _Sub, _Mult, _Div, _USub, _UAdd = ast.Add, ast.Sub, ast.Mult, ast.Div, ast.USub, ast.UAdd
_OP_NAMES = {_Add: "add", _Sub: "sub", _Mult: "mul", _Div: "div"}

#: The reference's worker builds the Python tree of a side only up to this nesting depth of
#: expression nodes (the root at 0); deeper trees fail in ``ast.parse`` with RecursionError.
PARSE_DEPTH_LIMIT = 2965
#: Its recursive evaluation fails once a step costs more than this. A step at a node of depth
#: ``d`` costs ``d`` to enter, ``d + 2`` to turn an integer literal into a number and ``d + 4``
#: to apply ``+ - * /`` (the exact-fraction arithmetic calls a few frames deeper).
EVAL_COST_LIMIT = 988
_LITERAL_COST = 2
_ARITHMETIC_COST = 4
#: Extra recursion allowance granted to CPython's own tree construction when our caller is
#: deep, so that only PARSE_DEPTH_LIMIT decides (the builder allows three levels per frame).
_PARSE_HEADROOM = PARSE_DEPTH_LIMIT // 3 + 64

Number = int | Fraction


class _NotCountdown(Exception):
    """Non-integer constant, unsupported operator or node: the side is not evaluable."""


class _DivisionByZero(Exception):
    """An exact-zero divisor: the side counts as evaluable but cannot be correct."""


def _too_deep() -> RecursionError:
    return RecursionError("maximum recursion depth exceeded")


def _parse(side: str) -> ast.expr:
    """The side's expression tree, or the reference's SyntaxError/MemoryError/RecursionError."""
    try:
        # As ast.parse does, minus inherited __future__ flags (dont_inherit=True).
        tree = cast(ast.Expression, compile(side, "<unknown>", "eval", _ONLY_AST, True))
    except RecursionError:
        tree = _parse_with_headroom(side)
    body: ast.expr = tree.body
    # A tree needs at least one character per level, so only long sides can be too deep.
    if len(side) > PARSE_DEPTH_LIMIT and _depth(body) > PARSE_DEPTH_LIMIT:
        raise _too_deep()
    return body


def _parse_with_headroom(side: str) -> ast.Expression:
    """Parse again with enough recursion allowance that only the tree's own depth decides.

    CPython scales its tree-building limit by the caller's stack depth; our caller may stand
    deeper than the reference's. If this parse still fails, the tree is deeper than
    PARSE_DEPTH_LIMIT, so the reference fails too.
    """
    frames = 0
    frame: FrameType | None = sys._getframe()
    while frame is not None:
        frames, frame = frames + 1, frame.f_back
    previous = sys.getrecursionlimit()
    sys.setrecursionlimit(max(previous, frames + _PARSE_HEADROOM))
    try:
        return cast(ast.Expression, compile(side, "<unknown>", "eval", _ONLY_AST, True))
    finally:
        sys.setrecursionlimit(previous)


def _depth(root: ast.AST) -> int:
    """Deepest expression node below ``root`` (root at 0), without recursion."""
    deepest = 0
    stack = [(root, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > deepest:
            deepest = depth
        stack.extend(
            (child, depth + 1) for child in ast.iter_child_nodes(node) if isinstance(child, ast.expr)
        )
    return deepest


def _arithmetic(op: type, left: Number, right: Number) -> Number:
    if op is _Add:
        return left + right
    if op is _Sub:
        return left - right
    if op is _Mult:
        return left * right
    if right == 0:
        raise _DivisionByZero
    if type(left) is int and type(right) is int:
        quotient, remainder = divmod(left, right)
        return quotient if remainder == 0 else Fraction(left, right)
    return cast(Fraction, left / right)  # at least one Fraction: exact


def _evaluate(root: ast.expr, literals: list[int]) -> Number:
    """Exact value, post-order, left before right, operator checked after both children.

    Raises ``_NotCountdown``/``_DivisionByZero`` at the step where the reference stops, or
    RecursionError at the first step that would exceed its recursion limit (see module doc).
    """
    values: list[Number] = []
    # (node, depth, children done?)
    stack: list[tuple[ast.expr, int, bool]] = [(root, 0, False)]
    while stack:
        node, depth, done = stack.pop()
        kind = type(node)
        if not done:
            if depth > EVAL_COST_LIMIT:
                raise _too_deep()
            if kind is _Constant:
                value = node.value  # type: ignore[attr-defined]
                if type(value) is not int:  # floats, Ellipsis, … (bool cannot come out of the filter)
                    raise _NotCountdown("non-integer constant")
                if depth + _LITERAL_COST > EVAL_COST_LIMIT:
                    raise _too_deep()
                literals.append(value)
                values.append(value)
            elif kind is _BinOp:
                stack.append((node, depth, True))
                stack.append((node.right, depth + 1, False))  # type: ignore[attr-defined]
                stack.append((node.left, depth + 1, False))  # type: ignore[attr-defined]
            elif kind is _UnaryOp:
                stack.append((node, depth, True))
                stack.append((node.operand, depth + 1, False))  # type: ignore[attr-defined]
            else:
                # Calls (``3(6+9)``), tuples (``()``), …: rejected without visiting their children.
                raise _NotCountdown("unsupported node")
        elif kind is _BinOp:
            op = type(node.op)  # type: ignore[attr-defined]
            if op not in _OP_NAMES:
                raise _NotCountdown("unsupported operator")  # **, //, …
            right = values.pop()
            left = values.pop()
            value = _arithmetic(op, left, right)
            if depth + _ARITHMETIC_COST > EVAL_COST_LIMIT:
                raise _too_deep()
            values.append(value)
        else:
            op = type(node.op)  # type: ignore[attr-defined]
            if op is _USub:
                values.append(-values.pop())
            elif op is not _UAdd:
                raise _NotCountdown("unsupported operator")  # unreachable after the character filter
    return values[0]


def compose_key(name: str, left: str, right: str) -> str:
    """Key of a binary node from its children's keys; shared with the mode-count enumeration."""
    if (name == "add" or name == "mul") and right < left:  # plain code-point string order
        left, right = right, left
    return f"{name}({left},{right})"


def _key(root: ast.expr) -> str:
    """The key (docs/scoring/countdown.md): children of ``+``/``*`` sorted as strings; no flattening.

    Only called on a tree that evaluated, so every node is a literal, ``+``/``-`` or one of
    the four operators; the reference's key walk needs fewer frames than its evaluation.
    """
    keys: list[str] = []
    stack: list[tuple[ast.expr, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        kind = type(node)
        if kind is _BinOp:
            if done:
                right = keys.pop()
                keys.append(compose_key(_OP_NAMES[type(node.op)], keys.pop(), right))  # type: ignore[attr-defined]
            else:
                stack.append((node, True))
                stack.append((node.right, False))  # type: ignore[attr-defined]
                stack.append((node.left, False))  # type: ignore[attr-defined]
        elif kind is _UnaryOp:
            if done:
                if type(node.op) is _USub:  # type: ignore[attr-defined]
                    keys.append(f"neg({keys.pop()})")
            else:
                stack.append((node, True))
                stack.append((node.operand, False))  # type: ignore[attr-defined]
        else:
            keys.append(str(node.value))  # type: ignore[attr-defined]  # plain decimal: ``00`` → ``0``
    return keys[0]


def check_sides(ref: CountdownRef, side_texts: list[str]) -> tuple[str | None, bool]:
    """``(key, evaluable)``: the key of the first verifying side, else whether any side evaluated."""
    evaluable = False
    for side in side_texts:
        if _ALLOWED.fullmatch(side) is None:
            continue
        try:
            body = _parse(side)
        except SyntaxError:
            continue
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


__all__ = ["EVAL_COST_LIMIT", "PARSE_DEPTH_LIMIT", "check_sides", "compose_key", "operand_key"]


def operand_key(numbers: tuple[int, ...], side_texts: list[str]) -> str | None:
    """Key of the first side that uses exactly ``numbers``, whatever its value (0.4.0's legacy
    display key, ``grading.extract_normalized_final_answer``; never used for grading)."""
    wanted = sorted(numbers)
    for side in side_texts:
        if _ALLOWED.fullmatch(side) is None:
            continue
        try:
            body = _parse(side)
        except (SyntaxError, RecursionError, MemoryError):  # runs in the caller: bounded, never raises
            continue
        literals: list[int] = []
        try:
            _evaluate(body, literals)
        except (_DivisionByZero, _NotCountdown, RecursionError):
            continue
        if sorted(literals) == wanted:
            return "countdown:" + _key(body)
    return None
