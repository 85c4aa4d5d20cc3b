"""Countdown grading: surface → sides → first verifying side."""

from __future__ import annotations

from modebench.domains._protocol import Correct, Incorrect, Malformed
from modebench.domains.countdown.check import check_sides
from modebench.domains.countdown.parse import candidate, normalise, sides
from modebench.domains.countdown.reference import CountdownRef


def grade(level: int, ref: CountdownRef, text: str) -> Correct:
    """Grade one response; ``graded_text`` is always the raw response (the pipeline default)."""
    found = candidate(text)
    if found is None:
        raise Malformed("invalid response surface")
    key, evaluable = check_sides(ref, sides(normalise(found)))
    if key is not None:
        return Correct(key)
    if evaluable:
        raise Incorrect("arithmetic or operand mismatch")
    raise Malformed("invalid expression syntax")


__all__ = ["grade"]
