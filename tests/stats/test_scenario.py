"""The A / A2 / B scenario of issue #31: is the mode loss of checkpoint B more than sampling alone?

Two bundled configs (level-1 Countdown and graph colouring, their multi-answer eval splits), k = 8.
Policy A spreads its correct draws over all of a prompt's modes; A2 is an independent re-sample
of the same policy; B puts most of its correct draws into one mode. Sampling alone loses some of
A's modes (A→A2 retention well below 1): the within-run split-half baseline must say how much,
A vs A2 must not differ from it, A vs B must. Every retention number is checked against an
independent brute force over the journals' draws (all split halves, all pairs of subsets).
"""

from __future__ import annotations

import itertools
import random
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from modebench import api
from modebench.domains import plugin as get_plugin
from tests.stats.conftest import evaluate_records, journal_draws

CONFIGS = ("level1_countdown", "level1_graph_coloring")
DRAWS = 8
WRONG = "\\boxed{}"


def _policy(tasks: list[Any], seed: int, focus: float) -> list[dict[str, Any]]:
    """Draws of a toy policy: a wrong answer with probability 0.15; otherwise the first mode with
    probability ``focus`` and a uniformly chosen mode else."""
    rng = random.Random(seed)
    records = []
    for task in tasks:
        modes = get_plugin(task.domain).witnesses(task.level, dict(task.answer))
        responses = []
        for _ in range(DRAWS):
            if rng.random() < 0.15:
                responses.append(WRONG)
            elif rng.random() < focus:
                responses.append(f"\\boxed{{{modes[0]}}}" if task.domain == "countdown" else modes[0])
            else:
                chosen = rng.choice(modes)
                responses.append(f"\\boxed{{{chosen}}}" if task.domain == "countdown" else chosen)
        records.append({"id": task.id, "level": task.level, "domain": task.domain, "problem": task.problem,
                        "answer": dict(task.answer), "responses": responses})  # fmt: skip
    return records


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    pytest.importorskip("pyarrow", reason="the bundled configs are Parquet (the 'data' extra)")
    root = tmp_path_factory.mktemp("scenario")
    tasks = [t for config in CONFIGS for t in api.load_tasks(config, registry="bundled")]
    tasks = [t for t in tasks if len(get_plugin(t.domain).witnesses(t.level, dict(t.answer))) >= 2]
    assert len(tasks) >= 40
    return {
        "A": evaluate_records(root / "a", "A", _policy(tasks, 1, 0.0)),
        "A2": evaluate_records(root / "a2", "A2", _policy(tasks, 2, 0.0)),
        "B": evaluate_records(root / "b", "B", _policy(tasks, 3, 0.85)),
    }


def _modes(draws: list[str | None], chosen: tuple[int, ...]) -> set[str]:
    return {m for m in (draws[i] for i in chosen) if m is not None}


def _brute(a: list[str | None], b: list[str | None], h: int) -> tuple[Fraction, Fraction, Fraction]:
    """(E|M1 ∩ M2| over all disjoint h-halves of A, E|M_A^h ∩ M_B^h| over all pairs of h-subsets,
    E|M_A^h|), by enumeration."""
    n = len(a)
    both = single = Fraction(0)
    splits = 0
    for first in itertools.combinations(range(n), h):
        rest = [i for i in range(n) if i not in first]
        for second in itertools.combinations(rest, h):
            one = _modes(a, first)
            both += len(one & _modes(a, second))
            single += len(one)
            splits += 1
    subsets_a = [_modes(a, s) for s in itertools.combinations(range(n), h)]
    subsets_b = [_modes(b, s) for s in itertools.combinations(range(len(b)), h)]
    cross = sum(len(x & y) for x in subsets_a for y in subsets_b)
    return both / splits, Fraction(cross, len(subsets_a) * len(subsets_b)), single / splits


def _overall(table: Any, run_b: str, metric: str) -> dict[str, Any]:
    return next(r for r in table.rows if r["run_b"] == run_b and r["metric"] == metric and r["level"] is None
                and r["domain"] is None)  # fmt: skip


def test_baseline_separates_resampling_from_collapse(runs: dict[str, Path]) -> None:
    table = api.compare_runs(
        [runs["A"], runs["A2"], runs["B"]], resamples=400, labels={str(runs["A2"]): "A2"}
    )
    labels = [run["label"] for run in table.meta["runs"]]
    assert labels[1] == "A2" and len(set(labels)) == 3  # same model id: still three distinct labels
    a2, b = labels[1], labels[2]
    same = _overall(table, a2, "retention_vs_baseline")
    collapsed = _overall(table, b, "retention_vs_baseline")
    baseline = _overall(table, a2, "retention_baseline")
    # Sampling alone loses modes: the baseline itself is well below 1, and A→A2 sits on it.
    assert baseline["estimate"] < 0.9
    assert same["p_value"] > 0.05 and same["p_holm"] > 0.05
    assert same["ci_high"] > 0  # no loss beyond sampling (the one-sided question)
    # B keeps fewer of A's modes than A keeps of itself.
    assert collapsed["estimate"] < -0.1
    assert collapsed["p_value"] < 1e-3 and collapsed["p_holm"] < 0.01
    assert collapsed["ci_high"] < 0

    # Exact values against an independent computation over the journals' draws.
    draws = {name: journal_draws(path) for name, path in runs.items()}
    half = DRAWS // 2
    for other, label in (("A2", a2), ("B", b)):
        totals = [Fraction(0)] * 3
        for key, mine in draws["A"].items():
            for i, value in enumerate(_brute(mine, draws[other][key], half)):
                totals[i] += value
        row = _overall(table, label, "retention_vs_baseline")
        assert row["k"] == half
        assert row["a"] == pytest.approx(float(totals[0] / totals[2]), abs=1e-12)
        assert row["b"] == pytest.approx(float(totals[1] / totals[2]), abs=1e-12)
        assert row["estimate"] == pytest.approx(float((totals[1] - totals[0]) / totals[2]), abs=1e-12)
        # At the full common draws, mode retention is the plain set statistic.
        kept = sum(
            len({m for m in mine if m} & {m for m in draws[other][key] if m})
            for key, mine in draws["A"].items()
        )
        found = sum(len({m for m in mine if m}) for mine in draws["A"].values())
        full = _overall(table, label, "mode_retention")
        assert full["k"] == DRAWS
        assert full["estimate"] == pytest.approx(kept / found, abs=1e-12)
    # The stats of one run carry its own baseline, equal to the one compare reports for A.
    own = api.curves(runs["A"], resamples=50)
    row = next(
        r
        for r in own.rows
        if r["metric"] == "retention_baseline" and r["level"] is None and r["domain"] is None
    )
    assert row["estimate"] == pytest.approx(baseline["estimate"], abs=1e-15)
