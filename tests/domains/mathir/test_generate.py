"""Phase-2 generator: determinism, acceptance by the grader, per-level parameters, mode counts."""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
import random
import re
from typing import Any

import pytest

from modebench.domains import plugin
from modebench.domains._pipeline import grade_in_process
from modebench.domains.mathir.check import support
from modebench.domains.mathir.generate import FAMILIES, PROBLEM, generate
from modebench.domains.mathir.reference import validate_reference
from tests.reference_data import SKIP_REASON, conformance_fixtures

LEVEL_FAMILIES = {
    1: {"ax_plus_b_eq_c", "x_over_a_plus_b_eq_c", "ax_plus_b_eq_dx_plus_c", "ax_plus_b_eq_c_minus_dx"},
    2: {"ax_plus_b_eq_dx_plus_c", "ax_plus_b_eq_c_minus_dx"},
    3: {"ax_plus_b_eq_c", "level3_rational_equation_3"},
    4: {"level3_rational_equation_2", "level3_rational_equation_3"},
    5: {
        "level3_rational_equation_1",
        "scale_split_linear_sum_coefficient_denominator_v1",
        "scale_split_linear_difference_offset_denominator_v1",
        "scale_split_linear_sum_difference_denominators_v1",
    },
}
SOURCES = {
    1: "synthetic_mathir_action_menu_v1",
    2: "synthetic_mathir_action_menu_v1",
    3: "synthetic_mathir_level3_fixed_sign_candidates_v1",
    4: "synthetic_mathir_level3_candidates_v1",
    5: "modebench_scale_l5_mathir_structural_candidate_laws_v1",
}
EXTRA_COLUMNS = {
    1: [],
    2: [],
    3: ["level3_difficulty", "level3_generation_profile", "level3_cell_index"],
    4: [
        "scale_origin_metadata",
        "scale_candidate_generator",
        "scale_candidate_tier",
        "scale_candidate_profile",
        "scale_cell_index",
    ],
    5: [
        "scale_candidate_generator",
        "scale_candidate_tier",
        "scale_candidate_profile",
        "scale_origin_metadata",
        "scale_cell_index",
        "scale_generation_seed",
        "scale_structural_law_version",
    ],
}


@functools.cache
def _rows(level: int) -> list[dict[str, Any]]:
    """Generated lazily (not at collection time): 12 rows per level from a fixed seed."""
    rng = random.Random(1000 + level)
    return [generate(level, rng) for _ in range(12)]


def _answer(row: dict[str, Any]) -> dict[str, Any]:
    answer: dict[str, Any] = json.loads(row["answer"])
    return answer


def _digest(keys: set[str]) -> str:
    return hashlib.sha256("\n".join(sorted(keys)).encode("utf-8")).hexdigest()


def test_plugin_is_wired() -> None:
    found = plugin("mathir").generate
    assert found is not None
    assert found(2, random.Random(5)) == generate(2, random.Random(5))


@pytest.mark.parametrize("level", range(1, 6))
def test_deterministic(level: int) -> None:
    first = [generate(level, random.Random(7)) for _ in range(3)]
    rng = random.Random(7)
    again = [generate(level, rng) for _ in range(3)]
    assert again[0] == first[0]
    assert generate(level, random.Random(7)) == first[0]
    assert len({row["answer"] for row in again}) == 3


@pytest.mark.parametrize("level", range(1, 6))
def test_rows_follow_the_schema(level: int) -> None:
    for row in _rows(level):
        base = [
            "problem",
            "answer",
            "modebench_task",
            "answer_mode_count",
            "answer_mode_split",
            "mathir_family",
        ]
        assert list(row) == base + EXTRA_COLUMNS[level]
        answer = _answer(row)
        assert row["answer"] == json.dumps(answer, sort_keys=True, separators=(",", ":"))
        family = FAMILIES[answer["family"]]
        assert row["mathir_family"] == family.name and family.name in LEVEL_FAMILIES[level]
        assert answer["source"] == SOURCES[level]
        assert answer["verifier"] == "mathir_action_menu" and answer["mathir_version"] == "linear-menu-v1"
        assert answer["max_steps"] == 4 and answer["support_is_open"] is False
        assert list(answer["actions"]) == list("ABCDEF")
        assert sorted(answer["actions"].values()) == sorted(family.commands)
        assert (answer["initial_lhs"], answer["initial_rhs"]) == (family.lhs, family.rhs)
        assert answer["valid_mode_count"] == answer["num_completions"] == row["answer_mode_count"] == 5
        assert answer["valid_mode_key_sha256"] == family.digest
        problem = PROBLEM.format(
            bindings=", ".join(f"{k}={v}" for k, v in sorted(answer["bindings"].items())),
            display=family.display,
            menu="; ".join(f"{i} means {c}" for i, c in answer["actions"].items()),
        )
        assert row["problem"] == problem
        used = set(re.findall(r"\b[a-w]\b", family.lhs + "," + family.rhs))
        assert set(answer["bindings"]) == used


def _check_ranges(level: int, family: str, v: dict[str, int]) -> None:
    if level in (1, 2):
        assert v["a"] != 0 and -9 <= v["a"] <= 9 and -12 <= v["b"] <= 12
        if "d" in v:
            assert v["d"] != 0 and -9 <= v["d"] <= 9
            coefficient = v["a"] - v["d"] if family == "ax_plus_b_eq_dx_plus_c" else v["a"] + v["d"]
            assert coefficient != 0 and (v["c"] - v["b"]) % coefficient == 0
            assert 1 <= abs((v["c"] - v["b"]) // coefficient) <= 9
        elif family == "ax_plus_b_eq_c":
            assert (v["c"] - v["b"]) % v["a"] == 0 and 1 <= abs((v["c"] - v["b"]) // v["a"]) <= 9
        else:
            assert 1 <= abs(v["c"] - v["b"]) <= 9
    elif level == 3 and family == "ax_plus_b_eq_c":
        assert v["a"] * v["b"] < 0 and abs(v["a"]) <= 9 and 1 <= abs(v["b"]) <= 12
        assert (v["c"] - v["b"]) % v["a"] == 0 and 1 <= abs((v["c"] - v["b"]) // v["a"]) <= 9
    elif level == 3:
        assert all(1 <= abs(v[k]) <= 29 for k in "abcd") and all(1 <= v[k] <= 29 for k in "ef")
        assert v["a"] * v["f"] + v["d"] * v["e"] != 0
    elif level == 4:
        assert all(v[k] != 0 and abs(v[k]) <= 29 for k in "abcdef")
        if family == "level3_rational_equation_2":
            assert v["a"] * v["f"] != v["d"] * v["e"]
        else:
            assert v["a"] * v["f"] + v["d"] * v["e"] != 0
    else:
        assert all(v[k] != 0 and abs(v[k]) <= 13 for k in "abcdef")
        d1 = v["a"] + v["e"] if "add(a,e)" in FAMILIES[family].lhs else v["e"]
        d2 = v["b"] - v["f"] if "sub(b,f)" in FAMILIES[family].lhs else v["f"]
        assert d1 != 0 and d2 != 0 and v["a"] != v["d"] * d1


@pytest.mark.parametrize("level", range(1, 6))
def test_level_parameters(level: int) -> None:
    for row in _rows(level):
        answer = _answer(row)
        _check_ranges(level, answer["family"], answer["bindings"])


@pytest.mark.parametrize("level", range(1, 6))
def test_certified_witnesses_grade_correct(level: int) -> None:
    for row in _rows(level)[:6]:
        answer = _answer(row)
        witnesses = support(validate_reference(level, answer))
        assert len(witnesses) == 5
        for key, ids in witnesses.items():
            got = grade_in_process(level, "mathir", row, "\\boxed{" + ";".join(ids) + "}")
            assert (got["status"], got["canonical_key"]) == ("correct", key)


@pytest.mark.parametrize(("level", "index"), [(1, 0), (3, 1), (4, 0)])
def test_mode_count_by_brute_force(level: int, index: int) -> None:
    """Grade every ID program of length 1..4 independently of the DFS enumeration."""
    row = _rows(level)[index]
    keys = set()
    for length in range(1, 5):
        for ids in itertools.product("ABCDEF", repeat=length):
            got = grade_in_process(level, "mathir", row, ";".join(ids))
            assert got["status"] in {"correct", "incorrect"}
            if got["verified"]:
                keys.add(got["canonical_key"])
    assert len(keys) == row["answer_mode_count"]
    assert _digest(keys) == _answer(row)["valid_mode_key_sha256"]


FIXTURES = [f for f in conformance_fixtures() if f["domain"] == "mathir"]


@pytest.mark.skipif(not FIXTURES, reason=SKIP_REASON)
@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda f: f["config"])
def test_enumeration_reproduces_fixture_support(fixture: dict[str, Any]) -> None:
    answer = fixture["row"]["answer"]
    answer = json.loads(answer) if isinstance(answer, str) else answer
    keys = support(validate_reference(fixture["level"], answer))
    assert len(keys) == answer["valid_mode_count"]
    assert _digest(set(keys)) == answer["valid_mode_key_sha256"]
    assert {w["response"] for w in fixture["witnesses"]} <= {
        ";".join(ids) for ids in _all_programs(keys, answer)
    }


def _all_programs(keys: dict[str, tuple[str, ...]], answer: dict[str, Any]) -> set[tuple[str, ...]]:
    """Every ID program (length ≤ 4) whose graded key is in the support."""
    out = set()
    for length in range(1, 5):
        for ids in itertools.product(list(answer["actions"]), repeat=length):
            got = grade_in_process(1, "mathir", {"answer": answer}, ";".join(ids))
            if got["verified"]:
                assert got["canonical_key"] in keys
                out.add(ids)
    return out
