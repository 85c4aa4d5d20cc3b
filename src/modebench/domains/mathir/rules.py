"""MathIR reference rules that need no SymPy, shared by the SymPy path and the table-only path.

Everything a reference check does before the initial sides are normalised (verifier, version,
``max_steps``, sides as text, bindings, the expression grammar, the symbols' agreement), the
menu's parsing (which never normalises anything), and the contract's words for the failures
after normalisation. :mod:`.reference` (SymPy) and :mod:`.tabled` (the transition table) both
run exactly this code, in the contract's order, so their errors cannot drift apart.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any, NamedTuple, NoReturn, TypeVar

from modebench.domains._protocol import MISSING, InvalidReference, Said, either, field_hint, several, shown
from modebench.domains.mathir.expr import (
    MAX_DEPTH,
    MODEL_NODE_LIMIT,
    REFERENCE_NODE_LIMIT,
    ExprError,
    Tree,
    parse_expr,
    strip_ws,
    symbols_of,
)
from modebench.domains.mathir.parse import ProgramError, parse_free_program

C = TypeVar("C")

MENU_VERIFIER = "mathir_action_menu"
ALGEBRA_VERIFIER = "mathir_algebra"
VERSIONS = {MENU_VERIFIER: "linear-menu-v1", ALGEBRA_VERIFIER: "linear-v0"}
BINDING_NAMES = frozenset("abcdefghijklmnopqrstuvwyz")
DEFAULT_MAX_STEPS = 4
MEMO_LIMIT = 8192

_BINDING_TEXT = re.compile(r"-?\d+(?:/[1-9]\d*)?")


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


def parse_actions(
    raw: Any,
    symbols: frozenset[str],
    bindings: Mapping[str, Fraction],
    make: Callable[[str, Tree, Mapping[str, Fraction]], C],
) -> dict[str, C]:
    """The menu in the contract's order of checks; ``make`` builds each parsed command."""
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
    out: dict[str, C] = {}
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
        out[action_id] = make(op, arg, bindings)
    return out


#: The contract's words for the target failures the reference's own data can produce.
_NO_TARGET = {
    "equation is not linear in x": "initial equation is not uniquely linear",
    "x in a denominator": "initial equation has an x-dependent denominator",
}


class Header(NamedTuple):
    """A reference that passed every check before normalisation."""

    verifier: str
    version: str
    menu: bool
    bindings: dict[str, Fraction]
    max_steps: int
    symbols: frozenset[str]
    lhs: Tree
    rhs: Tree


def read_header(answer: dict[str, Any]) -> Header:
    """The checks before the sides are normalised, in the contract's order."""
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
    return Header(
        str(verifier), version, verifier == MENU_VERIFIER, bindings, max_steps, symbols, lhs_tree, rhs_tree
    )


def unrepresentable_side(answer: dict[str, Any], where: str, term: str) -> NoReturn:
    """Raise the error for an initial side whose cancelled form holds ``term`` (``where``: the field)."""
    raise InvalidReference(
        f"normalizer produced unsupported expression {term}",
        field_hint(
            f"answer.{where}",
            Said(f"{shown(answer[where])}, which cancels to a form holding {term}"),
            "a side whose cancelled form is a sum or product of x, the bound symbols, rationals and "
            "reciprocals (no power other than -1, no division by zero)",
        ),
    )


def no_target(answer: dict[str, Any], reason: str) -> NoReturn:
    """Raise the error for an initial equation without a target (``reason``: ``NoTarget``'s text)."""
    raise InvalidReference(
        _NO_TARGET.get(reason, reason),
        field_hint(
            "answer.initial_lhs and answer.initial_rhs",
            Said(f"{answer['initial_lhs']} = {answer['initial_rhs']} ({reason} under answer.bindings)"),
            "an equation linear in x, x in no denominator, with a nonzero x coefficient and a rational solution",
        ),
    ) from None  # raised while handling the solver's own exception, which says nothing more


__all__ = [
    "ALGEBRA_VERIFIER",
    "BINDING_NAMES",
    "DEFAULT_MAX_STEPS",
    "MEMO_LIMIT",
    "MENU_VERIFIER",
    "VERSIONS",
    "Header",
    "no_target",
    "parse_actions",
    "read_header",
    "unrepresentable_side",
]
