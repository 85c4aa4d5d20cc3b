"""Whole suites: several configs per prepare/evaluate, the suite summary and ``report`` of it,
``--limit`` for quick trials (``docs/suites.md``). Everything runs on the bundled release, offline."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from modebench.api import EvaluationOptions, evaluate_file, evaluate_suite, prepare_suite, render_html
from modebench.cli import main
from modebench.suite.configs import expand_configs, is_single, split_names
from modebench.validation import InputError

CONFIGS = ("level1_countdown", "level2_graph_coloring")
RUN = {
    "model": {"id": "suite-test", "revision": "1"},
    "generation": {"draws_per_prompt": 2},
    "prompt_condition": "registered_hints_v1",
}


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _respond(requests: Path, responses: Path) -> None:
    """Every request of every file with two stand-in responses (graded, never dropped)."""
    responses.mkdir()
    for path in sorted(requests.glob("*.jsonl")):
        lines = path.read_text().splitlines()
        with open(responses / path.name, "w") as handle:
            for line in lines:
                handle.write(json.dumps({**json.loads(line), "responses": ["\\boxed{1}", "bad"]}) + "\n")


def _stable(path: Path) -> dict[str, Any]:
    receipt: dict[str, Any] = json.loads(path.read_bytes())
    receipt.pop("created_at")
    for entry in receipt["execution"]["history"]:
        entry.pop("started_at")
    return receipt


@pytest.fixture
def suite_inputs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    code, out, err = _cli(
        capsys,
        "prepare",
        "--registry",
        "bundled",
        "--config",
        CONFIGS[0],
        "--config",
        CONFIGS[1],
        "--limit",
        "3",
        "--output",
        str(tmp_path / "requests"),
    )
    assert code == 0, err
    assert json.loads(out) == {
        "output": str(tmp_path / "requests"),
        "configs": 2,
        "prompts": 6,
        "files": {name: f"{name}.jsonl" for name in CONFIGS},
        "limit": 3,
    }
    _respond(tmp_path / "requests", tmp_path / "responses")
    (tmp_path / "run.json").write_text(json.dumps(RUN))
    return tmp_path


def test_selection_words() -> None:
    assert split_names(["a,b", "c"]) == ["a", "b", "c"]
    assert is_single(["level1_countdown"]) and is_single("level1_countdown")
    assert not is_single(["a,b"]) and not is_single(["a", "b"]) and not is_single(["all"])
    with pytest.raises(InputError, match="empty configuration name"):
        split_names(["a,,b"])
    every = expand_configs("all", registry="bundled")
    assert len(every) == 25 and every == sorted(every)
    # duplicates drop, order is the selection's
    assert expand_configs(["level2_mathir,level1_countdown", "level2_mathir"], registry="bundled") == [
        "level2_mathir",
        "level1_countdown",
    ]
    with pytest.raises(InputError, match="closest: level2_mathir"):
        expand_configs(["level1_countdown,level2_mathr"], registry="bundled")


def test_prepared_suite_files_are_the_single_config_requests(tmp_path: Path, capsys: Any) -> None:
    summary = prepare_suite(tmp_path / "suite", ",".join(CONFIGS), registry="bundled", limit=5)
    assert summary["prompts"] == 10
    for name in CONFIGS:
        single = tmp_path / f"{name}.jsonl"
        code, _, err = _cli(
            capsys, "prepare", "--registry", "bundled", "--config", name, "--output", str(single)
        )
        assert code == 0, err
        full = single.read_text().splitlines(keepends=True)
        assert (tmp_path / "suite" / f"{name}.jsonl").read_text() == "".join(full[:5])


def test_prepare_suite_failure_leaves_nothing(tmp_path: Path, capsys: Any) -> None:
    target = tmp_path / "requests"
    code, _, err = _cli(
        capsys,
        "prepare",
        "--registry",
        "bundled",
        "--config",
        "level1_countdown,nope",
        "--output",
        str(target),
    )
    assert code == 2 and "unknown dataset selection: nope/eval" in err
    assert list(tmp_path.iterdir()) == []
    argv = [
        "prepare",
        "--registry",
        "bundled",
        "--config",
        "all",
        "--ids",
        "ids.txt",
        "--output",
        str(target),
    ]
    code, _, err = _cli(capsys, *argv)
    assert code == 2 and "--ids applies to a single --config" in err and list(tmp_path.iterdir()) == []


def test_evaluated_suite_receipts_equal_single_config_receipts(suite_inputs: Path, capsys: Any) -> None:
    root = suite_inputs
    argv = ["--registry", "bundled", "--run", str(root / "run.json"), "--limit", "3", "--progress-every", "0"]
    selection = ["--config", ",".join(CONFIGS)]
    code, out, err = _cli(
        capsys, "evaluate", str(root / "responses"), *selection, *argv, "--output", str(root / "out")
    )
    assert code == 0, err
    result = json.loads(out)
    assert result == {
        "output": str((root / "out").resolve()),
        "summary": str((root / "out" / "suite.json").resolve()),
        "configs": 2,
        "completed": 2,
        "prompts": 6,
        "status": "completed",
    }
    for name in CONFIGS:
        single = root / "single" / f"{name}.json"
        single.parent.mkdir(exist_ok=True)
        code, _, err = _cli(
            capsys,
            "evaluate",
            str(root / "responses" / f"{name}.jsonl"),
            "--config",
            name,
            *argv,
            "--output",
            str(single),
        )
        assert code == 0, err
        assert _stable(root / "out" / f"{name}.json") == _stable(single)
        journal = Path(f"{name}.json.work") / "results.jsonl"
        assert (root / "out" / journal).read_bytes() == (root / "single" / journal).read_bytes()
    summary = json.loads((root / "out" / "suite.json").read_bytes())
    assert summary["schema"] == "modebench-suite-v1" and summary["limit"] == 3
    assert [entry["config"] for entry in summary["configs"]] == list(CONFIGS)
    entry = summary["configs"][0]
    receipt = json.loads((root / "out" / "level1_countdown.json").read_bytes())
    assert entry["receipt"] == "level1_countdown.json" and entry["complete"] is False
    assert entry["journal_sha256"] == receipt["prompt_results"]["sha256"]
    assert entry["dataset_sha256"] == receipt["dataset"]["split_record"]["parquet_sha256"]
    assert entry["cells"][0]["accuracy"] == receipt["cells"][0]["accuracy"]


def test_report_of_a_summary_is_one_table(suite_inputs: Path, capsys: Any) -> None:
    root = suite_inputs
    options = EvaluationOptions(registry="bundled", run=RUN, limit=3)  # type: ignore[arg-type]
    evaluate_suite(root / "responses", root / "out", list(CONFIGS), options=options)
    # the suite directory moves as a whole
    shutil.move(root / "out", root / "moved")
    code, out, err = _cli(capsys, "report", str(root / "moved" / "suite.json"))
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "Suite completed: 2 of 2 configurations completed (split eval)"
    assert lines[1].startswith("Limited to the first 3 prompts")
    assert lines[2].split()[:4] == ["config", "status", "prompts", "level"]
    assert lines[3].split()[:5] == ["level1_countdown", "completed", "3", "1", "countdown"]
    assert lines[4].split()[:5] == ["level2_graph_coloring", "completed", "3", "2", "graph_coloring"]
    code, out, _ = _cli(capsys, "report", str(root / "moved" / "suite.json"), "--format", "json")
    document = json.loads(out)
    assert document["schema"] == "modebench-suite-table-v1" and len(document["rows"]) == 2
    # the HTML report takes the suite as one run: a section per configuration
    page = render_html([root / "moved" / "suite.json"], root / "page.html", resamples=20)
    assert page["runs"] == 1 and page["receipts"] == 2 and page["completed"] is True
    text = (root / "page.html").read_text(encoding="utf-8")
    assert "level1_countdown" in text and "level2_graph_coloring" in text
    # an edited receipt is refused
    receipt = root / "moved" / "level1_countdown.json"
    receipt.write_bytes(receipt.read_bytes() + b" ")  # still valid JSON, other bytes
    code, _, err = _cli(capsys, "report", str(root / "moved" / "suite.json"))
    assert code == 2 and "receipt level1_countdown.json changed since the summary was written" in err
    for command in (
        ["stats"],
        ["report", "--html", str(root / "edited.html")],
    ):  # as every command reads a suite
        code, _, err = _cli(capsys, *command, str(root / "moved" / "suite.json"))
        assert code == 2 and "receipt level1_countdown.json changed since the summary was written" in err


def test_suite_input_errors_name_the_files(suite_inputs: Path, capsys: Any) -> None:
    root = suite_inputs
    argv = ["--registry", "bundled", "--run", str(root / "run.json"), "--limit", "3"]
    (root / "responses" / "level2_graph_coloring.jsonl").rename(root / "elsewhere.jsonl")
    code, _, err = _cli(
        capsys,
        "evaluate",
        str(root / "responses"),
        "--config",
        ",".join(CONFIGS),
        *argv,
        "--output",
        str(root / "out"),
    )
    assert code == 2 and "lacks level2_graph_coloring.jsonl" in err and not (root / "out").exists()
    code, _, err = _cli(
        capsys,
        "evaluate",
        str(root / "elsewhere.jsonl"),
        "--config",
        ",".join(CONFIGS),
        *argv,
        "--output",
        str(root / "out"),
    )
    assert code == 2 and "suite input must be a directory" in err and not (root / "out").exists()
    code, _, err = _cli(
        capsys,
        "evaluate",
        str(root / "responses"),
        "--config",
        "all",
        "--work-dir",
        "w",
        *argv,
        "--output",
        "x",
    )
    assert code == 2 and "--work-dir, --shard and --ids apply to a single --config" in err


def test_an_input_error_keeps_finished_receipts_and_resume_completes(suite_inputs: Path, capsys: Any) -> None:
    root = suite_inputs
    broken = root / "responses" / "level2_graph_coloring.jsonl"
    good = broken.read_text()
    broken.write_text(good.replace('"responses": ["\\\\boxed{1}", "bad"]', '"responses": ["only one"]', 1))
    argv = ["--registry", "bundled", "--run", str(root / "run.json"), "--limit", "3", "--progress-every", "0"]
    command = [
        "evaluate",
        str(root / "responses"),
        "--config",
        ",".join(CONFIGS),
        *argv,
        "--output",
        str(root / "out"),
    ]
    code, _, err = _cli(capsys, *command)
    assert code == 2 and "prompt 'level2_graph_coloring/eval/1'" in err
    assert (root / "out" / "level1_countdown.json").is_file() and not (root / "out" / "suite.json").exists()
    broken.write_text(good)
    code, out, err = _cli(capsys, *command, "--resume")
    assert code == 0, err
    assert json.loads(out)["completed"] == 2
    code, out, err = _cli(capsys, *command, "--resume")  # a finished suite: its summary again
    assert code == 0 and json.loads(out)["status"] == "completed"
    code, _, err = _cli(capsys, *command)
    assert code == 2 and "output already exists" in err


def test_limit_is_recorded_only_when_used(suite_inputs: Path, capsys: Any) -> None:
    root = suite_inputs
    responses = root / "responses" / "level1_countdown.jsonl"
    options = EvaluationOptions(config="level1_countdown", registry="bundled", run=RUN, limit=3)  # type: ignore[arg-type]
    evaluate_file(responses, root / "limited.json", options=options)
    dataset = json.loads((root / "limited.json").read_bytes())["dataset"]
    assert dataset["limit"] == 3 and dataset["complete"] is False
    assert dataset["selected_prompts"] == 3 and dataset["expected_prompts"] == 32
    code, out, _ = _cli(capsys, "report", str(root / "limited.json"))
    assert code == 0 and out.splitlines()[-1].startswith("Limited run: only the first 3 prompts")
    # the same file without a limit is an incomplete split, as in 0.4.0
    with pytest.raises(InputError, match="incomplete frozen split: missing 29 of 32"):
        evaluate_file(
            responses,
            root / "full.json",
            options=EvaluationOptions(config="level1_countdown", registry="bundled", run=RUN),
        )  # type: ignore[arg-type]
    # a record beyond the limit is named
    with pytest.raises(
        InputError, match="line 3, prompt 'level1_countdown/eval/2': not among the first 2 prompts"
    ):
        evaluate_file(
            responses,
            root / "two.json",
            options=EvaluationOptions(config="level1_countdown", registry="bundled", run=RUN, limit=2),
        )  # type: ignore[arg-type]
    assert not (root / "two.json").exists() and not (root / "two.json.work").exists()
    code, _, err = _cli(capsys, "evaluate", str(responses), "--limit", "2", "--output", str(root / "x.json"))
    assert code == 2 and "--limit requires --config" in err
    code, _, err = _cli(
        capsys,
        "prepare",
        "--registry",
        "bundled",
        "--config",
        "level1_countdown",
        "--limit",
        "0",
        "--output",
        "y",
    )
    assert code == 2 and "--limit must be a positive integer" in err


def test_a_failed_configuration_gets_its_receipt_and_the_suite_goes_on(
    suite_inputs: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from modebench.diagnostics import VerifierExecutionError
    from modebench.engine import pipeline

    real = pipeline.run

    def reference_validation_fails(spec: Any, **kwargs: Any) -> Any:
        # what the pipeline raises when reference validation hits a worker failure
        if spec.options.config == CONFIGS[0]:
            raise VerifierExecutionError({"status": "worker_failure", "detail": "worker exited"})
        return real(spec, **kwargs)

    monkeypatch.setattr(pipeline, "run", reference_validation_fails)
    root = suite_inputs
    events: list[dict[str, Any]] = []
    options = EvaluationOptions(registry="bundled", run=RUN, limit=3)  # type: ignore[arg-type]
    result = evaluate_suite(
        root / "responses", root / "out", ",".join(CONFIGS), options=options, progress=events.append
    )  # type: ignore[arg-type]
    assert result["status"] == "failed" and result["completed"] == 1 and result["configs"] == 2
    assert {event["config"] for event in events} == {CONFIGS[1]}
    failure = json.loads((root / "out" / f"{CONFIGS[0]}.json").read_bytes())
    assert failure["evaluation"]["status"] == "failed" and failure["failure"]["status"] == "worker_failure"
    summary = json.loads((root / "out" / "suite.json").read_bytes())
    assert [entry["status"] for entry in summary["configs"]] == ["failed", "completed"]
    assert summary["configs"][0]["cells"] == [] and summary["configs"][0]["journal"] is None
    code, out, err = _cli(capsys, "report", str(root / "out" / "suite.json"))
    assert code == 3, err
    assert out.splitlines()[0] == "Suite failed: 1 of 2 configurations completed (split eval)"
    assert out.splitlines()[3].split()[:3] == [CONFIGS[0], "failed", "-"]
    assert f"{CONFIGS[0]} FAILED: see modebench report" in out
    # stats and the HTML page read the completed configuration and say which one they left out
    code, out, err = _cli(capsys, "stats", str(root / "out" / "suite.json"), "--resamples", "20")
    assert code == 0, err
    assert f"configuration {CONFIGS[0]} failed (no statistics; left out)" in err
    assert {row.split()[1] for row in out.splitlines()[2:] if row.split()[0] == "2"} == {"graph_coloring"}
    suite = str(root / "out" / "suite.json")
    for command in (["compare", suite, suite], ["trajectory", f"0={suite}", f"1={suite}"]):
        code, _, err = (
            _cli(capsys, *command, "--resamples", "20") if command[0] == "compare" else _cli(capsys, *command)
        )
        assert code == 0 and f"configuration {CONFIGS[0]} failed (no statistics; left out)" in err, (
            command,
            err,
        )
    page = root / "suite.html"
    code, out, err = _cli(
        capsys, "report", str(root / "out" / "suite.json"), "--html", str(page), "--resamples", "20"
    )
    assert code == 3, err  # the suite did not complete: the page shows the failure, the exit code says it
    text = page.read_text(encoding="utf-8")
    assert 'data-failed="true"' in text and f"· {CONFIGS[0]}" in text and f"· {CONFIGS[1]}" in text
