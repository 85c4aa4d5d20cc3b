"""The python_factors task generator: determinism, schema, level shapes, grader acceptance and
mode counts recomputed by brute force through the verifier itself."""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import random
from typing import Any

import pytest

from modebench.domains._pipeline import grade_in_process
from modebench.domains.python_factors import PLUGIN
from modebench.domains.python_factors.generate import LEVELS, PROBLEM, certified_keys, seed_programs
from tests.reference_data import SKIP_REASON, conformance_fixtures

BASE_COLUMNS = ["problem", "answer", "modebench_task", "answer_mode_count", "answer_mode_split"]
EXTRA_COLUMNS = {
    1: [],
    2: [],
    3: ["level3_difficulty", "level3_generator", "level3_generation_profile", "level3_cell_index",
        "level3_python_preset", "level3_case_window", "level3_minimum_case_band",
        "level3_maximum_smallest_factor", "level3_case_max"],
    4: ["scale_candidate_generator", "scale_candidate_tier", "scale_candidate_profile", "scale_origin_metadata",
        "scale_cell_index", "scale_python_harder_law_version"],
    5: ["scale_candidate_generator", "scale_candidate_tier", "scale_candidate_profile", "scale_origin_metadata",
        "scale_cell_index", "scale_bridge_law_version"],
}  # fmt: skip
ALL_LEVELS = [1, 2, 3, 4, 5]
#: Observed eval value windows of spec §11.3.
WINDOWS = {1: (6, 96), 2: (6, 192), 3: (60, 254), 4: (25, 998), 5: (48, 996)}


def rows(level: int, seed: int, count: int = 128) -> list[dict[str, Any]]:
    assert PLUGIN.generate is not None
    rng = random.Random(seed)
    return [PLUGIN.generate(level, rng) for _ in range(count)]


def trial_divisors(value: int) -> list[int]:
    return [d for d in range(2, value) if value % d == 0]


def dispatch(cases: list[int], outputs: list[int]) -> str:
    arms = "".join(f"{d} if n=={v} else " for v, d in zip(cases[:-1], outputs[:-1]))
    return f"\\boxed{{lambda n: {arms}{outputs[-1]}}}"


@pytest.mark.parametrize("level", ALL_LEVELS)
def test_deterministic(level: int) -> None:
    assert rows(level, 7, 16) == rows(level, 7, 16)
    assert rows(level, 7, 16) != rows(level, 8, 16)


@pytest.mark.parametrize("level", ALL_LEVELS)
def test_schema_and_level_shape(level: int) -> None:
    shape = LEVELS[level]
    for row in rows(level, 100 + level):
        assert list(row) == BASE_COLUMNS + EXTRA_COLUMNS[level]
        answer = json.loads(row["answer"])
        assert row["answer"] == json.dumps(answer, sort_keys=True, separators=(",", ":"))
        cases = answer["cases"]
        assert len(cases) == {1: 4, 2: 4, 3: 4, 4: 6, 5: 4}[level] == shape.cases
        assert cases == sorted(set(cases))
        low, high = WINDOWS[level]
        assert all(low <= v <= high for v in cases)
        minimum = 1 if level == 4 else 2  # prime squares only at Level 4
        assert all(len(trial_divisors(v)) >= minimum for v in cases)
        if level == 2:
            assert max(cases) > 96
        modes = math.prod(len(trial_divisors(v)) for v in cases)
        assert answer["num_modes"] == row["answer_mode_count"] == modes >= 16
        assert answer["verifier"] == row["modebench_task"] == "python_factor_function"
        assert answer["python_version"] == "factor-v1"
        assert answer["num_externally_certified_modes"] == 2
        assert row["problem"] == PROBLEM.format(cases=", ".join(map(str, cases)))
        assert "\n" not in row["problem"] and "\\boxed{}" in row["problem"]


@pytest.mark.parametrize("level", ALL_LEVELS)
def test_rows_are_accepted_by_the_grader(level: int) -> None:
    for row in rows(level, 200 + level, 64):
        answer = json.loads(row["answer"])
        cases = answer["cases"]
        smallest = [trial_divisors(v)[0] for v in cases]
        largest = [trial_divisors(v)[-1] for v in cases]
        keys = set()
        for outputs in (smallest, largest):
            got = grade_in_process(level, "python_factors", row, dispatch(cases, outputs))
            assert got["status"] == "correct", got
            assert got["outputs"] == outputs
            keys.add(got["canonical_key"])
        digest = hashlib.sha256("\n".join(sorted(keys)).encode()).hexdigest()
        assert answer["certified_mode_key_sha256"] == digest


def accepted_outputs(level: int, row: dict[str, Any], cases: list[int]) -> list[list[int]]:
    """Per case, every integer in -2..n+1 the verifier accepts with the other outputs fixed."""
    fallback = [trial_divisors(v)[0] for v in cases]
    accepted = []
    for i, value in enumerate(cases):
        ok = []
        for d in range(-2, value + 2):
            outputs = fallback[:i] + [d] + fallback[i + 1 :]
            if (
                grade_in_process(level, "python_factors", row, dispatch(cases, outputs))["status"]
                == "correct"
            ):
                ok.append(d)
        accepted.append(ok)
    return accepted


@pytest.mark.parametrize("level", ALL_LEVELS)
def test_mode_count_by_brute_force(level: int) -> None:
    """Recount modes through the verifier: per-case acceptance, and every key for small rows."""
    generated = rows(level, 300 + level, 64)
    small = [r for r in generated if json.loads(r["answer"])["num_modes"] <= 400][:2]
    for row in generated[:2] + small:
        answer = json.loads(row["answer"])
        cases = answer["cases"]
        accepted = accepted_outputs(level, row, cases)
        assert math.prod(len(ok) for ok in accepted) == answer["num_modes"] == row["answer_mode_count"]
        if answer["num_modes"] <= 400:
            keys = set()
            for outputs in itertools.product(*accepted):
                got = grade_in_process(level, "python_factors", row, dispatch(cases, list(outputs)))
                assert got["status"] == "correct"
                keys.add(got["canonical_key"])
            assert len(keys) == answer["num_modes"]
    assert small or level in (4, 5)  # Levels 4-5 rarely have <= 400 modes


FIXTURES = [f for f in conformance_fixtures() if f["domain"] == "python_factors"]


@pytest.mark.skipif(not FIXTURES, reason=SKIP_REASON)
@pytest.mark.parametrize("fixture", FIXTURES, ids=[f["config"] for f in FIXTURES])
def test_recipe_reproduces_fixture_rows(fixture: dict[str, Any]) -> None:
    answer = fixture["row"]["answer"]
    cases = tuple(answer["cases"])
    assert fixture["row"]["problem"] == PROBLEM.format(cases=", ".join(map(str, cases)))
    keys = certified_keys(cases)
    assert len(keys) == answer["num_externally_certified_modes"]
    assert hashlib.sha256("\n".join(keys).encode()).hexdigest() == answer["certified_mode_key_sha256"]
    assert answer["num_modes"] == math.prod(len(trial_divisors(v)) for v in cases)
    assert [w["response"] for w in fixture["witnesses"]] == list(seed_programs(cases))
