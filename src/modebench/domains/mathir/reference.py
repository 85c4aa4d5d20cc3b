"""MathIR reference validation with SymPy → an immutable :class:`ParsedRef`.

Everything that depends only on the reference is computed here once: the normalised initial
state and its key-string, the exact target, and for menus every action's parsed command, SymPy
argument and (state-independent) legality. ``ParsedRef.memo`` caches whole-program outcomes; it
is keyed by immutable program values and only ever grows with deterministic results.

The checks before normalisation and the menu's parsing are :mod:`.rules` (no SymPy), shared with
the table-only path (:mod:`.tabled`); this module is the SymPy path every reference the table
does not decide takes, and the one the table-only path is compared with.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from types import MappingProxyType
from typing import Any

from sympy import Expr, cancel

from modebench.domains.mathir.algebra import NoTarget, Unsupported, normalise_tree, show, target, to_sympy
from modebench.domains.mathir.expr import Tree, legality_error
from modebench.domains.mathir.rules import (
    ALGEBRA_VERIFIER,
    MENU_VERIFIER,
    VERSIONS,
    no_target,
    parse_actions,
    read_header,
    unrepresentable_side,
)


@dataclass(frozen=True)
class Command:
    """One executable step: operator, raw argument, its SymPy form and its legality verdict."""

    op: str
    arg: Tree
    arg_expr: Expr
    illegal: str | None  # reason the step is illegal under the bindings, or None


@dataclass(frozen=True)
class ParsedRef:
    menu: bool
    prefix: str  # "mathir:<version>:"
    bindings: Mapping[str, Fraction]
    symbols: frozenset[str]  # binding names plus "x"
    max_steps: int
    lhs: Expr
    rhs: Expr
    start_key: str
    target: Fraction
    actions: Mapping[str, Command]  # empty for the free-program flavour
    action_ids: frozenset[str]
    memo: dict[Any, tuple[bool, str]] = field(default_factory=dict, compare=False, hash=False, repr=False)


def command(op: str, arg: Tree, bindings: Mapping[str, Fraction]) -> Command:
    return Command(op, arg, to_sympy(arg), legality_error(op, arg, dict(bindings)))


def _unrepresentable(tree: Tree) -> str:
    """The first term of a side's cancelled form outside the printable kinds (``x**2``, ``zoo``)."""
    try:
        show(cancel(to_sympy(tree)))
    except Unsupported as exc:
        return str(exc.args[0])
    return "a term outside the printable kinds"


def validate_reference(level: int, answer: dict[str, Any]) -> ParsedRef:
    """Domain rules of a MathIR answer object, in the contract's order."""
    header = read_header(answer)
    bindings = header.bindings
    lhs = normalise_tree(header.lhs)
    rhs = normalise_tree(header.rhs)
    if lhs is None or rhs is None:
        where, tree = ("initial_lhs", header.lhs) if lhs is None else ("initial_rhs", header.rhs)
        unrepresentable_side(answer, where, _unrepresentable(tree))
    try:
        solution = target(lhs[0], rhs[0], bindings)
    except NoTarget as exc:
        no_target(answer, str(exc))
    # The menu is checked last, once the equation itself is known to be sound (the contract's order).
    actions = parse_actions(answer.get("actions"), header.symbols, bindings, command) if header.menu else {}
    return ParsedRef(
        menu=header.menu,
        prefix=f"mathir:{header.version}:",
        bindings=MappingProxyType(bindings),
        symbols=header.symbols,
        max_steps=header.max_steps,
        lhs=lhs[0],
        rhs=rhs[0],
        start_key=f"eq({lhs[1]},{rhs[1]})",
        target=solution,
        actions=MappingProxyType(actions),
        action_ids=frozenset(actions),
    )


__all__ = [
    "ALGEBRA_VERIFIER",
    "MENU_VERIFIER",
    "VERSIONS",
    "Command",
    "ParsedRef",
    "command",
    "validate_reference",
]
