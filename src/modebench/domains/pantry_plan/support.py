"""0.4.0's ``modebench.domains.pantry_plan.support`` (alias ``modebench.pantry_support_action``):
the Level 1 six-bit support mask and its projection onto a feasible allocation."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from modebench.compat.domain_modules import not_available
from modebench.domains.pantry_plan.verifier import (
    PantryPlanError,
    PantryPlanValidation,
    parse_pantry_plan_spec,
    validate_pantry_plan,
)

PANTRY_SUPPORT_ACTION_VERSION = "pantry-support-action-dev-v1"
PANTRY_SUPPORT_MASK_INVALID = "__INVALID_PANTRY_SUPPORT_MASK__"
PANTRY_SUPPORT_MASK_TASK = "pantry_support_mask"
PANTRY_SUPPORT_MASK_WIDTH = 6


def _ids(spec: Mapping[str, Any]) -> list[str]:
    ingredients = dict(spec).get("ingredients")
    if not isinstance(ingredients, list):
        raise PantryPlanError("spec has no ingredient list")
    return [
        str(row.get("id", row.get("ingredient_id"))) if isinstance(row, dict) else "" for row in ingredients
    ]


def pantry_support_from_mask(mask: str, spec: Mapping[str, Any]) -> tuple[str, ...] | None:
    """The ingredient ids a six-bit mask selects, in row order; None for a malformed mask."""
    ids = _ids(spec)
    text = mask.strip() if isinstance(mask, str) else ""
    if len(text) != len(ids) or set(text) - {"0", "1"}:
        return None
    return tuple(ident for ident, bit in zip(ids, text, strict=True) if bit == "1")


def decode_pantry_support_mask(mask: str, spec: Mapping[str, Any]) -> str:
    """The support as ``id+id`` text, or the invalid-mask sentinel."""
    support = pantry_support_from_mask(mask, spec)
    return PANTRY_SUPPORT_MASK_INVALID if support is None else "+".join(support)


def pantry_support_mask_from_allocation(allocation: str, spec: Mapping[str, Any]) -> str:
    """The mask of the ingredients an ``id=grams`` allocation uses (grams above zero)."""
    from modebench.domains.pantry_plan.verifier import parse_pantry_plan_candidate

    used = {ident for ident, grams in parse_pantry_plan_candidate(allocation) if grams > 0}
    return "".join("1" if ident in used else "0" for ident in _ids(spec))


@not_available
def parse_pantry_support_action(candidate: str, spec: Mapping[str, Any]) -> tuple[str, ...]:
    """0.4.0 (development only): a support list of ingredient ids."""
    raise NotImplementedError


@not_available
def project_pantry_support(support: tuple[str, ...], spec: Mapping[str, Any]) -> PantryPlanValidation | None:
    """0.4.0: the first feasible allocation on a support."""
    raise NotImplementedError


@not_available
def validate_pantry_support_action(candidate: str, spec: Mapping[str, Any]) -> PantryPlanValidation | None:
    """0.4.0 (development only): a support-list action validated by projection."""
    raise NotImplementedError


__all__ = [
    "PANTRY_SUPPORT_ACTION_VERSION",
    "PANTRY_SUPPORT_MASK_INVALID",
    "PANTRY_SUPPORT_MASK_TASK",
    "PANTRY_SUPPORT_MASK_WIDTH",
    "PantryPlanError",
    "PantryPlanValidation",
    "decode_pantry_support_mask",
    "pantry_support_from_mask",
    "pantry_support_mask_from_allocation",
    "parse_pantry_plan_spec",
    "parse_pantry_support_action",
    "project_pantry_support",
    "validate_pantry_plan",
    "validate_pantry_support_action",
]
