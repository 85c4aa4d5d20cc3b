"""MathIR reference validation → an immutable :class:`ParsedRef`.

Everything that depends only on the reference is computed here once: the normalised initial
state and its key-string, the exact target, and for menus every action's parsed command, SymPy
argument and (state-independent) legality. ``ParsedRef.memo`` caches whole-program outcomes; it
is keyed by immutable program values and only ever grows with deterministic results.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from types import MappingProxyType
from typing import Any

from sympy import Expr

from modebench.domains._protocol import MISSING, InvalidReference, shown
from modebench.domains.mathir.algebra import NoTarget, normalise_tree, target, to_sympy
from modebench.domains.mathir.expr import (
    REFERENCE_NODE_LIMIT,
    ExprError,
    Tree,
    legality_error,
    parse_expr,
    strip_ws,
    symbols_of,
)
from modebench.domains.mathir.parse import ProgramError, parse_free_program

MENU_VERIFIER = "mathir_action_menu"
ALGEBRA_VERIFIER = "mathir_algebra"
VERSIONS = {MENU_VERIFIER: "linear-menu-v1", ALGEBRA_VERIFIER: "linear-v0"}
BINDING_NAMES = frozenset("abcdefghijklmnopqrstuvwyz")
DEFAULT_MAX_STEPS = 4
MEMO_LIMIT = 8192

_BINDING_TEXT = re.compile(r"-?\d+(?:/[1-9]\d*)?")


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


def _binding_value(name: str, raw: Any) -> Fraction:
    if isinstance(raw, int) and not isinstance(raw, bool):
        return Fraction(raw)
    if isinstance(raw, str):
        text = raw.strip()
        if _BINDING_TEXT.fullmatch(text):
            numerator, _, denominator = text.partition("/")
            try:
                return Fraction(int(numerator), int(denominator) if denominator else 1)
            except ValueError:  # digit-count limit of int()
                pass
    raise InvalidReference(f"binding {name!r} must be an integer or an exact rational string")


def _bindings(raw: Any) -> dict[str, Fraction]:
    if not isinstance(raw, dict) or not 1 <= len(raw) <= 6:
        raise InvalidReference("bindings must be an object with 1..6 entries")
    out: dict[str, Fraction] = {}
    for name, value in raw.items():
        if not (isinstance(name, str) and name in BINDING_NAMES):
            raise InvalidReference(f"binding name {name!r} must be one letter a-w, y or z")
        out[name] = _binding_value(name, value)
    return out


def _side(answer: dict[str, Any], field_name: str, symbols: frozenset[str]) -> Tree:
    raw = answer.get(field_name)
    if not isinstance(raw, str) or not raw.strip():
        raise InvalidReference(f"{field_name} must be a non-empty string")
    try:
        return parse_expr(raw, symbols, REFERENCE_NODE_LIMIT)
    except ExprError as exc:
        raise InvalidReference(f"{field_name}: {exc}") from None


def _max_steps(answer: dict[str, Any]) -> int:
    if "max_steps" not in answer:
        return DEFAULT_MAX_STEPS
    raw = answer["max_steps"]
    if not isinstance(raw, int) or isinstance(raw, bool) or not 1 <= raw <= 4:
        raise InvalidReference(
            "max_steps must be an integer in 1..4",
            f"answer.max_steps: found {shown(raw)}, expected an integer from 1 to 4 (or no such field: 4)",
        )
    return raw


def command(op: str, arg: Tree, bindings: Mapping[str, Fraction]) -> Command:
    return Command(op, arg, to_sympy(arg), legality_error(op, arg, dict(bindings)))


def _actions(raw: Any, symbols: frozenset[str], bindings: Mapping[str, Fraction]) -> dict[str, Command]:
    if not isinstance(raw, dict) or not 2 <= len(raw) <= 8:
        raise InvalidReference(
            "actions must be an object with 2..8 entries",
            f'answer.actions: found {shown(raw)}, expected an object of 2 to 8 actions such as {{"A": "sub(b)", "B": "div(a)"}}',
        )
    if list(raw) != [chr(ord("A") + i) for i in range(len(raw))]:
        raise InvalidReference(
            "action IDs must be A, B, ... in order",
            f"answer.actions: found the IDs {', '.join(raw)}, expected {', '.join(chr(ord('A') + i) for i in range(len(raw)))}",
        )
    seen: set[str] = set()
    out: dict[str, Command] = {}
    for action_id, text in raw.items():
        if not isinstance(text, str):
            raise InvalidReference(f"action {action_id} must be a string")
        compact = strip_ws(text)
        if compact in seen:
            raise InvalidReference(f"action {action_id} duplicates another action")
        seen.add(compact)
        try:
            ((op, arg),) = parse_free_program(text, symbols, 1)
        except ProgramError as exc:
            raise InvalidReference(f"action {action_id}: {exc}") from None
        out[action_id] = command(op, arg, bindings)
    return out


def validate_reference(level: int, answer: dict[str, Any]) -> ParsedRef:
    """Domain rules of a MathIR answer object, in the contract's order."""
    verifier = answer.get("verifier")
    version = VERSIONS.get(verifier) if isinstance(verifier, str) else None
    if version is None:
        raise InvalidReference(
            f"unknown verifier {verifier!r}",
            f"answer.verifier: found {shown(verifier)}, expected {' or '.join(map(repr, VERSIONS))}",
        )
    if answer.get("mathir_version") != version:
        raise InvalidReference(
            f"mathir_version must be {version!r}",
            f"answer.mathir_version: found {shown(answer.get('mathir_version', MISSING))}, "
            f"expected {version!r} (for verifier {verifier!r})",
        )
    bindings = _bindings(answer.get("bindings"))
    symbols = frozenset(bindings) | {"x"}
    lhs_tree = _side(answer, "initial_lhs", symbols)
    rhs_tree = _side(answer, "initial_rhs", symbols)
    max_steps = _max_steps(answer)
    menu = verifier == MENU_VERIFIER
    actions = _actions(answer.get("actions"), symbols, bindings) if menu else {}
    if (symbols_of(lhs_tree) | symbols_of(rhs_tree)) - {"x"} != frozenset(bindings):
        raise InvalidReference("initial equation must use exactly the bound symbols")
    lhs = normalise_tree(lhs_tree)
    rhs = normalise_tree(rhs_tree)
    if lhs is None or rhs is None:
        raise InvalidReference("initial equation is not representable after normalisation")
    try:
        solution = target(lhs[0], rhs[0], bindings)
    except NoTarget as exc:
        raise InvalidReference(str(exc)) from None
    return ParsedRef(
        menu=menu,
        prefix=f"mathir:{version}:",
        bindings=MappingProxyType(bindings),
        symbols=symbols,
        max_steps=max_steps,
        lhs=lhs[0],
        rhs=rhs[0],
        start_key=f"eq({lhs[1]},{rhs[1]})",
        target=solution,
        actions=MappingProxyType(actions),
        action_ids=frozenset(actions),
    )


__all__ = ["ALGEBRA_VERIFIER", "MENU_VERIFIER", "Command", "ParsedRef", "command", "validate_reference"]
