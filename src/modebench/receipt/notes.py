"""The admission notes printed under a cell (``protocol_notes``) and the clauses they are made of."""

from __future__ import annotations

from modebench.contracts import NOT_ADMITTED_LEVELS, NOT_DIFFICULTY_MATCHED
from modebench.domains import plugin

__all__ = ["admission_limits", "protocol_notes"]


def admission_limits(level: int, domain: str | None = None) -> list[str]:
    """The admission facts of a level (of one cell, given ``domain``) as clauses without a period:
    ``Level 4 as a whole is not admitted``, ``Level 4 MathIR is not difficulty-matched``."""
    if level not in NOT_ADMITTED_LEVELS:
        return []
    clauses = [f"Level {level} as a whole is not admitted"]
    for unmatched_level, unmatched in sorted(NOT_DIFFICULTY_MATCHED):
        if unmatched_level == level and domain in (None, unmatched):
            clauses.append(f"Level {level} {plugin(unmatched).card.name} is not difficulty-matched")
    return clauses


def protocol_notes(level: int, domain: str) -> list[str]:
    """Admission notes printed under a cell, one sentence each."""
    return [clause + "." for clause in admission_limits(level, domain)]
