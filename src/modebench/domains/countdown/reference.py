"""Countdown reference validation into an immutable parsed reference.

The shared pipeline has already decoded the answer object and checked ``answer.verifier``; this
module applies only the Countdown-specific rules, in the contract's order, first failure wins.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeGuard

from modebench.domains._protocol import MISSING, InvalidReference, field_hint


@dataclass(frozen=True)
class CountdownRef:
    """A validated Countdown task. Cached and shared, hence frozen and tuple-valued."""

    numbers: tuple[int, ...]
    target: int
    #: ``numbers`` sorted once here so the per-response multiset check is one tuple comparison.
    sorted_numbers: tuple[int, ...]


def _is_json_integer(value: Any) -> TypeGuard[int]:
    # bool is an int subclass in Python but a distinct JSON type; floats (even 3.0) are rejected.
    return type(value) is int


def validate_reference(level: int, answer: dict[str, Any]) -> CountdownRef:
    """Check ``numbers`` (non-empty list), then ``target``, then every element of ``numbers``."""
    numbers = answer.get("numbers")
    if not isinstance(numbers, list) or not numbers:
        raise InvalidReference(
            "answer.numbers must be a nonempty list of integers",
            field_hint(
                "answer.numbers",
                answer.get("numbers", MISSING),
                "a nonempty list of integers such as [3, 6, 9]",
            ),
        )
    target = answer.get("target")
    if not _is_json_integer(target):
        raise InvalidReference(
            "answer.target must contain integers",
            field_hint("answer.target", answer.get("target", MISSING), "an integer such as 18"),
        )
    wrong = [index for index, number in enumerate(numbers) if not _is_json_integer(number)]
    if wrong:
        raise InvalidReference(
            "answer.numbers must contain integers",
            field_hint(f"answer.numbers[{wrong[0]}]", numbers[wrong[0]], "an integer (not 3.0, not true)"),
        )
    return CountdownRef(numbers=tuple(numbers), target=target, sorted_numbers=tuple(sorted(numbers)))


__all__ = ["CountdownRef", "validate_reference"]
