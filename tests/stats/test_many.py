"""Equal budgets, suites and many runs: compare at the common k, suites part by part, Holm."""

from __future__ import annotations

import itertools
import json
import random
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from modebench import api
from modebench.cli import main
from modebench.domains import plugin
from modebench.stats.many import holm
from modebench.validation import InputError
from tests.stats.conftest import evaluate_records, journal_draws

WRONG = "\\boxed{}"


def _rows(domain: str, level: int, count: int, seed: int) -> list[dict[str, Any]]:
    """Generated prompts (the domain's own generator) with their witnesses: one response per mode."""
    found = []
    for i in range(count):
        row = plugin(domain).generate(level, random.Random(seed + i))
        answer = json.loads(row["answer"]) if isinstance(row["answer"], str) else row["answer"]
        modes = plugin(domain).witnesses(level, answer)
        texts = [f"\\boxed{{{m}}}" if domain == "countdown" else m for m in modes]
        found.append({"id": f"{domain}/{level}/{i}", "level": level, "domain": domain,
                      "answer": answer, "modes": texts})  # fmt: skip
    return found


def _sample(rows: list[dict[str, Any]], draws: int, seed: int, focus: float) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    records = []
    for row in rows:
        responses = []
        for _ in range(draws):
            if rng.random() < 0.2:
                responses.append(WRONG)
            else:
                responses.append(row["modes"][0] if rng.random() < focus else rng.choice(row["modes"]))
        records.append({k: row[k] for k in ("id", "level", "domain", "answer")} | {"responses": responses})
    return records


def _all_cells(table: Any, metric: str, k: int | None = None) -> dict[str, Any]:
    return next(r for r in table.rows if r["metric"] == metric and r["k"] == k and r["level"] is None
                and r["domain"] is None)  # fmt: skip


@pytest.fixture(scope="module")
def budget(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("budget")
    rows = _rows("countdown", 1, 6, 100) + _rows("graph_coloring", 1, 6, 200)
    return {
        "eight": evaluate_records(root / "8", "eight", _sample(rows, 8, 1, 0.0)),
        "four": evaluate_records(root / "4", "four", _sample(rows, 4, 2, 0.5)),
    }


def test_unequal_draws_are_refused_with_the_reason(
    budget: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(
        InputError, match=r"different draws per prompt \(8 and 4\).*no exact equivalent at k = 4"
    ):
        api.compare(budget["eight"], budget["four"])
    with pytest.raises(SystemExit) as refused:
        main(["compare", str(budget["eight"]), str(budget["four"])])
    assert refused.value.code == 2
    err = capsys.readouterr().err
    assert "--allow-unequal-draws" in err and "Traceback" not in err


def test_unequal_draws_compared_at_the_common_k_exactly(
    budget: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    table = api.compare(budget["eight"], budget["four"], allow_unequal_draws=True, resamples=50)
    ks = {r["k"] for r in table.rows if r["k"] is not None}
    assert max(ks) == 4  # nothing above the common k
    assert any("k <= 4" in note for note in table.meta["comparisons"][0]["notes"])
    eight, four = journal_draws(budget["eight"]), journal_draws(budget["four"])
    # Brute force over every 4-subset of the 8-draw run (and the 4-draw run as it is).
    passes = distincts = kept = found = Fraction(0)
    for ident, draws in eight.items():
        subsets = list(itertools.combinations(draws, 4))
        passes += Fraction(sum(any(d is not None for d in s) for s in subsets), len(subsets))
        distincts += Fraction(sum(len({d for d in s if d is not None}) for s in subsets), len(subsets))
        other = {d for d in four[ident] if d is not None}
        kept += Fraction(sum(len({d for d in s if d is not None} & other) for s in subsets), len(subsets))
        found += Fraction(sum(len({d for d in s if d is not None}) for s in subsets), len(subsets))
    prompts = len(eight)
    assert _all_cells(table, "pass_at_k", 4)["a"] == pytest.approx(float(passes / prompts), abs=1e-12)
    assert _all_cells(table, "distinct_at_k", 4)["a"] == pytest.approx(float(distincts / prompts), abs=1e-12)
    assert _all_cells(table, "mode_retention", 4)["estimate"] == pytest.approx(float(kept / found), abs=1e-12)
    # The CLI says so beside the table.
    assert main(["compare", str(budget["eight"]), str(budget["four"]), "--allow-unequal-draws",
                 "--resamples", "20"]) == 0  # fmt: skip
    assert "compared at k <= 4 by exact unbiased estimators" in capsys.readouterr().err


def test_holm_by_hand() -> None:
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([]) == [] and holm([0.5]) == [0.5] and holm([0.6, 0.7]) == [1.0, 1.0]


def _hand_holm(values: list[float]) -> list[float]:
    """Holm written from its definition: reject in order while p_(i) ≤ α/(m − i + 1); the adjusted
    p-value is the smallest α at which the hypothesis would be rejected."""
    m = len(values)
    ranked = sorted(values)
    out = []
    for p in values:
        i = ranked.index(p)
        out.append(min(1.0, max((m - j) * ranked[j] for j in range(i + 1))))
    return out


@pytest.fixture(scope="module")
def suites(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("suites")
    countdown = _rows("countdown", 1, 16, 300) + _rows("countdown", 2, 16, 400)
    graph = _rows("graph_coloring", 1, 16, 500)
    found = {}
    for name, seed, focus in (("A", 1, 0.0), ("A2", 2, 0.0), ("B", 3, 0.95)):
        folder = root / name
        evaluate_records(folder, "countdown", _sample(countdown, 8, seed, focus))
        evaluate_records(folder, "graph", _sample(graph, 8, seed + 10, focus))
        for extra in folder.glob("*.jsonl"):
            extra.unlink()
        found[name] = folder
    return found


def test_suites_compare_part_by_part_with_domain_and_all_cell_rows(
    suites: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    table = api.compare(suites["A"], suites["B"], resamples=100)
    groups = {(r["level"], r["domain"]) for r in table.rows}
    assert groups == {
        (1, "countdown"),
        (2, "countdown"),
        (1, "graph_coloring"),
        (None, "countdown"),
        (None, None),
    }
    coverage = table.meta["coverage"]
    assert coverage["paired"] == 48 and coverage["only_a"] == coverage["only_b"] == 0
    assert [p["part"] for p in table.meta["runs"][0]["receipts"]] == ["countdown", "graph"]
    # The all-cells row pools the prompts of every cell: its accuracy is the prompt mean.
    accuracy = _all_cells(table, "accuracy")
    per_cell = [r for r in table.rows if r["metric"] == "accuracy" and r["level"] is not None]
    assert accuracy["a"] == pytest.approx(sum(r["a"] * r["prompts"] for r in per_cell) / 48)
    assert accuracy["prompts"] == 48
    # stats of a directory: the same cells plus domain and all-cell rows; filters select cells.
    own = api.curves(suites["A"], levels=[2])
    assert {(r["level"], r["domain"]) for r in own.rows} == {(2, "countdown")}
    assert main(["compare", str(suites["A"]), str(suites["B"]), "--domains", "countdown", "--format", "json",
                 "--resamples", "20"]) == 0  # fmt: skip
    document = json.loads(capsys.readouterr().out)
    assert {(r["level"], r["domain"]) for r in document["rows"]} == {
        (1, "countdown"),
        (2, "countdown"),
        (None, None),
    }
    assert all(
        r["reportable"] is not None for r in document["rows"] if r["metric"] in ("pcmd", "effective_modes")
    )


def test_three_runs_against_a_named_baseline_with_holm(
    suites: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    paths = [str(suites[n]) for n in ("A2", "A", "B")]
    assert main(["compare", *paths, "--baseline", "first", "--label", f"first={paths[1]}",
                 "--label", f"resample={paths[0]}", "--label", f"collapsed={paths[2]}",
                 "--format", "json", "--resamples", "50"]) == 0  # fmt: skip
    document = json.loads(capsys.readouterr().out)
    assert document["baseline"] == "first"
    assert {(r["run_a"], r["run_b"]) for r in document["rows"]} == {
        ("first", "resample"),
        ("first", "collapsed"),
    }
    tested = [r for r in document["rows"] if r["p_value"] is not None]
    assert document["multiple_comparisons"] == {"method": "holm-bonferroni", "tests": len(tested)}
    expected = _hand_holm([r["p_value"] for r in tested])
    assert [r["p_holm"] for r in tested] == pytest.approx(expected, abs=1e-15)
    assert all(r["p_holm"] is None for r in document["rows"] if r["p_value"] is None)
    gap = {r["run_b"]: r for r in tested if r["metric"] == "retention_vs_baseline" and r["level"] is None
           and r["domain"] is None}  # fmt: skip
    assert gap["collapsed"]["p_holm"] < 0.05 < gap["resample"]["p_value"]
    with pytest.raises(SystemExit):
        main(["compare", *paths, "--baseline", "nobody"])
    assert "names no run" in capsys.readouterr().err


@pytest.mark.parametrize("fmt", ["text", "markdown", "latex", "csv"])
def test_compare_tables_name_the_labelled_runs(
    suites: dict[str, Path], capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    """``compare A B --label base=A --label rl=B``: the value columns say which run is which."""
    a, b = str(suites["A"]), str(suites["B"])
    argv = [
        "compare",
        a,
        b,
        "--label",
        f"base={a}",
        "--label",
        f"rl={b}",
        "--format",
        fmt,
        "--resamples",
        "20",
    ]
    assert main(argv) == 0
    table = capsys.readouterr().out.strip().splitlines()
    if fmt == "csv":  # the schema's column names stay; every row names its runs
        assert table[0].split(",")[:2] == ["run_a", "run_b"] and "a" in table[0].split(",")
        assert all(line.startswith("base,rl,") for line in table[1:])
        return
    header = next(line for line in table if "estimate" in line)
    cells = [
        c.strip() for c in header.replace("&", "|").replace("\\\\", "").split("|" if fmt != "text" else None)
    ]
    cells = [c for c in cells if c]
    assert cells[cells.index("estimate") - 2 : cells.index("estimate")] == ["base", "rl"]
    assert "a" not in cells and "b" not in cells


def _sign_flip_p(differences: list[float], lower: bool) -> float:
    """The sign-flip test by enumerating all 2^n assignments (the definition, for small n)."""
    import itertools

    observed = sum(differences) / len(differences)
    hits = 0
    for signs in itertools.product((1, -1), repeat=len(differences)):
        mean = sum(s * d for s, d in zip(signs, differences)) / len(differences)
        hits += (mean <= observed + 1e-12) if lower else (abs(mean) >= abs(observed) - 1e-12)
    return hits / 2 ** len(differences)


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8])
@pytest.mark.parametrize("difference", [-0.25, 0.5])
def test_a_zero_error_difference_gets_the_exact_sign_flip_p(n: int, difference: float) -> None:
    """Too few prompts for the normal test (every prompt differs by the same amount): the exact
    paired permutation test answers, equal to enumerating every sign assignment."""
    from modebench.stats.comparison import _wald_p, exact_sign_p

    for lower in (False, True):
        expected = _sign_flip_p([difference] * n, lower)
        assert exact_sign_p(difference, n, lower=lower) == pytest.approx(expected)
        assert _wald_p(difference, 0.0, n, lower=lower) == pytest.approx(expected)
    assert _wald_p(0.0, 0.0, n) == 1.0 and exact_sign_p(difference, 0) is None
