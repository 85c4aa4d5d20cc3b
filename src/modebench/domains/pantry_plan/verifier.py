"""0.4.0's ``modebench.domains.pantry_plan.verifier`` (alias ``modebench.pantry_plan``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from modebench.compat.backends import backend
from modebench.compat.domain_modules import bare_candidate, parsed_reference, reference_validator
from modebench.domains._protocol import Malformed
from modebench.domains.pantry_plan.parse import parse_allocation

PANTRY_PLAN_VERIFIER = "pantry_plan"
PANTRY_PLAN_VERSION = "pantry-v1"
#: Any level but 1 reads a reference without the Level 1 row rules (0.4.0's helpers had no level).
_LEVEL = 2


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


def _reference(spec: Mapping[str, Any]) -> Any:
    """The parsed reference (our own validation; its messages are 0.4.0's), or PantryPlanError."""
    return parsed_reference("pantry_plan", spec, PantryPlanError, _LEVEL)


def _attributes(spec: Mapping[str, Any]) -> dict[str, dict[str, Decimal]]:
    """Every ingredient's per-100 g values (all attributes, not only the targeted ones)."""
    from modebench.domains.pantry_plan.reference import to_decimal

    out: dict[str, dict[str, Decimal]] = {}
    for row in spec["ingredients"]:
        values = row["attributes_per_100g"]
        out[str(row["id"])] = {str(name): to_decimal(values[name], str(name)) for name in values}
    return out


def plan_validation(spec: Mapping[str, Any], allocation: tuple[tuple[str, int], ...]) -> PantryPlanValidation:
    """A feasible allocation (pairs sorted by id) with 0.4.0's totals: the allocated mass and,
    for every attribute of the allocated rows, ``value * grams / 100`` summed in id order with
    exact decimals (computed for this public call only, never on the grading path)."""
    from modebench.domains.pantry_plan.check import mode_key
    from modebench.domains.pantry_plan.reference import DECIMAL, MASS

    table = _attributes(spec)
    sums: dict[str, Decimal] = {}
    for ident, grams in allocation:
        for name, value in table[ident].items():
            part = DECIMAL.divide(DECIMAL.multiply(value, grams), Decimal(100))
            sums[name] = DECIMAL.add(sums[name], part) if name in sums else part
    sums[MASS] = Decimal(sum(grams for _, grams in allocation))
    totals = tuple(sorted(sums.items()))
    return PantryPlanValidation(mode_key(ident for ident, _ in allocation), allocation, totals)


@backend("pantry_plan")  # looked up at call time by ``verifier_worker.guarded_handle``
def validate_pantry_plan(candidate: str, spec: Mapping[str, Any]) -> PantryPlanValidation | None:
    """Validate an allocation (no Level 1 projection); None when it is not feasible."""
    from modebench.compat.grading import extract_answer, validated_modebench_outcome_key

    if not bare_candidate(candidate):
        return None
    # The verdict and key come from the bounded worker; the totals are derived once it verified.
    key = validated_modebench_outcome_key(candidate, dict(spec))
    if key is None:
        return None
    surface = extract_answer(candidate) or candidate
    found = plan_validation(spec, parse_pantry_plan_candidate(surface.strip()))
    assert found.canonical_key == key  # the same allocation the worker verified
    return found


def parse_pantry_plan_spec(spec: Mapping[str, Any]) -> PantryPlanSpec:
    """A validated reference as 0.4.0's :class:`PantryPlanSpec` (ingredients in reference order,
    attributes and targets by name)."""
    from modebench.domains.pantry_plan.reference import to_decimal

    _reference(spec)  # every rule, with 0.4.0's messages
    table = _attributes(spec)
    ingredients = tuple(
        PantryIngredient(
            str(row["id"]),
            int(row["available_g"]),
            int(row["step_g"]),
            int(row["min_if_used_g"]),
            tuple(sorted(table[str(row["id"])].items())),
            frozenset(str(tag) for tag in row.get("tags", [])),
        )
        for row in spec["ingredients"]
    )
    targets = tuple(
        PantryTarget(
            str(name),
            None if "min" not in bounds else to_decimal(bounds["min"], f"{name}.min"),
            None if "max" not in bounds else to_decimal(bounds["max"], f"{name}.max"),
        )
        for name, bounds in sorted(spec["targets"].items())
    )
    return PantryPlanSpec(
        ingredients,
        targets,
        int(spec["min_ingredients"]),
        int(spec["max_ingredients"]),
        frozenset(str(tag) for tag in spec.get("forbidden_tags", [])),
        int(spec["certified_mode_count"]),
    )


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
    "plan_validation",
    "validate_pantry_plan",
    "validate_reference",
]
