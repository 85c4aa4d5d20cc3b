"""Reference (``answer``) validation for python_factors and the divisor arithmetic
shared with the task generator.

The parsed reference is cached and shared between requests, so it is a frozen dataclass holding
only tuples.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from typing import Any

from modebench.domains._protocol import MISSING, InvalidReference, Said, either, field_hint

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


def _single_mode_hint(cases: list[int]) -> str:
    """Why a task has fewer than two valid answers: a prime input (none), else no input with a choice."""
    primes = [index for index, value in enumerate(cases) if not proper_divisors(value)]
    if primes:
        return field_hint(
            f"answer.cases[{primes[0]}]",
            Said(f"{cases[primes[0]]}, a prime (no proper divisor, so no valid answer)"),
            "a composite input such as 6",
        )
    return field_hint(
        "answer.cases",
        Said(f"{json.dumps(cases)}, each with one proper divisor (one valid answer)"),
        "at least one input with two or more proper divisors, such as 6 (2 or 3)",
    )


def validate_reference(level: int, answer: dict[str, Any]) -> FactorReference:
    """Apply the domain checks in the contract's order; the level does not matter for this domain."""
    del level
    if answer.get("verifier") != VERIFIER:
        raise InvalidReference(
            "wrong Python ModeBench verifier",
            field_hint("answer.verifier", answer.get("verifier", MISSING), either([VERIFIER])),
        )
    if answer.get("python_version") != PYTHON_VERSION:
        raise InvalidReference(
            "unsupported Python ModeBench version",
            field_hint(
                "answer.python_version", answer.get("python_version", MISSING), either([PYTHON_VERSION])
            ),
        )
    cases = answer.get("cases")
    if not isinstance(cases, list) or not MIN_CASES <= len(cases) <= MAX_CASES:
        raise InvalidReference(
            "cases must contain between two and eight inputs",
            field_hint(
                "answer.cases",
                answer.get("cases", MISSING),
                f"a list of {MIN_CASES} to {MAX_CASES} integers such as [6, 10, 15]",
            ),
        )
    # JSON true/false decode to bool, a subclass of int: reject them explicitly; 10.0 is a float.
    wrong = [
        index for index, value in enumerate(cases) if not isinstance(value, int) or isinstance(value, bool)
    ]
    if wrong:
        raise InvalidReference(
            "case inputs must be integers",
            field_hint(f"answer.cases[{wrong[0]}]", cases[wrong[0]], "an integer (not 6.0, not true)"),
        )
    if len(set(cases)) != len(cases):
        first = {}
        for index, value in enumerate(cases):
            if value in first:
                break
            first[value] = index
        raise InvalidReference(
            "case inputs must be unique",
            field_hint(
                f"answer.cases[{index}]",
                Said(f"{value}, as in answer.cases[{first[value]}]"),
                "distinct inputs",
            ),
        )
    outside = [index for index, value in enumerate(cases) if not MIN_INPUT <= value <= MAX_INPUT]
    if outside:
        raise InvalidReference(
            "case inputs are outside the bounded domain",
            field_hint(
                f"answer.cases[{outside[0]}]",
                cases[outside[0]],
                f"an integer from {MIN_INPUT} to {MAX_INPUT}",
            ),
        )
    if mode_count(cases) < 2:
        raise InvalidReference("task does not have multiple valid modes", _single_mode_hint(cases))
    return FactorReference(cases=tuple(cases))
