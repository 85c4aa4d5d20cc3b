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

from sympy import Expr, cancel

from modebench.domains._protocol import MISSING, InvalidReference, Said, either, field_hint, several, shown
from modebench.domains.mathir.algebra import NoTarget, Unsupported, normalise_tree, show, target, to_sympy
from modebench.domains.mathir.expr import (
    MAX_DEPTH,
    MODEL_NODE_LIMIT,
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
    raise InvalidReference(
        "boolean binding" if isinstance(raw, bool) else "bindings must be exact integers or rational strings",
        field_hint(
            f"answer.bindings.{name}",
            raw,
            'a JSON integer or an exact rational string such as "-7" or "3/4" (no floats)',
        ),
    )


def _bindings(raw: Any) -> dict[str, Fraction]:
    if not isinstance(raw, dict) or not 1 <= len(raw) <= 6:
        raise InvalidReference(
            "invalid number of bindings" if isinstance(raw, dict) else "missing bindings",
            field_hint(
                "answer.bindings",
                several(len(raw), "entry", "entries") if isinstance(raw, dict) else raw,
                'an object of 1 to 6 bindings such as {"a": 2, "b": "3/4"}',
            ),
        )
    out: dict[str, Fraction] = {}
    for name, value in raw.items():
        if not (isinstance(name, str) and name in BINDING_NAMES):
            raise InvalidReference(
                "binding names must be single lowercase coefficient symbols",
                field_hint(
                    "answer.bindings",
                    Said(f"the name {shown(name)}"),
                    "names of one letter a-w, y or z (x is the unknown)",
                ),
            )
        out[name] = _binding_value(name, value)
    return out


def _names(symbols: Any) -> str:
    return ", ".join(sorted(symbols)) or "none"


def _grammar(symbols: frozenset[str], nodes: int) -> str:
    """What an expression may be written with, for a hint."""
    return (
        f"add, sub, mul, div and neg over the symbols {', '.join(sorted(symbols))} only "
        f"(no number literals; at most {nodes} nodes, nesting depth at most {MAX_DEPTH})"
    )


def _side_text(answer: dict[str, Any], field_name: str) -> str:
    raw = answer.get(field_name)
    if not isinstance(raw, str) or not raw.strip():
        raise InvalidReference(
            f"answer.{field_name} must be a nonempty string",
            field_hint(
                f"answer.{field_name}",
                answer.get(field_name, MISSING),
                'an expression string such as "add(div(x,a),b)"',
            ),
        )
    return raw


def _side(answer: dict[str, Any], field_name: str, symbols: frozenset[str]) -> Tree:
    raw = answer[field_name]
    where = f"answer.{field_name}"
    try:
        return parse_expr(raw, symbols, REFERENCE_NODE_LIMIT)
    except ExprError as exc:
        # The contract names the reference grammar's trailing-token error apart from the model's.
        message = str(exc).replace("trailing expression", "trailing trusted-expression")
        raise InvalidReference(
            message,
            field_hint(where, raw, "an expression of " + _grammar(symbols, REFERENCE_NODE_LIMIT)),
        ) from None


def _max_steps(answer: dict[str, Any], upper: bool) -> int:
    """``max_steps`` is checked twice, as the contract orders it: whether it is a positive integer
    before the sides and bindings, and (``upper``) whether it is at most 4 after the bindings."""
    if "max_steps" not in answer:
        return DEFAULT_MAX_STEPS
    raw = answer["max_steps"]
    positive = isinstance(raw, int) and not isinstance(raw, bool) and raw >= 1
    if not positive or (upper and raw > 4):
        raise InvalidReference(
            "invalid max_steps" if positive else "answer.max_steps must be a positive integer",
            field_hint("answer.max_steps", raw, "an integer from 1 to 4 (or no such field: 4)"),
        )
    return int(raw)


def command(op: str, arg: Tree, bindings: Mapping[str, Fraction]) -> Command:
    return Command(op, arg, to_sympy(arg), legality_error(op, arg, dict(bindings)))


def _actions(raw: Any, symbols: frozenset[str], bindings: Mapping[str, Fraction]) -> dict[str, Command]:
    if not isinstance(raw, dict) or not 2 <= len(raw) <= 8:
        raise InvalidReference(
            "invalid action menu size" if isinstance(raw, dict) else "missing action menu",
            field_hint(
                "answer.actions",
                several(len(raw), "entry", "entries") if isinstance(raw, dict) else raw,
                'an object of 2 to 8 actions such as {"A": "sub(b)", "B": "div(a)"}',
            ),
        )
    if list(raw) != [chr(ord("A") + i) for i in range(len(raw))]:
        raise InvalidReference(
            "action IDs must be contiguous and ordered",
            field_hint(
                "answer.actions",
                Said(f"the IDs {', '.join(raw)}"),
                ", ".join(chr(ord("A") + i) for i in range(len(raw))),
            ),
        )
    seen: dict[str, str] = {}
    out: dict[str, Command] = {}
    for action_id, text in raw.items():
        where = f"answer.actions.{action_id}"
        if not isinstance(text, str):
            raise InvalidReference(
                "commands must use op(expression) syntax",
                field_hint(where, text, 'a command string such as "sub(b)"'),
            )
        compact = strip_ws(text)
        if compact in seen:
            raise InvalidReference(
                "duplicate action semantics",
                field_hint(
                    where,
                    Said(f"{shown(text)}, the same as action {seen[compact]} once spaces are removed"),
                    "a command unlike every other action",
                ),
            )
        seen[compact] = action_id
        try:
            ((op, arg),) = parse_free_program(text, symbols, 1)
        except ProgramError as exc:
            raise InvalidReference(
                str(exc),
                field_hint(
                    where,
                    text,
                    'one command add(e), sub(e), mul(e) or div(e) such as "sub(b)", e written with '
                    + _grammar(symbols, MODEL_NODE_LIMIT),
                ),
            ) from None
        out[action_id] = command(op, arg, bindings)
    return out


def _unrepresentable(tree: Tree) -> str:
    """The first term of a side's cancelled form outside the printable kinds (``x**2``, ``zoo``)."""
    try:
        show(cancel(to_sympy(tree)))
    except Unsupported as exc:
        return str(exc.args[0])
    return "a term outside the printable kinds"


#: The contract's words for the target failures the reference's own data can produce.
_NO_TARGET = {
    "equation is not linear in x": "initial equation is not uniquely linear",
    "x in a denominator": "initial equation has an x-dependent denominator",
}


def validate_reference(level: int, answer: dict[str, Any]) -> ParsedRef:
    """Domain rules of a MathIR answer object, in the contract's order."""
    verifier = answer.get("verifier")
    version = VERSIONS.get(verifier) if isinstance(verifier, str) else None
    if version is None:
        raise InvalidReference(
            f"unknown verifier {verifier!r}",
            field_hint("answer.verifier", answer.get("verifier", MISSING), either(VERSIONS)),
        )
    if answer.get("mathir_version") != version:
        raise InvalidReference(
            "unsupported menu MathIR version" if verifier == MENU_VERIFIER else "unsupported MathIR version",
            field_hint(
                "answer.mathir_version",
                answer.get("mathir_version", MISSING),
                f"{either([version])} (for verifier {either([verifier])})",
            ),
        )
    _max_steps(answer, upper=False)
    _side_text(answer, "initial_lhs")
    _side_text(answer, "initial_rhs")
    bindings = _bindings(answer.get("bindings"))
    max_steps = _max_steps(answer, upper=True)
    symbols = frozenset(bindings) | {"x"}
    lhs_tree = _side(answer, "initial_lhs", symbols)
    rhs_tree = _side(answer, "initial_rhs", symbols)
    menu = verifier == MENU_VERIFIER
    used = (symbols_of(lhs_tree) | symbols_of(rhs_tree)) - {"x"}
    if used != frozenset(bindings):
        # Every symbol the sides use parsed as bound, so the difference is bindings left unused.
        raise InvalidReference(
            "bindings and initial equation symbols disagree",
            field_hint(
                "answer.bindings",
                Said(
                    f"the binding {_names(frozenset(bindings) - used)}, unused by answer.initial_lhs and answer.initial_rhs"
                ),
                f"exactly the symbols the equation uses: {_names(used)}",
            ),
        )
    lhs = normalise_tree(lhs_tree)
    rhs = normalise_tree(rhs_tree)
    if lhs is None or rhs is None:
        where, tree = ("initial_lhs", lhs_tree) if lhs is None else ("initial_rhs", rhs_tree)
        raise InvalidReference(
            f"normalizer produced unsupported expression {_unrepresentable(tree)}",
            field_hint(
                f"answer.{where}",
                Said(f"{shown(answer[where])}, which cancels to a form holding {_unrepresentable(tree)}"),
                "a side whose cancelled form is a sum or product of x, the bound symbols, rationals and "
                "reciprocals (no power other than -1, no division by zero)",
            ),
        )
    try:
        solution = target(lhs[0], rhs[0], bindings)
    except NoTarget as exc:
        raise InvalidReference(
            _NO_TARGET.get(str(exc), str(exc)),
            field_hint(
                "answer.initial_lhs and answer.initial_rhs",
                Said(f"{answer['initial_lhs']} = {answer['initial_rhs']} ({exc} under answer.bindings)"),
                "an equation linear in x, x in no denominator, with a nonzero x coefficient and a rational solution",
            ),
        ) from None
    # The menu is checked last, once the equation itself is known to be sound (the contract's order).
    actions = _actions(answer.get("actions"), symbols, bindings) if menu else {}
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
