"""Execution of a validated candidate against the cases and the mode key."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from modebench.domains._protocol import Incorrect

KEY_PREFIX = "python_factor:"


def run_cases(function: Callable[[int], Any], cases: tuple[int, ...]) -> list[int]:
    """Call ``function`` once per case in reference order; the first failure is ``Incorrect``.

    Only ``ArithmeticError`` (in practice ``//0`` or ``%0``) is a wrong answer. Anything else
    (e.g. ``TypeError`` from arithmetic on a nested lambda) is not caught here: the contract makes it
    an evaluator failure, converted by the shared worker guard.
    """
    outputs: list[int] = []
    for value in cases:
        try:
            result = function(value)
        except ArithmeticError as exc:
            raise Incorrect(str(exc)) from None
        # bool is an int subclass, but a bare True/False return is not a divisor.
        if isinstance(result, bool) or not isinstance(result, int):
            raise Incorrect("function output must be an integer")
        if result <= 1 or result >= value or value % result != 0:
            raise Incorrect(f"function returned {result}, not a proper divisor of {value}")
        outputs.append(result)
    return outputs


def mode_key(outputs: list[int] | tuple[int, ...]) -> str:
    """``python_factor:`` + outputs in case order, comma-separated, no spaces."""
    return KEY_PREFIX + ",".join(str(value) for value in outputs)
