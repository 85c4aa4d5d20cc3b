"""``modebench trajectory``: per-step statistics and mode retention against the first step."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest

from modebench.api import EvaluationOptions, Task, evaluate_file, grade, trajectory
from modebench.cli import main
from tests.ingest.conftest import chatml

ANSWER = {
    "edges": [[1, 2], [2, 3], [2, 4], [3, 4]],
    "n": 4,
    "partial_colors": [3, None, None, None],
    "num_completions": 4,
    "num_solutions": 12,
    "instance_id": "trajectory-test",
    "source": "exact_answer_mode_graph_coloring",
    "verifier": "graph_coloring",
}
#: The four valid completions of ``3???`` — four distinct modes — and a wrong one.
SOLUTIONS = ["1, 2, 3", "1, 3, 2", "2, 1, 3", "2, 3, 1"]
WRONG = "1, 2, 1"


def _receipt(tmp_path: Path, step: int) -> Path:
    """Step ``s`` produces the first ``4 - s`` modes (step 4 none), always 4 draws."""
    produced = SOLUTIONS[: 4 - step]
    responses = (produced * 4)[:4] if produced else [WRONG] * 4
    record = {"id": "g1", "level": 1, "domain": "graph_coloring", "answer": ANSWER, "responses": responses}
    source = tmp_path / f"in-{step}.jsonl"
    source.write_text(json.dumps(record) + "\n")
    out = tmp_path / f"step-{step}.json"
    assert evaluate_file(source, out, options=EvaluationOptions(min_defined_prompts=1)).status == "completed"
    return out


def _keys() -> list[str]:
    task = Task("g1", 1, "graph_coloring", "problem", ANSWER)
    keys = [grade(task, text)["canonical_key"] for text in SOLUTIONS]
    assert all(isinstance(k, str) for k in keys) and len(set(keys)) == 4
    return [str(k) for k in keys]


def _value(rows: list[dict[str, Any]], step: int, metric: str, k: int | None = None) -> Any:
    [row] = [r for r in rows if r["step"] == step and r["metric"] == metric and r["k"] == k]
    return row["estimate"]


def test_shrinking_modes_give_the_constructed_retention(tmp_path: Path) -> None:
    receipts = [_receipt(tmp_path, step) for step in range(5)]
    keys = _keys()
    # Steps given out of order as STEP=PATH: the trajectory orders them.
    table = trajectory([f"{s * 100}={receipts[s]}" for s in (3, 0, 4, 1, 2)])
    rows = table.to_records()
    assert sorted({r["step"] for r in rows}) == [0, 100, 200, 300, 400]
    # The first step: its within-run baseline only (each of its 4 modes was drawn once, so two
    # disjoint halves of 2 draws never share a mode), no retention of itself.
    assert _value(rows, 0, "retention_baseline", 2) == 0.0
    assert not [r for r in rows if r["step"] == 0 and r["metric"] in ("retention_share", "modes_kept")]
    for s in range(5):
        step = s * 100
        if s:  # means per prompt (one prompt here) at the common 4 draws
            assert _value(rows, step, "modes_first", 4) == 4
            assert _value(rows, step, "modes_kept", 4) == 4 - s
            assert _value(rows, step, "modes_lost", 4) == s
            assert _value(rows, step, "modes_gained", 4) == 0
            assert _value(rows, step, "retention_share", 4) == (4 - s) / 4
        assert table.meta["lost_modes"][str(step)] == ({"g1": sorted(keys[4 - s :])} if s else {})
        assert _value(rows, step, "accuracy") == (0.0 if s == 4 else 1.0)
        # Distinct modes among all 4 draws: exactly the modes produced.
        assert _value(rows, step, "distinct_at_k", 4) == pytest.approx(4 - s)


def test_cli_formats(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    receipts = [str(_receipt(tmp_path, step)) for step in range(2)]
    assert main(["trajectory", *receipts, "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [r["estimate"] for r in rows if r["metric"] == "modes_lost"] == ["1"]
    assert main(["trajectory", *receipts, "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["schema"] == "modebench-trajectory-v2" and document["lost_modes"]["0"] == {}
    assert main(["trajectory", *receipts, "--format", "markdown"]) == 0
    assert "| step |" in capsys.readouterr().out


def test_bad_runs_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    receipt = str(_receipt(tmp_path, 0))
    with pytest.raises(SystemExit) as exc:
        main(["trajectory", f"1={receipt}", f"1={receipt}"])
    assert exc.value.code == 2 and "two runs share a training step: [1]" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["trajectory", "x=" + receipt])
    assert exc.value.code == 2 and "the step before '=' must be an integer" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["trajectory", str(tmp_path / "missing.json")])
    assert exc.value.code == 2 and "no such receipt" in capsys.readouterr().err


def test_verl_rollouts_are_graded_once_per_step(tmp_path: Path, requests: list[dict[str, Any]]) -> None:
    rollouts = tmp_path / "rollouts"
    rollouts.mkdir()

    def dump(step: int) -> None:
        lines = [
            {"input": chatml(requests[i]["messages"]), "output": f"\\boxed{{{step}+{r}}}", "score": 0}
            for i in range(2)
            for r in range(2)
        ]
        (rollouts / f"{step}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))

    for step in (1, 2):
        dump(step)
    run = {
        "model": {"id": "policy", "revision": "rl"},
        "generation": {"draws_per_prompt": 2},
        "prompt_condition": "registered_hints_v1",
    }
    options: dict[str, Any] = {
        "registry": "bundled", "config": "level1_countdown", "grading_cache": tmp_path / "cache", "run": run
    }  # fmt: skip
    first = trajectory([f"verl:{rollouts}"], **options)
    assert first.meta["grading"] == {"graded": 2, "cached": 0, "unmatched": 0}
    assert sorted({r["step"] for r in first.rows}) == [1, 2]
    assert {r["prompts"] for r in first.rows if r["metric"] == "accuracy"} == {2}
    dump(3)
    second = trajectory([f"verl:{rollouts}"], **options)
    assert second.meta["grading"] == {"graded": 1, "cached": 2, "unmatched": 0}
    assert [r for r in second.rows if r["step"] < 3] == list(first.rows)


def test_trajectory_id_field_names_the_prompts_of_rollouts(
    tmp_path: Path, requests: list[dict[str, Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    """``trajectory verl:DIR --id-field prompt_id``: rollouts whose prompts are not rendered like the
    registered ones are matched by the id a line carries, as ``ingest --id-field`` matches them."""
    rollouts = tmp_path / "rollouts"
    rollouts.mkdir()
    for step in (1, 2):
        lines = [{"input": f"prompt number {i}", "output": f"\\boxed{{{step}}}", "score": 0, "prompt_id": requests[i]["id"]}
                 for i in range(2) for _ in range(2)]  # fmt: skip
        (rollouts / f"{step}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    run = tmp_path / "run.json"
    run.write_text(json.dumps({"model": {"id": "policy", "revision": "rl"}, "generation": {"draws_per_prompt": 2},
                               "prompt_condition": "registered_hints_v1"}))  # fmt: skip
    argv = ["trajectory", f"verl:{rollouts}", "--registry", "bundled", "--config", "level1_countdown",
            "--grading-cache", str(tmp_path / "cache"), "--run", str(run), "--format", "json"]  # fmt: skip
    with pytest.raises(SystemExit) as caught:  # without it nothing matches: the error says so
        main(argv)
    assert caught.value.code == 2
    capsys.readouterr()
    assert main([*argv, "--id-field", "prompt_id"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["grading"] == {"graded": 2, "cached": 0, "unmatched": 0}
    assert {r["prompts"] for r in document["rows"] if r["metric"] == "accuracy"} == {2}
