"""A precomputed, exact memo of ``cancel`` for the released MathIR families (``transitions.json``).

``cancel`` costs milliseconds per call and a fresh worker would otherwise pay it for every
distinct transition it meets. Since a normalised side's printed key determines the side itself
(rebuilding a printed key with SymPy's own constructors gives back the identical object, spec
§3.4 d — checked for every entry when the table is built), a transition is fully determined by
``(printed side, operator, printed argument)``, and so is its printed result. The table holds
those results for every transition the support search of the generator's family templates
visits (keys never see the bindings, so every reference of a family shares them), plus the
families' initial sides; it is used only under the SymPy version that built it, and anything
not in it is computed by ``cancel`` as before. See ``docs/performance.md``.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

import sympy
from sympy import Add, Expr, Integer, Mul, Pow, Rational, Symbol

PATH = Path(__file__).with_name("transitions.json")
SCHEMA = "modebench-mathir-transitions-v1"
MISS = object()  # not in the table: compute it

_TOKEN_SPLIT = ",()"


class _Table:
    def __init__(self) -> None:
        self.sides: dict[str, str | None] = {}
        self.transitions: dict[str, str | None] = {}
        #: For each transition whose result is not representable (None above): the first term
        #: outside the tree kinds, as ``algebra.unrepresentable_term`` computes it.
        self.terms: dict[str, str] = {}


@lru_cache(maxsize=1)
def _load() -> _Table:
    table = _Table()
    try:
        raw: Any = json.loads(PATH.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return table
    if not isinstance(raw, dict) or raw.get("schema") != SCHEMA or raw.get("sympy") != sympy.__version__:
        return table  # built under another SymPy: its cancel might print differently
    table.sides = raw["sides"]
    table.transitions = raw["transitions"]
    terms = raw.get("unsupported_terms")
    table.terms = terms if isinstance(terms, dict) else {}
    return table


def transition_key(side: str, op: str, arg: str) -> str:
    return f"{side}|{op}|{arg}"


def side_key(tree_text: str) -> str:
    return tree_text


def lookup_transition(side: str, op: str, arg: str) -> Any:
    """The printed result (None: not representable) or MISS."""
    return _load().transitions.get(transition_key(side, op, arg), MISS)


def lookup_term(side: str, op: str, arg: str) -> str | None:
    """The unrepresentable term of a transition the table holds as not representable, or None."""
    return _load().terms.get(transition_key(side, op, arg))


def lookup_side(tree_text: str) -> Any:
    return _load().sides.get(side_key(tree_text), MISS)


def tree_text(tree: Any) -> str:
    """The raw tree in the expression language's own syntax (``add(mul(a,x),b)``)."""
    if isinstance(tree, str):
        return tree
    return str(tree[0]) + "(" + ",".join(tree_text(child) for child in tree[1:]) + ")"


def _tokens(text: str) -> list[str]:
    out: list[str] = []
    current = ""
    for char in text:
        if char in _TOKEN_SPLIT:
            if current:
                out.append(current)
                current = ""
            out.append(char)
        else:
            current += char
    if current:
        out.append(current)
    return out


@lru_cache(maxsize=32768)
def rebuild(printed: str) -> Expr:
    """The SymPy object a printed key stands for, built with SymPy's evaluating constructors."""
    tokens = _tokens(printed)
    position = 0

    def parse() -> Expr:
        nonlocal position
        token = tokens[position]
        position += 1
        if position < len(tokens) and tokens[position] == "(":
            position += 1
            parts = [parse()]
            while tokens[position] == ",":
                position += 1
                parts.append(parse())
            position += 1  # ")"
            if token == "add":
                return Add(*parts)
            if token == "mul":
                return Mul(*parts)
            if token == "inv":
                return Pow(parts[0], -1)
            if token == "rat":
                return Rational(parts[0], parts[1])
            raise ValueError(f"unknown node {token!r}")
        if token.lstrip("-").isdigit():
            return Integer(int(token))
        return Symbol(token)

    expr = parse()
    if position != len(tokens):
        raise ValueError(f"trailing tokens in {printed!r}")
    return expr


__all__ = [
    "MISS",
    "PATH",
    "SCHEMA",
    "lookup_side",
    "lookup_term",
    "lookup_transition",
    "rebuild",
    "tree_text",
]
