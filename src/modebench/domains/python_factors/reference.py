"""Reference (``answer``) validation for python_factors and the divisor arithmetic
shared with the task generator.

The parsed reference is cached and shared between requests, so it is a frozen dataclass holding
only tuples.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from modebench.domains._protocol import MISSING, InvalidReference, shown

VERIFIER = "python_factor_function"
PYTHON_VERSION = "factor-v1"
MIN_CASES, MAX_CASES = 2, 8
MIN_INPUT, MAX_INPUT = 4, 1000


@dataclass(frozen=True)
class FactorReference:
    """The validated inputs, in reference order (the canonical key follows this order)."""

    cases: tuple[int, ...]


@cache
def proper_divisors(value: int) -> tuple[int, ...]:
    """Divisors of ``value`` strictly between 1 and ``value``, ascending (empty for primes / < 4)."""
    return tuple(d for d in range(2, value) if value % d == 0)


def mode_count(cases: tuple[int, ...] | list[int]) -> int:
    """Exact number of valid output vectors: the product of the per-case divisor counts."""
    total = 1
    for value in cases:
        total *= len(proper_divisors(value))
    return total


def validate_reference(level: int, answer: dict[str, Any]) -> FactorReference:
    """Apply the domain checks in the contract's order; the level does not matter for this domain."""
    del level
    if answer.get("verifier") != VERIFIER:
        raise InvalidReference(
            "wrong Python ModeBench verifier",
            f"answer.verifier: found {shown(answer.get('verifier', MISSING))}, expected {VERIFIER!r}",
        )
    if answer.get("python_version") != PYTHON_VERSION:
        raise InvalidReference(
            "unsupported Python ModeBench version",
            f"answer.python_version: found {shown(answer.get('python_version', MISSING))}, "
            f"expected {PYTHON_VERSION!r}",
        )
    cases = answer.get("cases")
    if not isinstance(cases, list) or not MIN_CASES <= len(cases) <= MAX_CASES:
        raise InvalidReference(
            "cases must contain between two and eight inputs",
            f"answer.cases: found {shown(answer.get('cases', MISSING))}, expected a list of "
            f"{MIN_CASES} to {MAX_CASES} integers such as [6, 10, 15]",
        )
    # JSON true/false decode to bool, a subclass of int: reject them explicitly; 10.0 is a float.
    wrong = [value for value in cases if not isinstance(value, int) or isinstance(value, bool)]
    if wrong:
        raise InvalidReference(
            "case inputs must be integers", f"answer.cases: found {shown(wrong[0])}, expected an integer"
        )
    if len(set(cases)) != len(cases):
        repeated = next(value for value in cases if cases.count(value) > 1)
        raise InvalidReference(
            "case inputs must be unique", f"answer.cases: found {repeated} twice, expected distinct inputs"
        )
    outside = [value for value in cases if not MIN_INPUT <= value <= MAX_INPUT]
    if outside:
        raise InvalidReference(
            "case inputs are outside the bounded domain",
            f"answer.cases: found {outside[0]}, expected inputs from {MIN_INPUT} to {MAX_INPUT}",
        )
    if mode_count(cases) < 2:
        raise InvalidReference(
            "task does not have multiple valid modes",
            f"answer.cases: found {shown(cases)} with {mode_count(cases)} valid answers, expected "
            "at least two (every input composite, one with two or more proper divisors)",
        )
    return FactorReference(cases=tuple(cases))
