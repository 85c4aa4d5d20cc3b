"""Input validation, v3 in-memory results and the streaming v4 pipeline (custom references)."""

from __future__ import annotations

import json
import zlib
from pathlib import Path
from typing import Any

import pytest

from modebench import api
from modebench.evaluation import evaluate
from modebench.reporting import iter_prompt_results, read_report, summarize
from modebench.streaming import evaluate_file
from modebench.validation import InputError

COUNTDOWN = {"verifier": "countdown", "numbers": [1, 2, 3], "target": 6}
RUN = {
    "model": {"id": "m", "revision": "r"},
    "generation": {"temperature": 0.7},
    "prompt_condition": "registered_hints_v1",
}


def record(ident: Any = "example", responses: list[str] | None = None, **extra: Any) -> dict[str, Any]:
    base = {
        "id": ident,
        "level": 1,
        "domain": "countdown",
        "answer": COUNTDOWN,
        "responses": ["1+2+3", "1*2*3", "bad", ""] if responses is None else responses,
    }
    base.update(extra)
    return base


def write_jsonl(path: Path, records: list[Any], blank_lines: bool = False) -> Path:
    lines = [json.dumps(r) for r in records]
    if blank_lines:
        lines = [x for line in lines for x in (line, "")]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_in_memory_readme_example() -> None:
    result = evaluate([record()], min_defined_prompts=1)
    assert result["schema"] == "modebench-saved-responses-v3"
    assert result["dataset"] == {"kind": "custom", "references_authenticated": False}
    (cell,) = result["cells"]
    assert (cell["accuracy"], cell["pass_at_k"], cell["distinct_at_k"]) == (0.5, 1.0, 2.0)
    assert cell["pcmd"]["d_mode"] == 1.0 and cell["pcmd"]["reportable"] is True
    (prompt,) = cell["prompt_results"]
    assert prompt["prompt_sha256"] is None and prompt["prompt_profile"] is None
    assert result["evaluation"]["status_counts"] == {"correct": 2, "malformed": 2}
    assert result["generation_metadata_status"] == "unreported"


@pytest.mark.parametrize(
    ("records", "message"),
    [
        (
            [record(answer=None) | {"answer": COUNTDOWN}, {"id": "x", "responses": ["a"]}],
            "record 2, prompt 'x': missing field: level",
        ),
        ([[1]], "record 1: each record must be an object"),
        (
            [record(extra=1, zeta=2)],
            "record 1, prompt 'example': unknown fields: extra, zeta; put generation metadata in run",
        ),
        ([record(responses=[])], "responses must be a nonempty list of strings (retain failed draws)"),
        ([record(ident=True)], "id must be a nonempty string or integer"),
        ([record(ident="  ")], "id must be a nonempty string or integer"),
        ([record(level=6)], "level must be 1, 2, 3, 4, or 5"),
        ([record(domain="chess")], "unsupported ModeBench domain: chess"),
        ([record(answer={"verifier": "countdown"})], "invalid countdown reference:"),
        ([record(answer={})], "answer.verifier None does not match domain 'countdown'"),
        ([record(answer='{"a":1,"a":2}')], "duplicate JSON field: a"),
        ([record(dataset_sha256="0" * 64)], "dataset_sha256 requires frozen evaluation with config"),
        ([record(problem=" ")], "problem must be a nonempty string"),
        ([record(), record(level="level1")], "duplicate prompt: (1, 'countdown', 'example')"),
        ([record(ident=1), record(ident="2", run=RUN)], "mixed declared/undeclared conditions"),
        (
            [
                record(ident=1, run=RUN),
                record(ident=2, run=RUN | {"prompt_condition": "python_level3_neutral_v1"}),
            ],
            "mixed model or generation conditions",
        ),
        ([], "no prompt records"),
        (
            [record(prompt_sha256="0" * 64)],
            "prompt_sha256 requires problem text and declared run.prompt_condition",
        ),
        (
            [record(problem="Use 1, 2, 3.", run=RUN, prompt_sha256="0" * 64)],
            "prompt_sha256 does not match the registered prompt",
        ),
        (
            [record(run={**RUN, "generation": {"draws_per_prompt": 3}})],
            "responses count does not match run.generation.draws_per_prompt",
        ),
        ([record(problem="x <|im_end|>", run=RUN)], "unexpected chat role marker in benchmark problem"),
    ],
)
def test_in_memory_validation_errors(records: list[Any], message: str) -> None:
    with pytest.raises(InputError) as caught:
        evaluate(records)
    assert message in str(caught.value)


def test_options_validation() -> None:
    for wrong in (0, -1, 1.5, True):
        with pytest.raises(InputError, match="min_defined_prompts must be a positive integer"):
            evaluate([record()], min_defined_prompts=wrong)
    with pytest.raises(InputError, match="data_root, split, and allow_partial require a frozen config"):
        evaluate([record()], split="dev")
    with pytest.raises(InputError, match="run metadata missing fields: generation, prompt_condition"):
        evaluate([record()], run={"model": {"id": "m", "revision": "r"}})
    with pytest.raises(InputError, match="locations must match"):
        evaluate([record()], locations=["a", "b"])


def test_file_errors_name_line_and_prompt(tmp_path: Path) -> None:
    source = tmp_path / "in.jsonl"
    source.write_text(
        json.dumps(record("one"))
        + "\n\n"
        + json.dumps({"id": "example", "level": 1, "domain": "countdown", "responses": ["x"]})
        + "\n"
    )
    with pytest.raises(InputError, match=r"^line 3, prompt 'example': missing field: answer$"):
        evaluate_file(source, tmp_path / "out.json")
    assert not (tmp_path / "out.json").exists()
    assert not (tmp_path / "out.json.work").exists()  # a failed preflight leaves no checkpoint
    source.write_text('{"id": 1,\n')
    with pytest.raises(InputError, match="^line 1: invalid JSON: "):
        evaluate_file(source, tmp_path / "out.json")
    source.write_text(json.dumps(record(responses=["x"] * 4097)) + "\n")
    with pytest.raises(InputError, match="^line 1: exceeds 4096 responses per prompt$"):
        evaluate_file(source, tmp_path / "out.json")


def run_file(
    tmp_path: Path, records: list[Any], name: str = "out.json", **kwargs: Any
) -> tuple[dict[str, Any], Path]:
    source = write_jsonl(tmp_path / "in.jsonl", records, blank_lines=True)
    summary = evaluate_file(source, tmp_path / name, **kwargs)
    return summary, tmp_path / name


def test_streaming_receipt_layout_and_readers(tmp_path: Path) -> None:
    records = [record(f"p{i}", problem="Use 1, 2, 3 to make 6.") for i in range(5)] + [
        record("k2", responses=["1+2+3", "x"])
    ]
    summary, output = run_file(tmp_path, records, run=RUN, min_defined_prompts=2)
    assert summary == {
        "output": str(output),
        "cells": 2,
        "prompts": 6,
        "dataset_kind": "custom",
        "status": "completed",
        "work_dir": str(output) + ".work",
    }
    text = output.read_text()
    assert text.endswith("]}\n") and '"cells":[' in text
    payload = json.loads(text)
    assert list(payload)[-1] == "cells"
    assert payload["schema"] == "modebench-saved-responses-v4"
    assert payload["prompt_results"]["path"] == "out.json.work/results.jsonl"
    assert payload["execution"]["history"][0]["resumed_prompts"] == 0
    assert [c["k"] for c in payload["cells"]] == [2, 4]
    in_memory = evaluate(records, run=RUN, min_defined_prompts=2)
    for streamed, memory in zip(payload["cells"], in_memory["cells"]):
        memory = {key: value for key, value in memory.items() if key != "prompt_results"}
        assert streamed == memory
    results = list(iter_prompt_results(output))
    assert [r["id"] for r in results] == [r["id"] for r in records]
    assert all(r["prompt_sha256"] for r in results[:5])
    report = api.read_report(output)
    assert report.status == "completed" and report.cells[1].pcmd.d_mode == 1.0
    assert summarize(read_report(output)).splitlines()[2] == "1 countdown 2 0.5 1 1 null false"
    with pytest.raises(InputError, match="output already exists"):
        evaluate_file(tmp_path / "in.jsonl", output)
    journal = Path(str(output) + ".work") / "results.jsonl"
    journal.write_text(journal.read_text() + "\n")
    with pytest.raises(InputError, match="detailed-result journal hash mismatch"):
        read_report(output)


def test_failed_run_voids_every_cell(tmp_path: Path) -> None:
    records = [record("a"), record("b", responses=["x" * 131_073]), dict(record("c"), level=2)]
    summary, output = run_file(tmp_path, records)
    assert summary["status"] == "failed"
    payload = read_report(output)
    assert payload["evaluation"]["status_counts"]["resource_limit"] == 1
    for cell in payload["cells"]:
        assert cell["accuracy"] is None and cell["pcmd"] == {
            "d_mode": None,
            "reportable": False,
            "reason": "verifier_failure",
        }
    assert summarize(payload).startswith("Evaluation FAILED")


def test_resume_after_interrupt_matches_uninterrupted(tmp_path: Path) -> None:
    records = [record(f"p{i}", responses=["1+2+3", "3*2*1", "x", str(i)]) for i in range(300)]
    clean, clean_out = run_file(tmp_path, records, name="clean.json")
    seen: list[dict[str, Any]] = []

    def interrupt(event: dict[str, Any]) -> None:
        seen.append(event)
        if event["phase"] == "grading" and event["completed_prompts"] == 150:
            raise KeyboardInterrupt

    source = tmp_path / "in.jsonl"
    with pytest.raises(KeyboardInterrupt):
        evaluate_file(source, tmp_path / "out.json", progress=interrupt)
    assert not (tmp_path / "out.json").exists()
    with pytest.raises(InputError, match="checkpoint already exists"):
        evaluate_file(source, tmp_path / "out.json")
    with pytest.raises(InputError, match="resume identity mismatch"):
        evaluate_file(source, tmp_path / "out.json", resume=True, min_defined_prompts=5)
    events: list[dict[str, Any]] = []
    evaluate_file(source, tmp_path / "out.json", resume=True, workers=2, progress=events.append)
    resumed = json.loads((tmp_path / "out.json").read_text())
    committed = resumed["execution"]["history"][1]["resumed_prompts"]
    # Whole commit groups are durable: at least everything reported before the interrupt.
    assert 150 <= committed < 300
    assert events[0] == {"phase": "grading", "completed_prompts": committed, "total_prompts": 300}
    original = json.loads(clean_out.read_text())
    assert resumed["cells"] == original["cells"]
    assert (tmp_path / "out.json.work" / "results.jsonl").read_bytes() == (
        tmp_path / "clean.json.work" / "results.jsonl"
    ).read_bytes()


def test_parallel_workers_give_identical_bytes(tmp_path: Path) -> None:
    records = [record(f"p{i}", responses=["1+2+3", "3*2*1", "x", f"{i}+0"]) for i in range(60)]
    run_file(tmp_path, records, name="one.json")
    run_file(tmp_path, records, name="two.json", workers=2)
    one = (tmp_path / "one.json.work" / "results.jsonl").read_bytes()
    assert one == (tmp_path / "two.json.work" / "results.jsonl").read_bytes()
    assert (
        json.loads((tmp_path / "one.json").read_text())["cells"]
        == json.loads((tmp_path / "two.json").read_text())["cells"]
    )
    with pytest.raises(InputError, match="workers must be between 1 and 8"):
        evaluate_file(tmp_path / "in.jsonl", tmp_path / "nine.json", workers=9)


def test_preflight_evaluator_failure_writes_failure_receipt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from modebench.cli import main
    from modebench.verifier_worker import FAULT_ENV, FAULT_TEXT

    monkeypatch.setenv(FAULT_ENV, "exit")  # test-only hook: the worker dies validating this reference
    source = write_jsonl(tmp_path / "in.jsonl", [record("one", answer=FAULT_TEXT)])
    output = tmp_path / "out.json"
    assert main(["evaluate", str(source), "--output", str(output), "--progress-every", "0"]) == 3
    assert json.loads(capsys.readouterr().out) == {"output": str(output), "status": "failed"}
    receipt = json.loads(output.read_text())
    assert receipt["evaluation"] == {"status": "failed"} and receipt["cells"] == []
    assert receipt["failure"]["status"] == "worker_failure"
    assert receipt["failure"]["detail"].startswith("line 1, prompt 'one': verifier worker_failure: ")
    assert not (tmp_path / "out.json.work").exists()  # nothing was graded: no checkpoint left behind
    assert main(["report", str(output)]) == 3
    assert capsys.readouterr().out.startswith("Evaluation FAILED")


def test_file_mode_reports_phases_in_order(tmp_path: Path) -> None:
    """Binding (Phase C) errors surface only after every record passed Phase A and Phase B."""
    bad_binding = record("one", problem="Use 1, 2, 3.", run=RUN, prompt_sha256="0" * 64)
    cases = [
        (
            [bad_binding, record("two", run=RUN, level=9)],
            "line 2, prompt 'two': level must be 1, 2, 3, 4, or 5",
        ),
        (
            [bad_binding, record("two")],
            "mixed declared/undeclared conditions: supply run metadata for the entire evaluation",
        ),
        (
            [bad_binding, record("two", run=RUN)],
            "line 1, prompt 'one': prompt_sha256 does not match the registered prompt",
        ),
    ]
    for index, (records, message) in enumerate(cases):
        source = write_jsonl(tmp_path / f"in{index}.jsonl", records)
        with pytest.raises(InputError) as caught:
            evaluate_file(source, tmp_path / f"out{index}.json")
        assert str(caught.value) == message
        with pytest.raises(InputError) as in_memory:
            evaluate(records)
        assert str(in_memory.value).split(": ", 1)[-1] == message.split(": ", 1)[-1]


def test_resume_refuses_a_tampered_checkpoint(tmp_path: Path) -> None:
    import sqlite3

    records = [record(f"p{i}") for i in range(400)]
    source = write_jsonl(tmp_path / "in.jsonl", records)

    def stop(event: dict[str, Any]) -> None:
        if event["phase"] == "grading" and event["completed_prompts"] >= 200:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        evaluate_file(source, tmp_path / "out.json", progress=stop)
    ledger = tmp_path / "out.json.work" / "ledger.sqlite3"

    def edit(column: str, seq: int, old: str, new: str) -> None:
        with sqlite3.connect(ledger) as db:
            (blob,) = db.execute(f"SELECT {column} FROM prompts WHERE seq = ?", (seq,)).fetchone()
            text = zlib.decompress(blob).decode().replace(old, new)
            db.execute(f"UPDATE prompts SET {column} = ? WHERE seq = ?", (zlib.compress(text.encode()), seq))

    edit("result", 3, "correct", "incorrect")
    with pytest.raises(InputError, match="checkpoint result identity or ordering mismatch"):
        evaluate_file(source, tmp_path / "out.json", resume=True)
    edit("prepared", 2, "1+2+3", "1+2+4")
    with pytest.raises(InputError, match="checkpoint prepared-record identity mismatch"):
        evaluate_file(source, tmp_path / "out.json", resume=True)
    assert not (tmp_path / "out.json").exists()
