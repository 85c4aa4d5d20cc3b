"""0.4.0's ``modebench.domains.mathir.verifier`` (alias ``modebench.mathir``).

The validators grade through the bounded worker and return a :class:`MathIRValidation` whose
``canonical_key`` and ``solution`` are this implementation's (identical to 0.4.0's keys, checked
by the conformance corpus). 0.4.0's expression objects (:class:`Expr`, :class:`Command`,
:class:`EquationState`) are kept as data classes; the parsers and enumerators that returned them
were internals of 0.4.0's verifier and raise ``NotAvailable`` here (``docs/compatibility.md``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from modebench.compat.domain_modules import bare_candidate, not_available, reference_validator
from modebench.compat.routes import MATHIR_SOLUTION_PREFIX

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


def _validate(program_text: str, spec: Mapping[str, Any], verifier: str) -> MathIRValidation | None:
    from modebench.compat.grading import (
        validated_modebench_exploration_identity,
        validated_modebench_outcome_key,
    )

    if dict(spec).get("verifier") != verifier:
        raise MathIRError(f"spec verifier must be {verifier}")
    if not bare_candidate(program_text):
        return None
    key = validated_modebench_outcome_key(program_text, dict(spec))
    if key is None:
        return None
    identity = validated_modebench_exploration_identity(program_text, dict(spec))
    assert identity is not None  # the same response verified just above
    p, q = identity.endpoint_key.removeprefix(MATHIR_SOLUTION_PREFIX).split("/")
    steps = (
        tuple(step.strip() for step in program_text.strip().split(";"))
        if verifier == MATHIR_MENU_VERIFIER
        else ()
    )
    return MathIRValidation(key, Fraction(int(p), int(q)), (), (), steps, identity.route_signature or "")


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
    """The keys of the given programs that verify against the spec."""
    keys: set[str] = set()
    for program in programs:
        found = _validate(program, spec, str(dict(spec).get("verifier")))
        if found is not None:
            keys.add(found.canonical_key)
    return keys


@not_available
def enumerate_mathir_action_menu_keys(spec: Mapping[str, Any]) -> set[str]:
    """0.4.0: every canonical key of a menu reference's programs."""
    raise NotImplementedError


@not_available
def enumerate_mathir_action_menu_route_signatures(spec: Mapping[str, Any]) -> set[str]:
    """0.4.0: every route signature of a menu reference's programs."""
    raise NotImplementedError


@not_available
def enumerate_mathir_action_menu_validations(spec: Mapping[str, Any]) -> tuple[MathIRValidation, ...]:
    """0.4.0: every verifying menu program's validation."""
    raise NotImplementedError


@not_available
def parse_mathir_action_program(text: str, *, action_ids: Iterable[str], max_steps: int) -> tuple[str, ...]:
    """0.4.0: the action ids of a menu program."""
    raise NotImplementedError


@not_available
def parse_mathir_expression(text: str, *, allowed_symbols: Iterable[str]) -> Expr:
    """0.4.0: one expression as an :class:`Expr`."""
    raise NotImplementedError


@not_available
def parse_mathir_program(text: str, *, allowed_symbols: Iterable[str], max_steps: int) -> tuple[Command, ...]:
    """0.4.0: a free program as :class:`Command` objects."""
    raise NotImplementedError


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
