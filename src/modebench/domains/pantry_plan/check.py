"""Feasibility of an allocation, the canonical key and the Level 1 projection.

The same target test serves the Levels 2–5 check, the Level 1 projection and the generator's
exhaustive mode enumeration, so all three agree by construction.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import product
from typing import Final

from modebench.domains._protocol import Correct, Incorrect, Malformed
from modebench.domains.pantry_plan.parse import Allocation
from modebench.domains.pantry_plan.reference import DECIMAL, KEY_PREFIX, PantryRef, Row

SENTINEL: Final = "__INVALID_PANTRY_SUPPORT_MASK__"
MASK_WIDTH: Final = 6
_BITS: Final = frozenset("01")


def mode_key(ids: Iterable[str]) -> str:
    """``pantry_plan:pantry-v1:`` + code-point-sorted ids joined by ``+``."""
    return KEY_PREFIX + "+".join(sorted(ids))


def meets_targets(ref: PantryRef, rows: Sequence[Row], grams: Sequence[int]) -> bool:
    """Every target bound holds (inclusive, exact decimals) for rows in id order with these grams."""
    if ref.mass_min is not None or ref.mass_max is not None:
        mass = sum(grams)
        if ref.mass_min is not None and mass < ref.mass_min:
            return False
        if ref.mass_max is not None and mass > ref.mass_max:
            return False
    if not ref.attr_targets:
        return True
    parts = [row.contribution(g) for row, g in zip(rows, grams)]
    add = DECIMAL.add
    for index, (_, low, high) in enumerate(ref.attr_targets):
        # Summed in id order, one rounding context operation at a time, like the reference.
        total = parts[0][index]
        for part in parts[1:]:
            total = add(total, part[index])
        if low is not None and total < low:
            return False
        if high is not None and total > high:
            return False
    return True


def is_feasible(ref: PantryRef, allocation: Allocation) -> bool:
    """The feasibility checks in order: count, then per pair (id, forbidden tag, lattice), then targets."""
    if not ref.min_count <= len(allocation) <= ref.max_count:
        return False
    rows = []
    grams = []
    for ident, amount in allocation:
        row = ref.by_id.get(ident)
        if row is None or row.forbidden:
            return False
        if amount < row.minimum or amount > row.available or amount % row.step:
            return False
        rows.append(row)
        grams.append(amount)
    return meets_targets(ref, rows, grams)


def grade_allocation(ref: PantryRef, allocation: Allocation) -> Correct:
    if not is_feasible(ref, allocation):
        raise Incorrect("allocation violates feasibility constraints")
    return Correct(mode_key(ident for ident, _ in allocation))


def first_feasible_point(ref: PantryRef, rows: Sequence[Row]) -> tuple[int, ...] | None:
    """First lattice point (first id slowest, each coordinate ascending) passing the feasibility checks, or None.

    Deliberately exhaustive and unpruned: a support with a forbidden row or a huge
    lattice is still scanned point by point, so such cases take as long as in the reference
    (typically running into the worker deadline) instead of becoming ``incorrect`` early.
    """
    allowed = ref.min_count <= len(rows) <= ref.max_count and not any(row.forbidden for row in rows)
    for point in product(*(row.lattice() for row in rows)):
        if allowed and meets_targets(ref, rows, point):
            return point
    return None


def grade_mask(ref: PantryRef, text: str) -> Correct:
    """Level 1: a raw six-bit mask over the printed rows, projected to its first feasible point."""
    mask = text.strip()
    if len(mask) != MASK_WIDTH or not set(mask) <= _BITS:
        raise Malformed("expected a six-bit support mask", graded_text=SENTINEL)
    support = sorted((row for bit, row in zip(mask, ref.rows) if bit == "1"), key=lambda row: row.id)
    if not ref.min_count <= len(support) <= ref.max_count:
        raise Incorrect("support has no feasible allocation", graded_text=SENTINEL)
    point = first_feasible_point(ref, support)
    if point is None:
        raise Incorrect("support has no feasible allocation", graded_text=SENTINEL)
    allocation = ";".join(f"{row.id}={grams}" for row, grams in zip(support, point))
    return Correct(mode_key(row.id for row in support), graded_text=allocation)


__all__ = [
    "MASK_WIDTH",
    "SENTINEL",
    "first_feasible_point",
    "grade_allocation",
    "grade_mask",
    "is_feasible",
    "meets_targets",
    "mode_key",
]
