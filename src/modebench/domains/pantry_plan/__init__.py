"""PantryPlan: feasible ingredient allocations under quantity and nutrition bounds (ModeBench 0.4.0).

Level 1 grades a raw six-bit support mask and projects it onto the first feasible lattice point;
Levels 2–5 grade an ``id=grams`` allocation. The mode is the set of ingredient ids used.

The scoring contract is described in ``docs/scoring/pantry_plan.md``.
"""

from __future__ import annotations

import importlib
from typing import Any

from modebench.domains._protocol import CardText, Correct, DomainPlugin
from modebench.domains.pantry_plan import prompt
from modebench.domains.pantry_plan.check import grade_allocation, grade_mask
from modebench.domains.pantry_plan.generate import generate
from modebench.domains.pantry_plan.modes import feasible_supports
from modebench.domains.pantry_plan.parse import candidate, parse_allocation
from modebench.domains.pantry_plan.reference import PantryRef, validate_reference


def grade(level: int, ref: PantryRef, text: str) -> Correct:
    """Grade one response; raises Malformed / Incorrect (Level 1 with the sentinel graded_text)."""
    if level == 1:
        return grade_mask(ref, text)
    return grade_allocation(ref, parse_allocation(candidate(text)))


def witnesses(level: int, answer: dict[str, Any]) -> list[str]:
    """One response per certified support: a six-bit mask at Level 1, else ``id=grams`` pairs."""
    ref = validate_reference(level, answer)
    found = []
    for rows, point in feasible_supports(ref):
        if level == 1:
            chosen = {row.id for row in rows}
            found.append("".join("1" if row.id in chosen else "0" for row in ref.rows))
        else:
            found.append(";".join(f"{row.id}={grams}" for row, grams in zip(rows, point)))
    return found


CARD = CardText(
    name="PantryPlan",
    task="Find feasible ingredient allocations under quantity and nutrition constraints.",
    canonical_identity=("Ingredient support; Level 1 support masks use deterministic quantity projection."),
    source="Synthetic tasks derived from USDA FoodData Central Foundation Foods (April 2026, CC0).",
    upstream_license="CC0-1.0",
    limitation="A constrained allocation benchmark, not dietary advice or a validated nutrition planner.",
)


PLUGIN = DomainPlugin(
    name="pantry_plan",
    verifiers=("pantry_plan",),
    deadline_seconds=2.0,
    validate_reference=validate_reference,
    grade=grade,
    prompt=prompt.template,
    card=CARD,
    generate=generate,
    witnesses=witnesses,
)

__all__ = ["PLUGIN", "grade"]


def __getattr__(name: str) -> Any:
    # 0.4.0's per-domain modules, imported on first use (docs/compatibility.md).
    if name in ("grading", "support", "verifier"):
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
