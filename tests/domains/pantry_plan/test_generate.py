"""PantryPlan generator: determinism, acceptance by the grader, per-level parameters, exact mode counts."""

from __future__ import annotations

import hashlib
import itertools
import json
import random
from fractions import Fraction
from typing import Any

import pytest

from modebench.domains._pipeline import grade_in_process
from modebench.domains.pantry_plan import PLUGIN
from modebench.domains.pantry_plan.generate import (
    ALLERGENS,
    FAMILIES,
    LEVELS,
    ingredient_table,
    render_problem,
)
from modebench.domains.pantry_plan.modes import feasible_supports, support_digest
from modebench.domains.pantry_plan.prompt import ALLOCATION_SUFFIX, template
from modebench.domains.pantry_plan.reference import validate_reference
from tests.reference_data import SKIP_REASON, conformance_fixtures

FIXTURES = [f for f in conformance_fixtures() if f["domain"] == "pantry_plan"]
PREFIX = "pantry_plan:pantry-v1:"
COMMON = [
    "problem",
    "answer",
    "modebench_task",
    "answer_mode_family",
    "answer_mode_count",
    "answer_mode_split",
    "instance_fingerprint",
]
COLUMNS = {
    1: COMMON,
    2: COMMON,
    3: COMMON + ["level3_difficulty", "level3_feasible_allocation_count", "level3_legal_allocation_count"],
    4: COMMON
    + [
        "scale_candidate_generator",
        "scale_candidate_tier",
        "scale_candidate_profile",
        "scale_origin_metadata",
        "scale_cell_index",
        "scale_generation_seed",
        "scale_bridge_law_version",
    ],
}
COLUMNS[5] = COLUMNS[4]


def rows_for(level: int, count: int, seed: int = 0) -> list[dict[str, Any]]:
    rng = random.Random(1000 * level + seed)
    return [PLUGIN.generate(level, rng) for _ in range(count)]  # type: ignore[misc]


def brute_force_supports(answer: dict[str, Any]) -> list[str]:
    """Independent §11.1 oracle in scaled integers (every table value and bound has ≤ 3 decimals)."""

    def scaled(value: str, factor: int) -> int:
        exact = Fraction(value) * factor
        assert exact.denominator == 1
        return int(exact)

    rows = answer["ingredients"]
    forbidden = set(answer["forbidden_tags"])
    targets = answer["targets"]
    found = []
    for size in range(answer["min_ingredients"], answer["max_ingredients"] + 1):
        for combo in itertools.combinations(rows, size):
            if any(forbidden & set(row["tags"]) for row in combo):
                continue
            grids = [range(r["min_if_used_g"], r["available_g"] + 1, r["step_g"]) for r in combo]
            for grams in itertools.product(*grids):
                ok = True
                for name, bounds in targets.items():
                    if name == "mass_g":
                        total = sum(grams) * 100_000
                    else:  # value/100 * g, scaled by 100000 -> value*1000 * g
                        total = sum(
                            scaled(r["attributes_per_100g"][name], 1000) * g for r, g in zip(combo, grams)
                        )
                    if "min" in bounds and total < scaled(bounds["min"], 100_000):
                        ok = False
                    if "max" in bounds and total > scaled(bounds["max"], 100_000):
                        ok = False
                if ok:
                    found.append("+".join(sorted(r["id"] for r in combo)))
                    break
    return sorted(found)


@pytest.mark.parametrize("level", [1, 2, 3, 4, 5])
def test_deterministic(level: int) -> None:
    assert rows_for(level, 3, seed=7) == rows_for(level, 3, seed=7)
    assert rows_for(level, 1, seed=7) != rows_for(level, 1, seed=8)


@pytest.mark.parametrize("level", [1, 2, 3, 4, 5])
def test_rows_have_level_schema_and_parameters(level: int) -> None:
    table, table_sha = ingredient_table()
    params = LEVELS[level]
    for row in rows_for(level, 12):
        assert list(row) == COLUMNS[level]
        answer = json.loads(row["answer"])
        assert row["answer"] == json.dumps(answer, sort_keys=True, separators=(",", ":"))
        assert row["problem"] == render_problem(answer) and row["problem"].endswith(ALLOCATION_SUFFIX)
        assert row["modebench_task"] == "pantry_plan" and row["answer_mode_split"] == params.split_tag
        assert row["answer_mode_family"] == answer["family"] and answer["family"] in FAMILIES
        assert row["answer_mode_count"] == answer["certified_mode_count"]
        assert 8 <= answer["certified_mode_count"] <= 64
        assert answer["source_ingredient_table_sha256"] == table_sha
        assert (answer["min_ingredients"], answer["max_ingredients"]) == (2, 4)
        ids = [item["id"] for item in answer["ingredients"]]
        assert ids == sorted(ids)
        assert len(ids) in {min(size, len(FAMILIES[answer["family"]][0])) for size in params.rows}
        assert set(ids) <= set(FAMILIES[answer["family"]][0])
        for item in answer["ingredients"]:
            assert (item["step_g"], item["min_if_used_g"]) == (25, 50) and item["available_g"] in (
                100,
                125,
                150,
            )
            assert item["attributes_per_100g"] == table[item["id"]]["attributes_per_100g"]
            assert item["tags"] == table[item["id"]]["tags"]
        assert set(answer["forbidden_tags"]) <= set(ALLERGENS) and len(answer["forbidden_tags"]) <= 1
        assert sum(not set(i["tags"]) & set(answer["forbidden_tags"]) for i in answer["ingredients"]) >= 4
        if level == 4:
            assert {
                answer["targets"][n]["min"] for n in ("mass_g", "energy_kcal", "protein_g", "fiber_g")
            } == {"0"}
        if level == 1:
            assert len(ids) == 6
            assert template(1, "registered_hints_v1").user(row["problem"]).endswith("bit 0 excludes it.")
        spec = {k: v for k, v in answer.items() if k != "instance_id"}
        encoded = json.dumps(spec, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode("ascii")
        assert row["instance_fingerprint"] == hashlib.sha256(encoded).hexdigest()


def test_level2_activates_available_exclusions() -> None:
    for row in rows_for(2, 20):
        answer = json.loads(row["answer"])
        present = {t for i in answer["ingredients"] for t in i["tags"]} & set(ALLERGENS)
        assert bool(answer["forbidden_tags"]) == bool(present)


@pytest.mark.parametrize("level", [1, 2, 3, 4, 5])
def test_certified_modes_are_exact_and_graded_correct(level: int) -> None:
    for index, row in enumerate(rows_for(level, 4)):
        answer = json.loads(row["answer"])
        supports = brute_force_supports(answer) if index < 2 else None
        ref = validate_reference(level, answer)
        found = feasible_supports(ref)
        if supports is not None:  # independent brute force on a couple of rows per level
            assert sorted("+".join(r.id for r in rows) for rows, _ in found) == supports
        assert len(found) == answer["certified_mode_count"]
        assert (
            support_digest([[r.id for r in rows] for rows, _ in found]) == answer["certified_support_sha256"]
        )
        keys = set()
        order = [item["id"] for item in answer["ingredients"]]
        for rows, point in found:
            if level == 1:
                mask = "".join("1" if ident in {r.id for r in rows} else "0" for ident in order)
                response = mask
            else:
                response = "\\boxed{" + ";".join(f"{r.id}={g}" for r, g in zip(rows, point)) + "}"
            got = grade_in_process(level, "pantry_plan", row, response)
            assert got["status"] == "correct", (response, got)
            keys.add(got["canonical_key"])
        assert len(keys) == answer["certified_mode_count"]


def test_level3_allocation_counts_are_consistent() -> None:
    for row in rows_for(3, 3):
        assert (
            row["level3_legal_allocation_count"]
            >= row["level3_feasible_allocation_count"]
            >= row["answer_mode_count"]
        )


@pytest.mark.skipif(not FIXTURES, reason=SKIP_REASON)
@pytest.mark.parametrize("fixture", FIXTURES, ids=[f["config"] for f in FIXTURES])
def test_enumeration_and_renderer_reproduce_fixture_rows(fixture: dict[str, Any]) -> None:
    answer = fixture["row"]["answer"]
    answer = json.loads(answer) if isinstance(answer, str) else answer
    found = feasible_supports(validate_reference(fixture["level"], answer))
    assert len(found) == answer["certified_mode_count"]
    assert support_digest([[r.id for r in rows] for rows, _ in found]) == answer["certified_support_sha256"]
    assert render_problem(answer) == fixture["row"]["problem"]


@pytest.mark.skipif(not FIXTURES, reason=SKIP_REASON)
def test_ingredient_table_matches_fixture_values() -> None:
    table, _ = ingredient_table()
    seen = set()
    for fixture in FIXTURES:
        answer = fixture["row"]["answer"]
        answer = json.loads(answer) if isinstance(answer, str) else answer
        for item in answer["ingredients"]:
            assert table[item["id"]]["attributes_per_100g"] == item["attributes_per_100g"]
            assert table[item["id"]]["tags"] == item["tags"]
            seen.add(item["id"])
    assert seen <= set(table)


def test_ingredient_table_hash_and_provenance() -> None:
    from importlib import resources

    doc = json.loads(
        resources.files("modebench.domains.pantry_plan").joinpath("ingredients.json").read_text("utf-8")
    )
    encoded = json.dumps(doc["ingredients"], sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    assert doc["ingredient_table_sha256"] == hashlib.sha256(encoded.encode("ascii")).hexdigest()
    assert doc["source"]["license"].startswith("CC0-1.0")
    assert len(doc["ingredients"]) == 13
    for pool, _ in FAMILIES.values():
        assert set(pool) <= {item["id"] for item in doc["ingredients"]}


def test_known_certified_hash_example() -> None:
    lines = (
        "almonds+banana almonds+banana+grape_tomatoes almonds+banana+grape_tomatoes+navel_orange "
        "almonds+banana+navel_orange almonds+grape_tomatoes almonds+grape_tomatoes+navel_orange "
        "almonds+navel_orange banana+grape_tomatoes+navel_orange+sunflower_seeds "
        "banana+grape_tomatoes+sunflower_seeds banana+navel_orange+sunflower_seeds banana+sunflower_seeds "
        "grape_tomatoes+navel_orange+sunflower_seeds grape_tomatoes+sunflower_seeds "
        "navel_orange+sunflower_seeds"
    ).split()
    digest = support_digest([line.split("+") for line in reversed(lines)])
    assert digest == "af0ced590203a0cbce6a9a2bca80fd3dfb3cdb6a12a1eea845176da5bd339b83"
