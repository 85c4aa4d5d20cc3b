"""The graph-coloring generator: determinism, level parameters, exact counts, grader acceptance."""

from __future__ import annotations

import itertools
import json
import random
from typing import Any

import pytest

from modebench.domains._pipeline import grade_in_process
from modebench.domains.graph_coloring import PLUGIN
from modebench.domains.graph_coloring.generate import LEVELS, render_problem
from modebench.validation import loads
from tests.reference_data import SKIP_REASON, conformance_fixtures

ROWS = {
    level: [PLUGIN.generate(level, random.Random(1000 * level + i)) for i in range(24)] for level in LEVELS
}
ALL = [
    pytest.param(level, row, id=f"L{level}-{i}") for level, rows in ROWS.items() for i, row in enumerate(rows)
]
COLUMNS = {
    1: ["problem", "answer", "modebench_task", "answer_mode_count", "answer_mode_split"],
    2: ["problem", "answer", "modebench_task", "answer_mode_count", "answer_mode_split"],
    3: [
        "problem",
        "answer",
        "modebench_task",
        "answer_mode_count",
        "answer_mode_split",
        "level3_difficulty",
        "level3_generator",
        "level3_graph_preset",
        "level3_cell_index",
    ],
    4: [
        "problem",
        "answer",
        "modebench_task",
        "answer_mode_count",
        "answer_mode_split",
        "scale_candidate_generator",
        "scale_candidate_tier",
        "scale_candidate_profile",
        "scale_origin_metadata",
        "scale_cell_index",
        "scale_bridge_law_version",
    ],
    5: [
        "problem",
        "answer",
        "modebench_task",
        "answer_mode_count",
        "answer_mode_split",
        "scale_candidate_generator",
        "scale_candidate_tier",
        "scale_candidate_profile",
        "scale_origin_metadata",
        "scale_cell_index",
        "scale_graph_topology_law_version",
    ],
}
RANGES = {1: ({4, 5, 6}, {3}), 2: ({5, 6}, {4}), 3: ({5}, {3}), 4: ({5, 6}, {3, 4}), 5: ({6, 7}, {3, 4})}


def _brute(answer: dict[str, Any]) -> tuple[int, set[str]]:
    """Independent count: (proper colourings ignoring fixed colours, completions of the partial)."""
    n = answer["n"]
    proper = [
        "".join(c)
        for c in itertools.product("123", repeat=n)
        if all(c[u - 1] != c[v - 1] for u, v in answer["edges"])
    ]
    shown = answer["partial_colors"]
    completions = {c for c in proper if all(p is None or str(p) == d for p, d in zip(shown, c))}
    return len(proper), completions


def test_deterministic() -> None:
    for level in LEVELS:
        assert PLUGIN.generate(level, random.Random(7)) == PLUGIN.generate(level, random.Random(7))
    rng_a, rng_b = random.Random(3), random.Random(3)
    assert [PLUGIN.generate(2, rng_a) for _ in range(3)] == [PLUGIN.generate(2, rng_b) for _ in range(3)]
    assert len({ROWS[1][i]["answer"] for i in range(24)}) > 1


def test_unknown_level() -> None:
    with pytest.raises(ValueError):
        PLUGIN.generate(6, random.Random(0))


@pytest.mark.parametrize(("level", "row"), ALL)
def test_row_schema_and_parameters(level: int, row: dict[str, Any]) -> None:
    assert list(row) == COLUMNS[level]
    assert isinstance(row["answer"], str)
    answer = loads(row["answer"])
    assert row["answer"] == json.dumps(answer, sort_keys=True, separators=(",", ":"))
    assert set(answer) == {
        "verifier",
        "n",
        "edges",
        "partial_colors",
        "source",
        "instance_id",
        "num_solutions",
        "num_completions",
    }
    vertices, hidden = RANGES[level]
    n = answer["n"]
    assert n in vertices
    assert answer["partial_colors"].count(None) in hidden
    edges = answer["edges"]
    assert max(1, n - 2) <= len(edges) <= min(8, n * (n - 1) // 2)
    assert edges == sorted(edges) and len({tuple(e) for e in edges}) == len(edges)
    assert all(1 <= u < v <= n for u, v in edges)
    assert 4 <= answer["num_completions"] <= 24
    assert row["modebench_task"] == "graph_coloring"
    assert row["answer_mode_count"] == answer["num_completions"]
    assert answer["instance_id"].startswith(row["answer_mode_split"] + "-")
    assert row["problem"] == render_problem(answer)


@pytest.mark.parametrize(("level", "row"), ALL)
def test_counts_match_brute_force_and_grader(level: int, row: dict[str, Any]) -> None:
    answer = loads(row["answer"])
    solutions, completions = _brute(answer)
    assert answer["num_solutions"] == solutions
    assert answer["num_completions"] == len(completions)
    hidden = [i for i, p in enumerate(answer["partial_colors"]) if p is None]
    for coloring in completions:  # every mode, in full and fill form, boxed as the prompt asks
        fill = "".join(coloring[i] for i in hidden)
        for text in (coloring, f"\\boxed{{{fill}}}"):
            got = grade_in_process(level, "graph_coloring", row, text)
            assert got["status"] == "correct" and got["canonical_key"] == f"graph_coloring:{coloring}"
    for fill in itertools.product("123", repeat=len(hidden)):
        got = grade_in_process(level, "graph_coloring", row, "".join(fill))
        assert got["verified"] is (got["canonical_key"] is not None)
    accepted = {
        grade_in_process(level, "graph_coloring", row, "".join(f))["canonical_key"]
        for f in itertools.product("123", repeat=len(hidden))
    } - {None}
    assert accepted == {f"graph_coloring:{c}" for c in completions}


@pytest.mark.parametrize("level", sorted(LEVELS))
def test_render_problem_matches_fixture_rows(level: int) -> None:
    fixtures = [f for f in conformance_fixtures() if f["config"] == f"level{level}_graph_coloring"]
    if not fixtures:
        pytest.skip(SKIP_REASON)
    row = fixtures[0]["row"]
    assert render_problem(row["answer"]) == row["problem"]
    assert _brute(row["answer"])[0] == row["answer"]["num_solutions"]
    assert len(_brute(row["answer"])[1]) == row["answer"]["num_completions"]


def test_no_edges_renders_none() -> None:
    answer = {"n": 2, "edges": [], "partial_colors": [1, None]}
    assert "The undirected edges are: none. " in render_problem(answer)
    assert "There are exactly 1 question marks." in render_problem(answer)
