"""PantryPlan reference (``answer``) validation → an immutable, precomputed :class:`PantryRef`.

Rules and their order follow the 0.4.0 contract (``docs/scoring/pantry_plan.md``). Everything that depends only on the reference is computed
here once (row lookup by id, forbidden flags, per-target attribute values and, for small
lattices, every per-row nutrient contribution), because the parsed reference is cached and
shared by every response graded against it.

All arithmetic is exact ``decimal.Decimal`` in an explicit copy of Python's default context
(28 digits, half-even), so results never depend on the caller's thread-local decimal context.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Context, Decimal, InvalidOperation, Overflow
from types import MappingProxyType
from typing import Any, Final

from modebench.domains._protocol import MISSING, InvalidReference, Said, either, field_hint, several, shown

VERIFIER: Final = "pantry_plan"
VERSION: Final = "pantry-v1"
KEY_PREFIX: Final = "pantry_plan:pantry-v1:"
ATTRIBUTES: Final[tuple[str, ...]] = (
    "energy_kcal",
    "protein_g",
    "fiber_g",
    "fat_g",
    "carbohydrate_g",
    "sodium_mg",
    "cost_cents",
)
MASS: Final = "mass_g"
TARGET_NAMES: Final[frozenset[str]] = frozenset((*ATTRIBUTES, MASS))
MIN_ROWS, MAX_ROWS = 2, 16
LEVEL1_ROWS: Final = 6
MAX_TAGS: Final = 32
MAX_GRAMS: Final = 10000

#: Python's default decimal context (the reference runs in a fresh worker with it).
DECIMAL: Final = Context(prec=28)
_HUNDRED: Final = Decimal(100)

ID_RE: Final = re.compile(r"[a-z][a-z0-9_]{0,31}")
TAG_RE: Final = re.compile(r"[a-z][a-z0-9_-]{0,31}")

#: Precompute per-row contributions only while the whole table stays small (Level-1-like data has
#: at most 16 rows x 5 lattice points); huge custom lattices are computed on demand instead, so a
#: 64 KiB reference can never make validation itself slow.
_PRECOMPUTE_POINTS: Final = 4096


@dataclass(frozen=True)
class Row:
    """One validated ingredient row."""

    id: str
    available: int
    step: int
    minimum: int
    forbidden: bool
    #: Per-100 g value of each targeted attribute, aligned with ``PantryRef.attr_targets``.
    values: tuple[Decimal, ...]
    #: ``grams -> contributions`` (aligned with ``values``) for every lattice point, or None.
    table: Mapping[int, tuple[Decimal, ...]] | None

    def lattice(self) -> range:
        """``min_if_used_g, +step_g, ..., available_g`` (alignment is a reference rule)."""
        return range(self.minimum, self.available + 1, self.step)

    def contribution(self, grams: int) -> tuple[Decimal, ...]:
        """``value_per_100g * grams / 100`` per targeted attribute, exactly as the reference."""
        if self.table is not None:
            found = self.table.get(grams)
            if found is not None:
                return found
        return _contribution(self.values, grams)


def _contribution(values: tuple[Decimal, ...], grams: int) -> tuple[Decimal, ...]:
    return tuple(DECIMAL.divide(DECIMAL.multiply(value, grams), _HUNDRED) for value in values)


@dataclass(frozen=True)
class PantryRef:
    """A validated PantryPlan reference."""

    rows: tuple[Row, ...]  # reference (printed) order: Level 1 mask bits index this
    by_id: Mapping[str, Row]
    min_count: int
    max_count: int
    mass_min: Decimal | None
    mass_max: Decimal | None
    #: ``(attribute, min or None, max or None)`` for every non-mass target, sorted by name.
    attr_targets: tuple[tuple[str, Decimal | None, Decimal | None], ...]
    #: Tags listed in ``forbidden_tags`` (kept for generators and diagnostics).
    forbidden_tags: frozenset[str]


def _integer(value: Any, label: str, low: int, high: int, path: str | None = None, bounds: str = "") -> int:
    """A JSON integer in ``low..high``; ``path`` (default ``answer.<label>``) and ``bounds`` (where
    the limits come from) are for the hint only."""
    # JSON integers only: bools and integral floats such as 150.0 are rejected.
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidReference(
            f"{label} must be an integer",
            field_hint(path or f"answer.{label}", value, f"an integer from {low} to {high}{bounds}"),
        )
    if not low <= value <= high:
        raise InvalidReference(
            f"{label} is outside [{low}, {high}]",
            field_hint(path or f"answer.{label}", value, f"an integer from {low} to {high}{bounds}"),
        )
    return value


def to_decimal(value: Any, label: str, path: str | None = None) -> Decimal:
    """``Decimal(str(value))`` for a JSON number or string; finite and non-negative.

    ``path`` (default ``answer.<label>``) names the field in the hint.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise _not_decimal(value, label, path, "finite decimal")
    try:
        # A JSON float goes through its shortest repr (0.1 -> "0.1"), as in the reference.
        number = Decimal(str(value))
    except (InvalidOperation, ValueError):
        raise _not_decimal(value, label, path, "finite decimal") from None
    if not number.is_finite() or number < 0:
        raise _not_decimal(value, label, path, "nonnegative finite decimal")
    return number


def _not_decimal(value: Any, label: str, path: str | None, what: str) -> InvalidReference:
    # Built only on failure: to_decimal runs for every attribute of every row. The contract says
    # "finite decimal" for a value that is no number at all, "nonnegative finite decimal" for a
    # number that is infinite, NaN or negative; the hint is the same for both.
    return InvalidReference(
        f"{label} must be a {what}",
        field_hint(
            path or f"answer.{label}",
            value,
            'a nonnegative finite decimal: a JSON number or a decimal string such as "12.5"',
        ),
    )


_TAG_RULE = "a lower-case letter, then up to 31 of a-z, 0-9, _ or -"


def _tags(value: Any, label: str, path: str) -> frozenset[str]:
    if not isinstance(value, list):
        raise InvalidReference(
            f"{label} must be a bounded tag list",
            field_hint(path, value, 'a list of tags such as ["nut", "dairy"]'),
        )
    if len(value) > MAX_TAGS:
        raise InvalidReference(
            f"{label} must be a bounded tag list",
            field_hint(path, several(len(value), "tag", "tags"), f"at most {MAX_TAGS}"),
        )
    seen: dict[str, int] = {}
    for index, raw in enumerate(value):
        tag = str(raw)
        if not TAG_RE.fullmatch(tag):
            raise InvalidReference(
                f"{label} contains invalid tag {tag!r}",
                field_hint(f"{path}[{index}]", raw, f"a tag: {_TAG_RULE}"),
            )
        if tag in seen:
            raise InvalidReference(
                f"{label} contains duplicate tag {tag!r}",
                field_hint(
                    f"{path}[{index}]", Said(f"{shown(raw)}, as in {path}[{seen[tag]}]"), "distinct tags"
                ),
            )
        seen[tag] = index
    return frozenset(seen)


@dataclass(frozen=True)
class _RawRow:
    id: str
    available: int
    step: int
    minimum: int
    attributes: Mapping[str, Decimal]
    tags: frozenset[str]


def _row(index: int, raw: Any, seen: dict[str, int]) -> _RawRow:
    where = f"answer.ingredients[{index}]"
    if not isinstance(raw, dict):
        raise InvalidReference(
            f"ingredient {index} must be an object",
            field_hint(where, raw, 'an ingredient object such as {"id": "oats", "available_g": 100, …}'),
        )
    ident = str(raw.get("id", ""))
    if not ID_RE.fullmatch(ident):
        raise InvalidReference(
            f"ingredient {index} has an invalid id",
            field_hint(
                f"{where}.id",
                raw.get("id", MISSING),
                'a string: a lower-case letter, then up to 31 of a-z, 0-9 or _, such as "oats"',
            ),
        )
    if ident in seen:
        raise InvalidReference(
            f"duplicate ingredient id {ident!r}",
            field_hint(
                f"{where}.id", Said(f"{shown(ident)}, as in answer.ingredients[{seen[ident]}]"), "a unique id"
            ),
        )
    seen[ident] = index
    available = _integer(
        raw.get("available_g", MISSING), f"{ident}.available_g", 1, MAX_GRAMS, f"{where}.available_g"
    )
    step = _integer(raw.get("step_g", MISSING), f"{ident}.step_g", 1, 1000, f"{where}.step_g")
    minimum = _integer(
        raw.get("min_if_used_g", MISSING),
        f"{ident}.min_if_used_g",
        step,
        available,
        f"{where}.min_if_used_g",
        " (from step_g to available_g)",
    )
    if available % step or minimum % step:
        raise InvalidReference(
            f"{ident} availability and minimum must align to step_g",
            field_hint(
                where,
                Said(f"available_g {available} and min_if_used_g {minimum} with step_g {step}"),
                f"available_g and min_if_used_g both multiples of step_g ({step})",
            ),
        )
    attributes = raw.get("attributes_per_100g", MISSING)
    if not isinstance(attributes, dict) or not attributes:
        raise InvalidReference(
            f"{ident}.attributes_per_100g must be nonempty",
            field_hint(
                f"{where}.attributes_per_100g",
                attributes,
                'a nonempty object of values per 100 g such as {"energy_kcal": "380", "protein_g": "13"}',
            ),
        )
    values: dict[str, Decimal] = {}
    for name, value in attributes.items():
        if name not in ATTRIBUTES:
            raise InvalidReference(
                f"{ident} has unsupported attribute {name!r}",
                field_hint(
                    f"{where}.attributes_per_100g",
                    Said(f"the attribute {shown(name)}"),
                    f"attributes among {', '.join(ATTRIBUTES)}",
                ),
            )
        values[name] = to_decimal(
            value, f"{ident}.attributes_per_100g.{name}", f"{where}.attributes_per_100g.{name}"
        )
    tags = _tags(raw.get("tags", []), f"{ident}.tags", f"{where}.tags")
    return _RawRow(ident, available, step, minimum, values, tags)


def _targets(value: Any, rows: list[_RawRow]) -> dict[str, tuple[Decimal | None, Decimal | None]]:
    if not isinstance(value, dict) or not value:
        raise InvalidReference(
            "targets must be a nonempty object",
            field_hint(
                "answer.targets",
                value,
                'a nonempty object such as {"mass_g": {"min": 100, "max": 150}, "protein_g": {"min": "15"}}',
            ),
        )
    out: dict[str, tuple[Decimal | None, Decimal | None]] = {}
    for name, bounds in value.items():
        where = f"answer.targets.{name}"
        if name not in TARGET_NAMES:
            raise InvalidReference(
                f"unsupported target attribute {name!r}",
                field_hint(
                    "answer.targets",
                    Said(f"the attribute {shown(name)}"),
                    f"mass_g or attributes among {', '.join(ATTRIBUTES)}",
                ),
            )
        if not isinstance(bounds, dict):
            raise InvalidReference(
                f"target {name!r} must be an object",
                field_hint(where, bounds, 'an object with "min", "max" or both, such as {"min": "15"}'),
            )
        if not set(bounds) <= {"min", "max"}:
            unknown = sorted(set(bounds) - {"min", "max"})
            raise InvalidReference(
                f"target {name!r} has unknown bounds",
                field_hint(
                    where, Said(f"the bound {', '.join(map(shown, unknown))}"), 'only "min" and "max"'
                ),
            )
        if not bounds:
            raise InvalidReference(
                f"target {name!r} has no bound", field_hint(where, bounds, '"min", "max" or both')
            )
        low = to_decimal(bounds["min"], f"targets.{name}.min", f"{where}.min") if "min" in bounds else None
        high = to_decimal(bounds["max"], f"targets.{name}.max", f"{where}.max") if "max" in bounds else None
        if low is not None and high is not None and low > high:
            raise InvalidReference(
                f"target {name!r} has min greater than max",
                field_hint(where, Said(f"min {low} and max {high}"), "min at most max"),
            )
        if name != MASS:
            for index, row in enumerate(rows):
                if name not in row.attributes:
                    raise InvalidReference(
                        f"ingredient {row.id!r} lacks target attribute {name!r}",
                        field_hint(
                            f"answer.ingredients[{index}].attributes_per_100g.{name}",
                            MISSING,
                            f"a value, since answer.targets has {shown(name)}",
                        ),
                    )
        out[name] = (low, high)
    return out


def validate_reference(level: int, answer: dict[str, Any]) -> PantryRef:
    """Check a decoded ``answer`` object and precompute grading data."""
    if answer.get("verifier") != VERIFIER:
        raise InvalidReference(
            "verifier must be pantry_plan",
            field_hint("answer.verifier", answer.get("verifier", MISSING), either([VERIFIER])),
        )
    if answer.get("pantry_version") != VERSION:
        raise InvalidReference(
            "unsupported PantryPlan version",
            field_hint("answer.pantry_version", answer.get("pantry_version", MISSING), either([VERSION])),
        )
    ingredients = answer.get("ingredients")
    if not isinstance(ingredients, list) or not MIN_ROWS <= len(ingredients) <= MAX_ROWS:
        raise InvalidReference(
            f"ingredients must contain between {MIN_ROWS} and {MAX_ROWS} rows",
            field_hint(
                "answer.ingredients",
                several(len(ingredients), "object", "objects")
                if isinstance(ingredients, list)
                else answer.get("ingredients", MISSING),
                f"a list of {MIN_ROWS} to {MAX_ROWS} ingredient objects",
            ),
        )
    seen: dict[str, int] = {}
    rows = [_row(index, raw, seen) for index, raw in enumerate(ingredients)]
    count = len(rows)
    min_count = _integer(
        answer.get("min_ingredients", MISSING),
        "min_ingredients",
        1,
        count,
        bounds=" (the number of ingredients)",
    )
    max_count = _integer(
        answer.get("max_ingredients", MISSING),
        "max_ingredients",
        min_count,
        count,
        bounds=" (from min_ingredients to the number of ingredients)",
    )
    _integer(answer.get("certified_mode_count", MISSING), "certified_mode_count", 2, 1_000_000)
    forbidden = _tags(answer.get("forbidden_tags", []), "forbidden_tags", "answer.forbidden_tags")
    targets = _targets(answer.get("targets", MISSING), rows)
    if level == 1 and count != LEVEL1_ROWS:
        raise InvalidReference(
            "Level 1 Pantry requires exactly six ingredients for its support mask",
            field_hint(
                "answer.ingredients",
                several(count, "ingredient", "ingredients"),
                f"exactly {LEVEL1_ROWS} at level 1",
            ),
        )
    return _build(rows, min_count, max_count, forbidden, targets)


def _build(
    rows: list[_RawRow],
    min_count: int,
    max_count: int,
    forbidden: frozenset[str],
    targets: dict[str, tuple[Decimal | None, Decimal | None]],
) -> PantryRef:
    # Target order never changes the outcome (every bound must hold); name order keeps it stable.
    attr_targets = tuple((name, *targets[name]) for name in sorted(targets) if name != MASS)
    mass_min, mass_max = targets.get(MASS, (None, None))
    points = sum((row.available - row.minimum) // row.step + 1 for row in rows)
    built = []
    for row in rows:
        values = tuple(row.attributes[name] for name, _, _ in attr_targets)
        table = None
        if points <= _PRECOMPUTE_POINTS:
            grid = range(row.minimum, row.available + 1, row.step)
            try:
                table = MappingProxyType({grams: _contribution(values, grams) for grams in grid})
            except Overflow:
                # Astronomic exponents: leave the arithmetic (and its failure) to grading time,
                # where the reference meets it too; validation itself must not fail here.
                table = None
        built.append(
            Row(row.id, row.available, row.step, row.minimum, bool(row.tags & forbidden), values, table)
        )
    return PantryRef(
        rows=tuple(built),
        by_id=MappingProxyType({row.id: row for row in built}),
        min_count=min_count,
        max_count=max_count,
        mass_min=mass_min,
        mass_max=mass_max,
        attr_targets=attr_targets,
        forbidden_tags=forbidden,
    )


__all__ = [
    "ATTRIBUTES",
    "DECIMAL",
    "KEY_PREFIX",
    "MASS",
    "MAX_GRAMS",
    "PantryRef",
    "Row",
    "to_decimal",
    "validate_reference",
]
