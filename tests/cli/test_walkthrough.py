"""The quick start: walkthrough → evaluate → report, through the CLI in process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from modebench.cli import main
from modebench.domains._pipeline import grade_in_process
from modebench.walkthrough import bundle

REPORT = """Evaluation completed
level domain k accuracy pass@k distinct@k PCMD reportable
1 countdown 4 0.5 1 2 1 false
1 graph_coloring 4 0.5 1 2 1 false
1 mathir 4 0.5 1 2 1 false
1 pantry_plan 4 0.5 1 2 1 false
1 python_factors 4 0.5 1 2 1 false
PCMD uses only verified answers; reportable=false means insufficient eligible prompts.
"""


def test_bundle_grades_as_documented() -> None:
    data = bundle()
    assert [r["domain"] for r in data["records"]] == [
        "countdown",
        "graph_coloring",
        "python_factors",
        "mathir",
        "pantry_plan",
    ]
    for record in data["records"]:
        results = [grade_in_process(1, record["domain"], record, text) for text in record["responses"]]
        assert [r["status"] for r in results] == ["correct", "correct", "incorrect", "malformed"]
        assert results[0]["canonical_key"] != results[1]["canonical_key"]


def test_quick_start_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    demo = tmp_path / "demo"
    assert main(["walkthrough", "--directory", str(demo)]) == 0
    exported = json.loads(capsys.readouterr().out)
    assert exported["domains"] == 5 and exported["responses_per_prompt"] == 4
    assert sorted(p.name for p in demo.iterdir()) == [
        "expected.json",
        "responses.jsonl",
        "run.json",
        "tasks.jsonl",
    ]
    assert all("answer" not in json.loads(line) for line in (demo / "tasks.jsonl").read_text().splitlines())
    with pytest.raises(SystemExit) as exists:
        main(["walkthrough", "--directory", str(demo)])
    assert exists.value.code == 2
    assert "walkthrough destination already exists" in capsys.readouterr().err
    args = [
        str(demo / "responses.jsonl"),
        "--run",
        str(demo / "run.json"),
        "--output",
        str(demo / "report.json"),
    ]
    assert main(["evaluate", *args]) == 0
    captured = capsys.readouterr()
    summary = json.loads(captured.out)
    assert summary == {
        "output": str((demo / "report.json").resolve()),
        "cells": 5,
        "prompts": 5,
        "dataset_kind": "custom",
        "status": "completed",
        "work_dir": str((demo / "report.json.work").resolve()),
    }
    events = [json.loads(line) for line in captured.err.splitlines()]
    assert [e["phase"] for e in events] == ["validating", "validated", "grading", "finalizing", "complete"]
    receipt = json.loads((demo / "report.json").read_text())
    assert receipt["evaluation"]["status_counts"] == {"correct": 10, "incorrect": 5, "malformed": 5}
    assert receipt["generation_metadata_status"] == "user_declared"
    expected = json.loads((demo / "expected.json").read_text())
    for cell in receipt["cells"]:
        assert (cell["accuracy"], cell["pass_at_k"], cell["distinct_at_k"]) == (0.5, 1.0, 2.0)
        assert cell["pcmd"]["d_mode"] == expected["per_cell"]["pcmd"] and cell["pcmd"]["reportable"] is False
    assert main(["report", str(demo / "report.json")]) == 0
    assert capsys.readouterr().out == REPORT
    with pytest.raises(SystemExit) as again:
        main(["evaluate", *args])
    assert again.value.code == 2
    assert "output already exists" in capsys.readouterr().err
