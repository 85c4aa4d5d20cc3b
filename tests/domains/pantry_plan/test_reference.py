"""Reference rules of spec §4 beyond the §13 vectors (each mutation of a valid named reference)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from modebench.domains._pipeline import grade_in_process

NAMED = json.loads(Path(__file__).with_name("vectors.json").read_text(encoding="utf-8"))["named_references"]


def base() -> dict[str, Any]:
    return copy.deepcopy(NAMED["XY_decimal"])


def row(ident: str = "z", **changes: Any) -> dict[str, Any]:
    out = {
        "id": ident,
        "available_g": 50,
        "step_g": 25,
        "min_if_used_g": 50,
        "attributes_per_100g": {"energy_kcal": "1"},
    }
    out.update(changes)
    return out


def with_rows(*extra: dict[str, Any], first: dict[str, Any] | None = None) -> dict[str, Any]:
    answer = base()
    if first is not None:
        answer["ingredients"][0] = first
    answer["ingredients"] += list(extra)
    return answer


INVALID = {
    "rows-one": {
        **base(),
        "ingredients": base()["ingredients"][:1],
        "min_ingredients": 1,
        "max_ingredients": 1,
    },
    "rows-seventeen": {**base(), "ingredients": [row(f"r{i}") for i in range(17)]},
    "rows-not-list": {**base(), "ingredients": {"x": 1}},
    "row-not-object": with_rows(first=["x"]),  # type: ignore[arg-type]
    "id-missing": with_rows(first={k: v for k, v in row("x").items() if k != "id"}),
    "id-too-long": with_rows(first=row("x" * 33)),
    "id-digit-first": with_rows(first=row("1x")),
    "id-hyphen": with_rows(first=row("x-y")),
    "id-number": with_rows(first=row(5)),  # type: ignore[arg-type]
    "available-zero": with_rows(first=row("x", available_g=0)),
    "available-10001": with_rows(first=row("x", available_g=10025)),
    "step-zero": with_rows(first=row("x", step_g=0)),
    "step-1001": with_rows(first=row("x", available_g=2002, step_g=1001, min_if_used_g=1001)),
    "min-above-available": with_rows(first=row("x", min_if_used_g=75)),
    "min-misaligned": with_rows(first=row("x", available_g=100, min_if_used_g=50, step_g=20)),
    "attributes-empty": with_rows(first=row("x", attributes_per_100g={})),
    "attributes-list": with_rows(first=row("x", attributes_per_100g=["energy_kcal"])),
    "attribute-bool": with_rows(first=row("x", attributes_per_100g={"energy_kcal": True})),
    "attribute-null": with_rows(first=row("x", attributes_per_100g={"energy_kcal": None})),
    "attribute-infinity": with_rows(first=row("x", attributes_per_100g={"energy_kcal": "Infinity"})),
    "attribute-garbage": with_rows(first=row("x", attributes_per_100g={"energy_kcal": "5 g"})),
    "tags-not-list": with_rows(first=row("x", tags="nuts")),
    "tags-null": with_rows(first=row("x", tags=None)),  # implementation choice: present-but-null rejected
    "tags-uppercase": with_rows(first=row("x", tags=["Nut"])),
    "tags-too-many": with_rows(first=row("x", tags=[f"t{i}" for i in range(33)])),
    "tags-duplicate": with_rows(first=row("x", tags=["a", "a"])),
    "forbidden-too-many": {**base(), "forbidden_tags": [f"t{i}" for i in range(33)]},
    "forbidden-null": {**base(), "forbidden_tags": None},
    "min-count-zero": {**base(), "min_ingredients": 0},
    "min-count-bool": {**base(), "min_ingredients": True},
    "min-count-float": {**base(), "min_ingredients": 2.0},
    "certified-too-big": {**base(), "certified_mode_count": 1_000_001},
    "certified-bool": {**base(), "certified_mode_count": True},
    "targets-missing": {k: v for k, v in base().items() if k != "targets"},
    "targets-list": {**base(), "targets": [{"mass_g": {"min": 1}}]},
    "target-not-object": {**base(), "targets": {"mass_g": 5}},
    "target-bool-bound": {**base(), "targets": {"mass_g": {"min": True}}},
    "target-null-bound": {**base(), "targets": {"mass_g": {"max": None}}},
    "target-negative": {**base(), "targets": {"mass_g": {"min": "-1"}}},
    "version-missing": {k: v for k, v in base().items() if k != "pantry_version"},
}

VALID = {
    "min-equal-max": {**base(), "targets": {"mass_g": {"min": "100", "max": "100"}}},
    "float-bounds": {**base(), "targets": {"energy_kcal": {"min": 0.5, "max": 1e2}}},
    "underscore-decimal": with_rows(first=row("x", attributes_per_100g={"energy_kcal": "1_15"})),
    "negative-zero": with_rows(first=row("x", attributes_per_100g={"energy_kcal": "-0"})),
    "untargeted-extra-attribute": with_rows(
        first=row("x", attributes_per_100g={"energy_kcal": "1", "fat_g": "3"})
    ),
    "tags-and-forbidden": {
        **with_rows(first=row("x", tags=["soy", "tree_nut"])),
        "forbidden_tags": ["peanut"],
    },
    "id-max-length": with_rows(first=row("x" * 32)),
    "sixteen-rows": {
        **base(),
        "ingredients": [row(f"r{i}") for i in range(16)],
        "targets": {"mass_g": {"min": 1}},
    },
}


@pytest.mark.parametrize("name", sorted(INVALID))
def test_invalid_reference(name: str) -> None:
    got = grade_in_process(2, "pantry_plan", {"answer": INVALID[name]}, "x=50;y=50")
    assert (got["status"], got["graded_text"]) == ("invalid_reference", "x=50;y=50"), got


@pytest.mark.parametrize("name", sorted(VALID))
def test_valid_reference(name: str) -> None:
    got = grade_in_process(2, "pantry_plan", {"answer": VALID[name]}, "x=50;y=50")
    assert got["status"] in {"correct", "incorrect"}, got


def test_level1_requires_six_rows_only_at_level1() -> None:
    answer = {**base(), "ingredients": [row(f"r{i}") for i in range(5)], "targets": {"mass_g": {"min": 1}}}
    assert grade_in_process(1, "pantry_plan", {"answer": answer}, "110000")["status"] == "invalid_reference"
    assert grade_in_process(3, "pantry_plan", {"answer": answer}, "r0=50;r1=50")["status"] == "correct"


def test_forbidden_row_makes_allocation_incorrect_not_invalid() -> None:
    answer = {**with_rows(first=row("x", tags=["soy"])), "forbidden_tags": ["soy"]}
    got = grade_in_process(2, "pantry_plan", {"answer": answer}, "x=50;y=50")
    assert got["status"] == "incorrect"
