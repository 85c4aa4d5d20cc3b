"""Exact enumeration of PantryPlan modes and the certified support hash.

A mode is a support (set of ids) of allowed size, free of forbidden rows, with at least one lattice
point passing the verifier's own feasibility test. Enumeration visits every combination of rows
in reference order; for each it either proves infeasibility by a monotone bound (every nutrient
value is ≥ 0, so totals only grow with grams) or runs the verifier's lattice scan.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from decimal import Decimal
from functools import reduce
from itertools import combinations, product
from math import prod

from modebench.domains.pantry_plan.check import first_feasible_point, meets_targets
from modebench.domains.pantry_plan.reference import DECIMAL, PantryRef, Row


def _total(values: Sequence[Decimal]) -> Decimal:
    # Same context and order as the verifier's own summation.
    return reduce(DECIMAL.add, values)


def _may_be_feasible(ref: PantryRef, rows: Sequence[Row]) -> bool:
    """False only when no lattice point can pass (all-minimum / all-available totals bracket every point)."""
    low = [row.minimum for row in rows]
    high = [row.available for row in rows]
    if ref.mass_max is not None and sum(low) > ref.mass_max:
        return False
    if ref.mass_min is not None and sum(high) < ref.mass_min:
        return False
    low_parts = [row.contribution(g) for row, g in zip(rows, low)]
    high_parts = [row.contribution(g) for row, g in zip(rows, high)]
    for index, (_, minimum, maximum) in enumerate(ref.attr_targets):
        if maximum is not None and _total([part[index] for part in low_parts]) > maximum:
            return False
        if minimum is not None and _total([part[index] for part in high_parts]) < minimum:
            return False
    return True


def feasible_supports(ref: PantryRef) -> list[tuple[tuple[Row, ...], tuple[int, ...]]]:
    """Every mode with its first feasible lattice point (the Level 1 projection), in enumeration order."""
    found = []
    for size in range(ref.min_count, ref.max_count + 1):
        for combo in combinations(ref.rows, size):
            if any(row.forbidden for row in combo):
                continue
            rows = tuple(sorted(combo, key=lambda row: row.id))
            if not _may_be_feasible(ref, rows):
                continue
            point = first_feasible_point(ref, rows)
            if point is not None:
                found.append((rows, point))
    return found


def support_digest(supports: Sequence[Sequence[str]]) -> str:
    """SHA-256 of the sorted ``a+b+c`` support lines joined by ``\\n`` (no key prefix, no final newline)."""
    lines = sorted("+".join(sorted(ids)) for ids in supports)
    return hashlib.sha256("\n".join(lines).encode("utf-8")).hexdigest()


def allocation_counts(ref: PantryRef) -> tuple[int, int]:
    """``(legal, feasible)`` allocations: legal = right count, allowed rows, on-lattice grams;
    feasible = legal and meeting every target. Exhaustive (used for Level 3 metadata only)."""
    legal = feasible = 0
    for size in range(ref.min_count, ref.max_count + 1):
        for combo in combinations(ref.rows, size):
            if any(row.forbidden for row in combo):
                continue
            rows = tuple(sorted(combo, key=lambda row: row.id))
            lattices = [row.lattice() for row in rows]
            legal += prod(len(lattice) for lattice in lattices)
            if not _may_be_feasible(ref, rows):
                continue
            feasible += _count_points(ref, rows, lattices)
    return legal, feasible


def _count_points(ref: PantryRef, rows: tuple[Row, ...], lattices: list[range]) -> int:
    return sum(1 for point in product(*lattices) if meets_targets(ref, rows, point))


__all__ = ["allocation_counts", "feasible_supports", "support_digest"]
