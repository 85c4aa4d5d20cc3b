"""0.4.0's ``modebench.domains.pantry_plan.verifier`` (alias ``modebench.pantry_plan``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from modebench.compat.domain_modules import bare_candidate, not_available, reference_validator
from modebench.domains._protocol import Malformed
from modebench.domains.pantry_plan.parse import parse_allocation

PANTRY_PLAN_VERIFIER = "pantry_plan"
PANTRY_PLAN_VERSION = "pantry-v1"


class PantryPlanError(ValueError):
    """A Pantry candidate or spec outside the grammar."""


@dataclass(frozen=True)
class PantryIngredient:
    ingredient_id: str
    available_g: int
    step_g: int
    min_if_used_g: int
    attributes_per_100g: tuple[tuple[str, Decimal], ...]
    tags: frozenset[str]


@dataclass(frozen=True)
class PantryTarget:
    attribute: str
    minimum: Decimal | None
    maximum: Decimal | None


@dataclass(frozen=True)
class PantryPlanSpec:
    ingredients: tuple[PantryIngredient, ...]
    targets: tuple[PantryTarget, ...]
    min_ingredients: int
    max_ingredients: int
    forbidden_tags: frozenset[str]
    certified_mode_count: int


@dataclass(frozen=True)
class PantryPlanValidation:
    canonical_key: str
    allocations_g: tuple[tuple[str, int], ...]
    totals: tuple[tuple[str, Decimal], ...]


def parse_pantry_plan_candidate(candidate: str) -> tuple[tuple[str, int], ...]:
    """``id=grams`` pairs of an allocation candidate, in the order written."""
    try:
        return parse_allocation(candidate)
    except Malformed as exc:
        raise PantryPlanError(exc.detail) from None


def validate_pantry_plan(candidate: str, spec: Mapping[str, Any]) -> PantryPlanValidation | None:
    """Validate an allocation (no Level 1 projection); None when it is not feasible."""
    from modebench.compat.grading import validated_modebench_outcome_key

    if not bare_candidate(candidate):
        return None
    key = validated_modebench_outcome_key(candidate, dict(spec))
    if key is None:
        return None
    from modebench.compat.grading import extract_answer

    surface = extract_answer(candidate) or candidate
    return PantryPlanValidation(key, parse_pantry_plan_candidate(surface.strip()), ())


@not_available
def parse_pantry_plan_spec(spec: Mapping[str, Any]) -> PantryPlanSpec:
    """0.4.0: a reference as its :class:`PantryPlanSpec` object."""
    raise NotImplementedError


validate_reference = reference_validator("pantry_plan")

__all__ = [
    "Mapping",
    "PANTRY_PLAN_VERIFIER",
    "PANTRY_PLAN_VERSION",
    "PantryIngredient",
    "PantryPlanError",
    "PantryPlanSpec",
    "PantryPlanValidation",
    "PantryTarget",
    "parse_pantry_plan_candidate",
    "parse_pantry_plan_spec",
    "validate_pantry_plan",
    "validate_reference",
]
