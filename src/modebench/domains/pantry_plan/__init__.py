"""PantryPlan: feasible ingredient allocations under quantity and nutrition bounds (ModeBench 0.4.0).

Level 1 grades a raw six-bit support mask and projects it onto the first feasible lattice point;
Levels 2–5 grade an ``id=grams`` allocation. The mode is the set of ingredient ids used.
"""

from __future__ import annotations

from modebench.domains._protocol import Correct, DomainPlugin
from modebench.domains.pantry_plan import prompt
from modebench.domains.pantry_plan.check import grade_allocation, grade_mask
from modebench.domains.pantry_plan.generate import generate
from modebench.domains.pantry_plan.parse import candidate, parse_allocation
from modebench.domains.pantry_plan.reference import PantryRef, validate_reference


def grade(level: int, ref: PantryRef, text: str) -> Correct:
    """Grade one response; raises Malformed / Incorrect (Level 1 with the sentinel graded_text)."""
    if level == 1:
        return grade_mask(ref, text)
    return grade_allocation(ref, parse_allocation(candidate(text)))


PLUGIN = DomainPlugin(
    name="pantry_plan",
    verifiers=("pantry_plan",),
    deadline_seconds=2.0,
    validate_reference=validate_reference,
    grade=grade,
    prompt=prompt.template,
    generate=generate,
)

__all__ = ["PLUGIN", "grade"]
