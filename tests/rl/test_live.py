"""Live metrics: the same numbers as the receipt evaluate writes for the step; new modes, bank
coverage and unscorable completions; `modebench trajectory` reads the step receipts."""

from __future__ import annotations

import json

import pytest

from modebench.api import read_report
from modebench.cli import main as cli_main
from modebench.diagnostics import MAX_RESPONSE_CHARS
from modebench.metrics import effective_modes
from modebench.rl import BatchGrader, Completion, ModeBank, RolloutRecorder


def completions(records, texts_of):
    return [
        Completion(r["level"], r["domain"], r["answer"], text, r["id"])
        for r in records
        for text in texts_of(r)
    ]


def test_step_metrics_equal_the_step_receipt(tmp_path, grader, records, capsys):
    bank = ModeBank(2)
    recorder = RolloutRecorder(bank=bank, receipts_dir=tmp_path, grader=grader, min_defined_prompts=1)
    assert recorder.flush(0) is None  # nothing recorded: no step
    first = completions(records, lambda r: r["responses"][:1] * 2 + r["responses"][-1:])
    recorder.record(first, grader.grade(first))
    step1 = recorder.flush(1)
    second = completions(records, lambda r: r["responses"])
    recorder.record(second, grader.grade(second))
    step2 = recorder.flush(2)
    assert step1 is not None and step2 is not None
    for step in (step1, step2):
        report = read_report(step.receipt)
        assert report.status == "completed"
        assert len(report.cells) == len(records)
        for cell in report.cells:
            name = f"modebench/level{cell.level}_{cell.domain}"
            assert step.metrics[f"{name}/accuracy"] == pytest.approx(cell.accuracy)
            assert step.metrics[f"{name}/pass_at_k"] == pytest.approx(cell.pass_at_k)
            assert step.metrics[f"{name}/distinct_at_k"] == pytest.approx(cell.distinct_at_k)
            assert step.metrics[f"{name}/pcmd"] == cell.pcmd.d_mode
            assert step.metrics[f"{name}/effective_modes"] == effective_modes(cell.pcmd.d_mode)
    # Step 1 saw each prompt's first mode; step 2 adds every other verified mode of the walkthrough.
    for record in records:
        name = f"modebench/level{record['level']}_{record['domain']}"
        assert step1.metrics[f"{name}/new_modes"] == step1.metrics[f"{name}/distinct_at_k"]
        assert step2.metrics[f"{name}/new_modes"] == step2.metrics[f"{name}/distinct_at_k"] - 1
        assert step2.metrics[f"{name}/bank_coverage"] == 1.0
    assert step2.metrics["modebench/all/prompts"] == len(records)
    assert cli_main(["trajectory", *recorder.trajectory_runs()]) == 0
    table = capsys.readouterr().out
    assert "retention_share" in table and "\n2 " in table
    # A step is written once: its receipt is never overwritten.
    again = completions(records[:1], lambda r: r["responses"])
    recorder.record(again, grader.grade(again))
    with pytest.raises(FileExistsError):
        recorder.flush(2)


def test_unscorable_prompts_are_left_out_and_counted(records):
    record = records[0]
    huge = "\\boxed{" + "1" * (MAX_RESPONSE_CHARS + 10) + "}"
    batch = completions(records[:2], lambda r: r["responses"])
    batch.append(Completion(record["level"], record["domain"], record["answer"], huge, record["id"]))
    with BatchGrader(1, unscorable="mask") as masked:
        graded = masked.grade(batch)
    recorder = RolloutRecorder()
    recorder.record(batch, graded)
    step = recorder.flush(7)
    assert step is not None and step.receipt is None
    name = f"modebench/level{record['level']}_{record['domain']}"
    assert step.metrics[f"{name}/unscorable"] == 1.0
    assert step.metrics[f"{name}/accuracy"] is None  # its only prompt is failed, as in a receipt
    assert step.metrics["modebench/all/prompts"] == 2.0
    assert step.metrics["modebench/all/accuracy"] is not None


def test_receipts_need_the_grader(tmp_path):
    with pytest.raises(ValueError, match="needs the grader"):
        RolloutRecorder(receipts_dir=tmp_path)


def test_bank_export_is_evaluate_input(tmp_path, grader, records):
    bank = ModeBank()
    recorder = RolloutRecorder(bank=bank)
    batch = completions(records, lambda r: r["responses"])
    recorder.record(batch, grader.grade(batch))
    path = tmp_path / "bank.jsonl"
    bank.export_jsonl(path)
    assert cli_main(["evaluate", str(path), "--output", str(tmp_path / "bank.json"), "--progress-every", "0",
                     "--min-defined-prompts", "1"]) == 0  # fmt: skip
    report = read_report(tmp_path / "bank.json")
    for cell in report.cells:  # every exemplar verified, one per banked mode
        assert cell.accuracy == 1.0
        pid = next(r["id"] for r in records if (r["level"], r["domain"]) == (cell.level, cell.domain))
        assert cell.distinct_at_k == len(bank.modes(pid))
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert sorted(line["id"] for line in lines) == bank.prompts


def test_a_step_flushed_without_publishing_writes_nothing(tmp_path, grader, records):
    recorder = RolloutRecorder(receipts_dir=tmp_path / "receipts", grader=grader)
    batch = completions(records[:1], lambda r: r["responses"])
    recorder.record(batch, grader.grade(batch))
    step = recorder.flush(1, publish=False)  # what the callback does on a non-main process
    assert step is not None and step.receipt is None and step.metrics["modebench/all/prompts"] == 1.0
    assert not (tmp_path / "receipts").exists() and recorder.trajectory_runs() == []
