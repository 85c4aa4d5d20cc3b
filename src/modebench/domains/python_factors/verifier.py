"""0.4.0's ``modebench.domains.python_factors.verifier`` (alias ``modebench.python_modebench``)."""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from modebench.compat.backends import backend
from modebench.compat.domain_modules import PythonFactorValidation, reference_validator
from modebench.compat.routes import PythonModeBenchError, python_factor_route_signature
from modebench.domains._protocol import InvalidReference, Malformed
from modebench.domains.python_factors.language import parse_lambda
from modebench.domains.python_factors.reference import VERIFIER as PYTHON_FACTOR_VERIFIER
from modebench.domains.python_factors.reference import mode_count as python_factor_mode_count
from modebench.domains.python_factors.reference import proper_divisors
from modebench.domains.python_factors.reference import validate_reference as _validate

PYTHON_FACTOR_VERSION = "factor-v1"


def parse_python_factor_candidate(candidate: str) -> ast.Expression:
    """The parsed lambda (static checks only; nothing runs)."""
    try:
        return parse_lambda(candidate)
    except Malformed as exc:
        raise PythonModeBenchError(exc.detail) from None


def parse_python_factor_spec(spec: Mapping[str, Any]) -> tuple[int, ...]:
    """The validated case inputs of a reference."""
    try:
        return tuple(_validate(1, dict(spec)).cases)
    except InvalidReference as exc:
        raise PythonModeBenchError(exc.detail) from None


@backend("python_factors")  # looked up at call time by ``verifier_worker.guarded_handle``
def execute_python_factor_candidate(candidate: str, spec: Mapping[str, Any]) -> PythonFactorValidation:
    """Run a candidate on the spec's cases in the bounded worker (never in this process)."""
    from modebench.domains.python_factors.process import validate_python_factor_function_external

    found = validate_python_factor_function_external(candidate, spec)
    if found is None:
        raise PythonModeBenchError("candidate does not return a proper divisor for every case")
    return found


validate_reference = reference_validator("python_factors")

__all__ = [
    "Mapping",
    "PYTHON_FACTOR_VERIFIER",
    "PYTHON_FACTOR_VERSION",
    "PythonFactorValidation",
    "PythonModeBenchError",
    "execute_python_factor_candidate",
    "parse_python_factor_candidate",
    "parse_python_factor_spec",
    "proper_divisors",
    "python_factor_mode_count",
    "python_factor_route_signature",
    "validate_reference",
]
