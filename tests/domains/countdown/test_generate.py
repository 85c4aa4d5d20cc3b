"""The Countdown task generator: determinism, row schema, level parameters, certified modes."""

from __future__ import annotations

import itertools
import json
import random
from typing import Any

import pytest

from modebench.domains._pipeline import grade_in_process
from modebench.domains.countdown import PLUGIN
from modebench.domains.countdown.generate import LEVELS, PROBLEM
from modebench.domains.countdown.modes import modes
from modebench.validation import loads
from tests.reference_data import SKIP_REASON, conformance_fixtures

COLUMNS = ["problem", "answer", "modebench_task", "answer_mode_count", "answer_mode_split"]
EXTRA = {
    3: [
        "level3_difficulty",
        "level3_generator",
        "level3_sampling_law",
        "level3_support_sampling_index",
        "level3_countdown_support7_exception",
        "level3_countdown_target_family",
    ],
    4: [
        "scale_countdown_target_family",
        "scale_origin_metadata",
        "scale_candidate_generator",
        "scale_candidate_tier",
        "scale_candidate_profile",
        "scale_cell_index",
    ],
}
EXTRA[5] = EXTRA[4]


def _rows(level: int, count: int, seed: int = 11) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    return [PLUGIN.generate(level, rng) for _ in range(count)]  # type: ignore[misc]


def _brute_force_keys(numbers: list[int], target: int, level: int) -> set[str]:
    """Independent §8.1 count: render every ordering × tree shape × operator text, grade it."""
    row = {"answer": {"verifier": "countdown", "numbers": numbers, "target": target}}

    def shapes(leaves: tuple[str, ...]) -> list[str]:
        if len(leaves) == 1:
            return [leaves[0]]
        return [
            f"({left}{op}{right})"
            for cut in range(1, len(leaves))
            for left in shapes(leaves[:cut])
            for right in shapes(leaves[cut:])
            for op in "+-*/"
        ]

    keys = set()
    for order in set(itertools.permutations(str(n) for n in numbers)):
        for text in shapes(order):
            got = grade_in_process(level, "countdown", row, text)
            if got["status"] == "correct":
                keys.add(got["canonical_key"])
    return keys


@pytest.mark.parametrize("level", [1, 2, 3, 4, 5])
def test_rows_are_deterministic_schema_true_and_graded_correct(level: int) -> None:
    rows = _rows(level, 6)
    assert rows == _rows(level, 6)
    assert rows != _rows(level, 6, seed=12)
    shape = LEVELS[level]
    for row in rows:
        assert list(row) == COLUMNS + EXTRA.get(level, [])
        answer = loads(row["answer"])
        assert row["answer"] == json.dumps(answer, sort_keys=True)
        numbers, target = answer["numbers"], answer["target"]
        assert row["problem"] == PROBLEM.format(numbers=numbers, target=target)
        assert "\n" not in row["problem"] and row["problem"].endswith("inside \\boxed{}.")
        assert len(numbers) in shape.operand_counts and numbers == sorted(set(numbers))
        assert all(shape.low <= n <= shape.high for n in numbers)
        assert 0 < target <= shape.max_target and target not in numbers
        count = row["answer_mode_count"]
        assert count == answer["num_expressions"] == answer["num_completions"]
        assert shape.min_modes <= count <= shape.max_modes
        assert row["modebench_task"] == "countdown" and answer["verifier"] == "countdown"
        witnesses = modes(tuple(numbers), target)
        assert len(witnesses) == count
        for key, text in witnesses.items():  # every certified witness grades to its own key
            got = grade_in_process(level, "countdown", row, f"\\boxed{{{text}}}")
            assert (got["status"], got["canonical_key"]) == ("correct", key)


@pytest.mark.parametrize("level", [1, 2, 5])
def test_mode_count_matches_brute_force(level: int) -> None:
    for row in _rows(level, 2, seed=3):
        answer = loads(row["answer"])
        keys = _brute_force_keys(answer["numbers"], answer["target"], level)
        assert len(keys) == row["answer_mode_count"]
        assert keys == set(modes(tuple(answer["numbers"]), answer["target"]))


def test_enumeration_reproduces_the_fixture_counts() -> None:
    fixtures = [f for f in conformance_fixtures() if f["domain"] == "countdown"]
    if not fixtures:
        pytest.skip(SKIP_REASON)
    for fixture in fixtures:
        answer = fixture["row"]["answer"]
        found = modes(tuple(answer["numbers"]), answer["target"])
        assert len(found) == answer["num_expressions"], fixture["config"]
        for case in fixture["cases"]:
            if case["expected"]["verified"]:
                assert case["expected"]["canonical_key"] in found


def test_spec_mode_list_for_level1_fixture() -> None:
    assert sorted(modes((3, 6, 9), 18)) == [
        f"countdown:{key}"
        for key in (
            "add(3,add(6,9))",
            "add(6,add(3,9))",
            "add(9,add(3,6))",
            "div(6,div(3,9))",
            "div(9,div(3,6))",
            "div(mul(6,9),3)",
            "mul(6,div(9,3))",
            "mul(9,div(6,3))",
        )
    ]
    # 2/0 is discarded (zero divisor); 2+0 and 0+2 are one mode.
    assert sorted(modes((2, 0), 2)) == ["countdown:add(0,2)", "countdown:sub(2,0)"]


def test_unknown_level_is_rejected() -> None:
    with pytest.raises(ValueError):
        PLUGIN.generate(6, random.Random(0))  # type: ignore[misc]
