"""0.4.0's ``modebench.domains.mathir.verifier`` (alias ``modebench.mathir``).

The validators grade through the bounded worker; once a program verified, its 0.4.0 objects
(:class:`Command` per step, the :class:`EquationState` after each step, the route signature) are
derived here by the same ``cancel`` the grader applies, for this public call only. The parsers
and the menu enumeration run in the calling process over this implementation's grammar and
search (``docs/compatibility.md``); ``ops/fidelity/surface_vs_040.py`` compares all of them with 0.4.0.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from modebench.compat.backends import backend
from modebench.compat.domain_modules import bare_candidate, parsed_reference, reference_validator

#: Any level but 1 reads a reference without level-specific bounds (0.4.0's helpers had no level).
_LEVEL = 2

MATHIR_VERIFIER = "mathir_algebra"
MATHIR_MENU_VERIFIER = "mathir_action_menu"
MATHIR_VERSION = "linear-v0"
MATHIR_MENU_VERSION = "linear-menu-v1"
MATHIR_ROUTE_VERSION = "linear-route-v1"


class MathIRError(ValueError):
    """A MathIR program or spec outside the grammar."""


@dataclass(frozen=True)
class Expr:
    op: str
    args: tuple[Expr, ...] = ()
    value: str | Fraction | None = None


@dataclass(frozen=True)
class Command:
    op: str
    argument: Expr


@dataclass(frozen=True)
class EquationState:
    lhs: Expr
    rhs: Expr


@dataclass(frozen=True)
class MathIRValidation:
    canonical_key: str
    solution: Fraction
    commands: tuple[Command, ...]
    states: tuple[EquationState, ...]
    action_ids: tuple[str, ...]
    route_signature: str


def _reference(spec: Mapping[str, Any]) -> Any:
    """The parsed reference (our own validation; its messages are 0.4.0's), or MathIRError."""
    return parsed_reference("mathir", spec, MathIRError, _LEVEL)


def _raw_expr(tree: Any) -> Expr:
    """A parsed (un-normalised) expression as 0.4.0's :class:`Expr`: symbols and binary/unary ops."""
    if isinstance(tree, str):
        return Expr("symbol", (), tree)
    return Expr(tree[0], tuple(_raw_expr(child) for child in tree[1:]))


def _normal_expr(value: Any) -> Expr:
    """A normalised SymPy side as 0.4.0's :class:`Expr`: n-ary sums and products folded left."""
    if value.is_Symbol:
        return Expr("symbol", (), str(value.name))
    if value.is_Rational:
        return Expr("const", (), Fraction(int(value.p), int(value.q)))
    if value.is_Add or value.is_Mul:
        op = "add" if value.is_Add else "mul"
        parts = [_normal_expr(arg) for arg in value.args]
        folded = parts[0]
        for part in parts[1:]:
            folded = Expr(op, (folded, part))
        return folded
    if value.is_Pow and value.exp == -1:
        return Expr("inv", (_normal_expr(value.base),))
    raise MathIRError(f"normalizer produced unsupported expression {value!r}")


def _states(
    parsed: Any, spec: Mapping[str, Any], steps: Sequence[tuple[str, Any]]
) -> tuple[EquationState, ...]:
    """The equation after each step, by the same ``cancel`` the grader applies (computed here,
    for this public call only: the grading path keeps printed keys, never these objects)."""
    from modebench.domains.mathir.algebra import compute_side, compute_transition, to_sympy
    from modebench.domains.mathir.expr import REFERENCE_NODE_LIMIT, parse_expr

    sides = []
    for name in ("initial_lhs", "initial_rhs"):
        found = compute_side(parse_expr(str(spec[name]), parsed.symbols, REFERENCE_NODE_LIMIT))
        assert found is not None  # the reference validated
        sides.append(found[0])
    lhs, rhs = sides
    states: list[EquationState] = []
    for op, arg in steps:
        arg_expr = to_sympy(arg)
        new_lhs = compute_transition(lhs, op, arg_expr)
        new_rhs = compute_transition(rhs, op, arg_expr)
        assert new_lhs is not None and new_rhs is not None  # the program verified
        lhs, rhs = new_lhs[0], new_rhs[0]
        states.append(EquationState(_normal_expr(lhs), _normal_expr(rhs)))
    return tuple(states)


def _validation(
    parsed: Any,
    spec: Mapping[str, Any],
    key: str,
    steps: Sequence[tuple[str, Any]],
    action_ids: tuple[str, ...],
) -> MathIRValidation:
    from modebench.compat.routes import mathir_route

    route = mathir_route(parsed.start_key, sorted(parsed.symbols - {"x"}), list(steps))
    commands = tuple(Command(op, _raw_expr(arg)) for op, arg in steps)
    return MathIRValidation(key, parsed.target, commands, _states(parsed, spec, steps), action_ids, route)


def _steps(parsed: Any, program: str) -> tuple[tuple[tuple[str, Any], ...], tuple[str, ...]]:
    from modebench.domains.mathir.parse import parse_free_program, parse_menu_program

    if parsed.menu:
        ids = parse_menu_program(program, parsed.action_ids, parsed.max_steps)
        return tuple((parsed.actions[i].op, parsed.actions[i].arg) for i in ids), ids
    return parse_free_program(program, parsed.symbols, parsed.max_steps), ()


def _validate(program_text: str, spec: Mapping[str, Any], verifier: str) -> MathIRValidation | None:
    from modebench.compat.grading import validated_modebench_outcome_key
    from modebench.domains.mathir.parse import candidate

    if not isinstance(spec, Mapping):
        raise AttributeError(f"'{type(spec).__name__}' object has no attribute 'get'")
    if spec.get("verifier") != verifier or not bare_candidate(program_text):
        return None
    # The verdict and key come from the bounded worker, as for every graded response; the
    # 0.4.0 objects (commands, states, route) are derived here only once the program verified.
    key = validated_modebench_outcome_key(program_text, dict(spec))
    if key is None:
        return None
    parsed = _reference(spec)
    steps, ids = _steps(parsed, candidate(program_text) or "")
    return _validation(parsed, spec, key, steps, ids)


@backend("mathir")  # looked up at call time by ``verifier_worker.guarded_handle``
def _execute_mathir_commands(program_text: str, spec: Mapping[str, Any]) -> MathIRValidation:
    """Run a program (free-form or menu, by the spec's verifier) against its reference.

    0.4.0's name for the step that applies a program's commands; its signature there took
    0.4.0's parsed objects, here the program text and the reference (docs/compatibility.md).
    Raises ``MathIRError`` when the program does not isolate the solution.
    """
    found = _validate(program_text, spec, str(spec.get("verifier")))
    if found is None:
        raise MathIRError("program does not isolate the solution")
    return found


def validate_mathir_algebra(program_text: str, spec: Mapping[str, Any]) -> MathIRValidation | None:
    """Validate a free-form MathIR program; None when it does not isolate the solution."""
    return _validate(program_text, spec, MATHIR_VERIFIER)


def validate_mathir_action_menu(program_text: str, spec: Mapping[str, Any]) -> MathIRValidation | None:
    """Validate a menu program (action ids separated by ``;``); None when it does not verify."""
    return _validate(program_text, spec, MATHIR_MENU_VERIFIER)


def mathir_command_histogram(validation: MathIRValidation) -> Counter[str]:
    """How often each command operator occurs in a validation's program."""
    return Counter(command.op for command in validation.commands)


def certified_mathir_strategy_keys(spec: Mapping[str, Any], programs: Iterable[str]) -> set[str]:
    """The keys of free programs certified for a ``mathir_algebra`` spec; MathIRError names the
    first program that does not verify (a certified strategy must)."""
    keys: set[str] = set()
    for program in programs:
        found = validate_mathir_algebra(program, spec)
        if found is None:
            raise MathIRError(f"certified program failed validation: {program}")
        keys.add(found.canonical_key)
    return keys


def enumerate_mathir_action_menu_validations(spec: Mapping[str, Any]) -> tuple[MathIRValidation, ...]:
    """Every admitted canonical key of a menu reference, in key order, each with the first
    witness program of the depth-first search over the menu (the search that certifies
    ``valid_mode_count``); runs in this process, as in 0.4.0."""
    from modebench.domains.mathir.check import support

    if not isinstance(spec, Mapping):
        raise AttributeError(f"'{type(spec).__name__}' object has no attribute 'get'")
    if spec.get("verifier") != MATHIR_MENU_VERIFIER:
        raise MathIRError("wrong menu verifier")
    parsed = _reference(spec)
    found = support(parsed)
    out = []
    for key in sorted(found):
        ids = found[key]
        steps = tuple((parsed.actions[i].op, parsed.actions[i].arg) for i in ids)
        out.append(_validation(parsed, spec, key, steps, ids))
    return tuple(out)


def enumerate_mathir_action_menu_keys(spec: Mapping[str, Any]) -> set[str]:
    """Every canonical key a menu reference admits within its step bound."""
    return {found.canonical_key for found in enumerate_mathir_action_menu_validations(spec)}


def enumerate_mathir_action_menu_route_signatures(spec: Mapping[str, Any]) -> set[str]:
    """The route signatures of the admitted keys' witness programs."""
    return {found.route_signature for found in enumerate_mathir_action_menu_validations(spec)}


def _program_error(function: Any, *args: Any) -> Any:
    from modebench.domains.mathir.expr import ExprError
    from modebench.domains.mathir.parse import ProgramError

    try:
        return function(*args)
    except (ProgramError, ExprError) as exc:
        raise MathIRError(str(exc)) from None


def parse_mathir_action_program(text: str, *, action_ids: Iterable[str], max_steps: int) -> tuple[str, ...]:
    """The action ids of a menu program (``C;F``): 1..max_steps ids, each one of ``action_ids``."""
    from modebench.domains.mathir.parse import parse_menu_program

    result: tuple[str, ...] = _program_error(parse_menu_program, text, frozenset(action_ids), max_steps)
    return result


def parse_mathir_expression(text: str, *, allowed_symbols: Iterable[str]) -> Expr:
    """One expression (a program argument's limits: depth 6, 11 nodes) as an :class:`Expr`."""
    from modebench.domains.mathir.expr import MODEL_NODE_LIMIT, parse_expr

    return _raw_expr(_program_error(parse_expr, text, frozenset(allowed_symbols), MODEL_NODE_LIMIT))


def parse_mathir_program(text: str, *, allowed_symbols: Iterable[str], max_steps: int) -> tuple[Command, ...]:
    """A free program (``sub(b);div(a)``) as :class:`Command` objects."""
    from modebench.domains.mathir.parse import parse_free_program

    steps = _program_error(parse_free_program, text, frozenset(allowed_symbols), max_steps)
    return tuple(Command(op, _raw_expr(arg)) for op, arg in steps)


validate_reference = reference_validator("mathir")

__all__ = [
    "Command",
    "EquationState",
    "Expr",
    "Iterable",
    "MATHIR_MENU_VERIFIER",
    "MATHIR_MENU_VERSION",
    "MATHIR_ROUTE_VERSION",
    "MATHIR_VERIFIER",
    "MATHIR_VERSION",
    "Mapping",
    "MathIRError",
    "MathIRValidation",
    "certified_mathir_strategy_keys",
    "enumerate_mathir_action_menu_keys",
    "enumerate_mathir_action_menu_route_signatures",
    "enumerate_mathir_action_menu_validations",
    "mathir_command_histogram",
    "parse_mathir_action_program",
    "parse_mathir_expression",
    "parse_mathir_program",
    "validate_mathir_action_menu",
    "validate_mathir_algebra",
    "validate_reference",
]


def __getattr__(name: str) -> Any:
    # 0.4.0's module imported SymPy at its top, so ``modebench.mathir.sympy`` was reachable; here
    # SymPy is loaded only when something asks for it (docs/performance.md, "MathIR without SymPy").
    if name == "sympy":
        import sympy  # noqa: PLC0415 - loaded on first use

        return sympy
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
