"""The MathIR expression language: tokenizer, recursive-descent parser, exact evaluation.

Raw (un-normalised) expression trees are plain immutable Python values so they can key caches:
a symbol is its one-letter name (``"a"``, ``"x"``); an operator node is a tuple
``(op, child)`` for ``neg`` or ``(op, left, right)`` for ``add``/``sub``/``mul``/``div``.

The same grammar serves reference sides (node limit 31), menu action arguments and free-program
arguments (node limit 11). There are no numeric literals: the tokenizer cannot produce one.
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any

Tree = str | tuple[Any, ...]  # symbol name | (op, *children)

BINARY_OPS = frozenset({"add", "sub", "mul", "div"})
OPERATORS = BINARY_OPS | {"neg"}
MAX_DEPTH = 6
MODEL_NODE_LIMIT = 11
REFERENCE_NODE_LIMIT = 31

_TOKENS_WHOLE = re.compile(r"(?:[A-Za-z][A-Za-z0-9_]*|[(),;])+")
_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9_]*|[(),;]")


class ExprError(Exception):
    """The text is outside the expression grammar (the caller decides malformed vs invalid)."""


class EvalError(Exception):
    """Exact evaluation failed: ``x`` has no value, or a divisor is zero."""


def strip_ws(text: str) -> str:
    """Delete every Unicode whitespace character (``str.split`` uses the same class as ``\\s``)."""
    return "".join(text.split())


def tokenize(text: str) -> list[str]:
    compact = strip_ws(text)
    if not compact:
        raise ExprError("empty MathIR text")
    # A full match of the token alphabet guarantees that findall's maximal munch covers everything.
    if _TOKENS_WHOLE.fullmatch(compact) is None:
        raise ExprError("unsupported MathIR character or numeric literal")
    return _TOKEN.findall(compact)


class _Parser:
    def __init__(self, tokens: list[str], symbols: frozenset[str]) -> None:
        self.tokens = tokens
        self.pos = 0
        self.symbols = symbols
        self.nodes = 0

    def _peek(self) -> str | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def _take(self) -> str:
        token = self._peek()
        if token is None:
            raise ExprError("unexpected end of expression")
        self.pos += 1
        return token

    def _expect(self, token: str) -> None:
        if self._take() != token:
            raise ExprError(f"expected {token!r}")

    def parse(self, depth: int) -> Tree:
        if depth > MAX_DEPTH:
            raise ExprError("expression nesting is too deep")
        token = self._take()
        if not (token[0].isascii() and token[0].isalpha()):
            raise ExprError("expected a symbol or operator")
        self.nodes += 1
        if self._peek() == "(":
            if token not in OPERATORS:
                raise ExprError(f"unsupported operator {token!r}")
            self.pos += 1
            first = self.parse(depth + 1)
            if token == "neg":
                self._expect(")")
                return ("neg", first)
            self._expect(",")
            second = self.parse(depth + 1)
            self._expect(")")
            return (token, first, second)
        if token not in self.symbols:
            raise ExprError(f"unknown symbol {token!r}")
        return token


def parse_expr(text: str, symbols: frozenset[str], node_limit: int) -> Tree:
    """Parse one expression; ``symbols`` are the allowed symbol names (bindings plus ``x``)."""
    parser = _Parser(tokenize(text), symbols)
    tree = parser.parse(0)
    if parser.pos != len(parser.tokens):
        raise ExprError("trailing expression tokens")
    if parser.nodes > node_limit:
        raise ExprError("expression is too large")
    return tree


def symbols_of(tree: Tree) -> frozenset[str]:
    if isinstance(tree, str):
        return frozenset((tree,))
    out: frozenset[str] = frozenset()
    for child in tree[1:]:
        out |= symbols_of(child)
    return out


def evaluate(tree: Tree, bindings: dict[str, Fraction]) -> Fraction:
    """Exact value of a raw tree; ``x`` or a zero divisor raise EvalError."""
    if isinstance(tree, str):
        try:
            return bindings[tree]
        except KeyError:
            raise EvalError(f"symbol {tree!r} has no value") from None
    op = tree[0]
    if op == "neg":
        return -evaluate(tree[1], bindings)
    left = evaluate(tree[1], bindings)
    right = evaluate(tree[2], bindings)
    if op == "add":
        return left + right
    if op == "sub":
        return left - right
    if op == "mul":
        return left * right
    if right == 0:
        raise EvalError("division by zero")
    return left / right


def divisors(tree: Tree) -> list[Tree]:
    """Divisors of every ``div`` node, pre-order (the node itself before its children)."""
    if isinstance(tree, str):
        return []
    out: list[Tree] = []
    if tree[0] == "div":
        out.append(tree[2])
    for child in tree[1:]:
        out.extend(divisors(child))
    return out


def legality_error(op: str, arg: Tree, bindings: dict[str, Fraction]) -> str | None:
    """Checks (a) and (b) of the execution semantics; the reason a step is illegal, or None.

    They depend only on the command and the bindings, never on the current state, so menu
    actions are checked once per reference.
    """
    for divisor in divisors(arg):
        if "x" in symbols_of(divisor):
            return "x-dependent denominators are not supported"
        try:
            if evaluate(divisor, bindings) == 0:
                return "division by zero in command expression"
        except EvalError:
            return "division by zero"
    if op in ("mul", "div"):
        if "x" in symbols_of(arg):
            return "multiplication and division by x are not reversible"
        try:
            if evaluate(arg, bindings) == 0:
                return "multiplication and division require a nonzero argument"
        except EvalError:
            return "division by zero"
    return None
