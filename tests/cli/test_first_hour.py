"""What a new user meets first: help on every option, --version, errors without the usage banner,
a quiet closed pipe, a one-line interrupt, a build request that names the cell's capacity."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest

from modebench.cli import build_parser, main
from modebench.suite.build import generate_rows
from modebench.suite.power import render
from modebench.validation import InputError

SRC = Path(__file__).resolve().parents[2] / "src"


def _commands(
    parser: argparse.ArgumentParser, path: str = "modebench"
) -> list[tuple[str, argparse.ArgumentParser]]:
    found = [(path, parser)]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found.extend(_commands(sub, f"{path} {name}"))
    return found


def test_every_option_of_every_command_has_help() -> None:
    missing = [
        f"{path}: {action.dest}"
        for path, parser in _commands(build_parser())
        for action in parser._actions
        if not isinstance(action, argparse._SubParsersAction) and not action.help
    ]
    assert missing == []


def test_help_states_defaults(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["evaluate", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "(default: 30)" in text and "(default: 1)" in text and "(default: eval)" in text


def test_version_names_this_project(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("modebench 0.5.0") and "ModeBench 0.4.0" in out


def test_a_runtime_error_prints_no_usage_banner(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["report", str(tmp_path / "missing.json")])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "usage:" not in err
    assert err.startswith("modebench: error: ") and "missing.json" in err


def test_a_usage_error_still_prints_usage(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["evaluate"])
    assert exit_info.value.code == 2
    assert "usage:" in capsys.readouterr().err


def test_a_closed_pipe_is_quiet() -> None:
    command = f"{sys.executable} -m modebench datasets list --registry bundled | head -2"
    done = subprocess.run(
        command,
        shell=True,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0
    assert len(done.stdout.splitlines()) == 2
    assert "Broken pipe" not in done.stderr and "Traceback" not in done.stderr and "usage:" not in done.stderr


def test_ctrl_c_prints_one_line_and_exits_130(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def interrupted(*args: object, **kwargs: object) -> object:
        raise KeyboardInterrupt

    monkeypatch.setattr("modebench.api.evaluate_file", interrupted)
    assert main(["evaluate", "in.jsonl", "--output", "out.json"]) == 130
    assert capsys.readouterr().err == "interrupted; rerun the same command with --resume\n"


def test_a_build_request_beyond_capacity_names_the_capacity() -> None:
    with pytest.raises(InputError) as error:
        generate_rows("level1_countdown", 17, {"eval": 128, "dev": 128, "train": 384})
    message = str(error.value)
    assert "could not draw 384 distinct train rows" in message
    assert "rows fit across all splits" in message and "640 were asked for" in message


def test_power_says_items() -> None:
    result = {"items": 783, "responses": 783, "draws_per_prompt": 1}
    assert render(result) == "items needed: 783 items"
    assert render({**result, "responses": 6264, "draws_per_prompt": 8}) == (
        "items needed: 783 items (6264 responses at 8 draws per item)"
    )


COUNTDOWN = {"verifier": "countdown", "numbers": [3, 6, 9], "target": 18}


def _receipt(tmp_path: Path) -> Path:
    import json

    source = tmp_path / "in.jsonl"
    record = {
        "id": "a",
        "level": 1,
        "domain": "countdown",
        "answer": COUNTDOWN,
        "responses": ["\\boxed{3+6+9}"],
    }
    source.write_text(json.dumps(record) + "\n", encoding="utf-8")
    out = tmp_path / "run" / "out.json"
    out.parent.mkdir()
    assert main(["evaluate", str(source), "--output", str(out), "--min-defined-prompts", "1",
                 "--progress-every", "0"]) == 0  # fmt: skip
    return out


def test_report_reads_a_moved_journal_named_with_journal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = _receipt(tmp_path)
    capsys.readouterr()
    assert main(["report", str(out)]) == 0
    expected = capsys.readouterr().out
    moved = tmp_path / "receipt-only.json"
    out.replace(moved)  # the receipt copied on its own; its journal stayed behind
    journal = next((tmp_path / "run").rglob("results.jsonl"))
    with pytest.raises(SystemExit) as caught:
        main(["report", str(moved)])
    assert caught.value.code == 2
    err = capsys.readouterr().err
    assert "No such file or directory" in err and "--journal PATH" in err.splitlines()[-1]
    assert main(["report", str(moved), "--journal", str(journal)]) == 0
    assert capsys.readouterr().out == expected  # the same report, byte for byte
    other = tmp_path / "other.jsonl"
    other.write_text(journal.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    with pytest.raises(SystemExit) as caught:
        main(["report", str(moved), "--journal", str(other)])
    assert caught.value.code == 2
    assert "detailed-result journal hash mismatch" in capsys.readouterr().err


def test_datasets_example_prints_a_record_that_evaluates_correct(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``modebench datasets example DOMAIN``: a whole answer object per domain, ready to evaluate."""
    import json

    from modebench.evaluation import evaluate

    records = []
    for domain in ("countdown", "graph_coloring", "python_factors", "mathir", "pantry_plan"):
        for level in (1, 3):
            assert main(["datasets", "example", domain, "--level", str(level)]) == 0
            [line] = capsys.readouterr().out.splitlines()
            records.append(json.loads(line))
    assert {(r["domain"], r["level"]) for r in records} == {
        (d, lv)
        for d in ("countdown", "graph_coloring", "python_factors", "mathir", "pantry_plan")
        for lv in (1, 3)
    }
    assert all(isinstance(r["answer"], dict) and r["answer"]["verifier"] for r in records)
    result = evaluate(records, min_defined_prompts=1)
    assert result["evaluation"]["status_counts"] == {"correct": len(records)}


def test_an_unknown_domain_keeps_0_4_0_s_line_and_lists_the_valid_ones(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    source = tmp_path / "in.jsonl"
    source.write_text(
        json.dumps({"id": 1, "level": 1, "domain": "sudoku", "answer": {}, "responses": ["x"]}) + "\n"
    )
    with pytest.raises(SystemExit):
        main(["evaluate", str(source), "--output", str(tmp_path / "o.json"), "--progress-every", "0"])
    first, hint = capsys.readouterr().err.splitlines()
    assert first == "modebench: error: line 1, prompt '1': unsupported ModeBench domain: sudoku"
    assert hint == (
        'modebench: hint: domain: found "sudoku", expected "graph_coloring", "countdown", "python_factors", '
        '"mathir" or "pantry_plan"'
    )
    with pytest.raises(SystemExit):
        main(["datasets", "example", "sudoku"])
    assert 'expected "graph_coloring"' in capsys.readouterr().err
