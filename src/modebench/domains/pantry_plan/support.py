"""0.4.0's ``modebench.domains.pantry_plan.support`` (alias ``modebench.pantry_support_action``):
the Level 1 six-bit support mask and its projection onto a feasible allocation."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

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


_MASK_ROWS_ERROR = "Pantry support masks require exactly 6 public ingredient rows"


def _mask_bits(mask: Any) -> str | None:
    text = str(mask).strip()
    return text if len(text) == PANTRY_SUPPORT_MASK_WIDTH and set(text) <= {"0", "1"} else None


def pantry_support_from_mask(mask: str, spec: Mapping[str, Any]) -> tuple[str, ...] | None:
    """The ingredient ids a six-bit mask selects (bits follow the six reference rows), sorted;
    None for a malformed mask, a spec without exactly six rows or a support of the wrong size."""
    from modebench.domains.pantry_plan.verifier import _reference

    ref = _reference(spec)
    bits = _mask_bits(mask)
    if bits is None or len(ref.rows) != PANTRY_SUPPORT_MASK_WIDTH:
        return None
    support = sorted(row.id for bit, row in zip(bits, ref.rows, strict=True) if bit == "1")
    return tuple(support) if ref.min_count <= len(support) <= ref.max_count else None


def decode_pantry_support_mask(mask: str, spec: Mapping[str, Any]) -> str:
    """The Level 1 projection of a mask (its first feasible allocation, ``id=grams;…``), or the
    invalid-mask sentinel: the same projection the grader applies to a Level 1 answer."""
    from modebench.domains._protocol import Incorrect, Malformed
    from modebench.domains.pantry_plan.check import grade_mask
    from modebench.domains.pantry_plan.verifier import _reference

    ref = _reference(spec)
    if len(ref.rows) != PANTRY_SUPPORT_MASK_WIDTH:
        return PANTRY_SUPPORT_MASK_INVALID
    try:
        return grade_mask(ref, str(mask)).graded_text or PANTRY_SUPPORT_MASK_INVALID
    except (Malformed, Incorrect):
        return PANTRY_SUPPORT_MASK_INVALID


def pantry_support_mask_from_allocation(allocation: str, spec: Mapping[str, Any]) -> str:
    """The mask (over the six reference rows) of a feasible allocation; PantryPlanError when the
    spec has not exactly six rows or the allocation does not verify."""
    from modebench.domains._protocol import Malformed
    from modebench.domains.pantry_plan.check import is_feasible
    from modebench.domains.pantry_plan.parse import parse_allocation
    from modebench.domains.pantry_plan.verifier import _reference

    ref = _reference(spec)
    if len(ref.rows) != PANTRY_SUPPORT_MASK_WIDTH:
        raise PantryPlanError(_MASK_ROWS_ERROR)
    try:
        pairs = parse_allocation(allocation) if isinstance(allocation, str) else None
    except Malformed:
        pairs = None
    if pairs is None or not is_feasible(ref, pairs):
        raise PantryPlanError("replayed Pantry allocation fails its verifier")
    used = {ident for ident, _ in pairs}
    return "".join("1" if row.id in used else "0" for row in ref.rows)


#: 0.4.0's development-only support action: optional braces, an optional ``support:`` or
#: ``ingredient(s):`` label, then ingredient ids separated by ``+``, ``;``, ``,`` or whitespace.
SUPPORT_ACTION_CAP = 256
_SUPPORT_LABEL = re.compile(r"(?:support|ingredients?)\s*[:=]\s*")
_SUPPORT_SEPARATORS = re.compile(r"[+;,\s]+")


def parse_pantry_support_action(candidate: str, spec: Mapping[str, Any]) -> tuple[str, ...]:
    """0.4.0 (development only): a support list of ingredient ids, sorted; PantryPlanError when
    it is empty, too long, of the wrong size, repeats an id or names an unknown one."""
    from modebench.domains.pantry_plan.verifier import _reference

    ref = _reference(spec)
    text = candidate.strip()
    if not text or len(text) > SUPPORT_ACTION_CAP:
        raise PantryPlanError("support action is empty or too long")
    text = text.lower()
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1].strip()
    label = _SUPPORT_LABEL.match(text)
    if label is not None:
        text = text[label.end() :]
    ids = [piece for piece in _SUPPORT_SEPARATORS.split(text) if piece]
    if not ref.min_count <= len(ids) <= ref.max_count:
        raise PantryPlanError("support action uses the wrong number of ingredients")
    if len(set(ids)) != len(ids):
        raise PantryPlanError("support action contains a duplicate ingredient")
    for ident in ids:
        if ident not in ref.by_id:
            raise PantryPlanError(f"unknown ingredient {ident!r}")  # the first, as written
    return tuple(sorted(ids))


def project_pantry_support(support: tuple[str, ...], spec: Mapping[str, Any]) -> PantryPlanValidation | None:
    """The first feasible allocation on a support, ids in the order given (first id slowest,
    grams ascending), as the Level 1 projection computes it over its id-sorted support; None when
    the support is not admissible or has none. The allocation is reported sorted by id."""
    from modebench.domains.pantry_plan.check import first_feasible_point
    from modebench.domains.pantry_plan.verifier import _reference, plan_validation

    ref = _reference(spec)
    ids = list(support)
    if len(set(ids)) != len(ids) or not all(ident in ref.by_id for ident in ids):
        return None
    rows = [ref.by_id[ident] for ident in ids]
    point = first_feasible_point(ref, rows)
    if point is None:
        return None
    return plan_validation(spec, tuple(sorted(zip(ids, point, strict=True))))


def validate_pantry_support_action(candidate: str, spec: Mapping[str, Any]) -> PantryPlanValidation | None:
    """0.4.0 (development only): a support action validated by projection; None when it cannot be
    read against the spec or has no feasible allocation."""
    try:
        return project_pantry_support(parse_pantry_support_action(candidate, spec), spec)
    except PantryPlanError:
        return None


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
