"""Live metrics: the same numbers as the receipt evaluate writes for the step; new modes, bank
coverage and unscorable completions; `modebench trajectory` reads the step receipts."""

from __future__ import annotations

import json

import pytest

from modebench.api import read_report
from modebench.cli import main as cli_main
from modebench.diagnostics import MAX_RESPONSE_CHARS
from modebench.metrics import effective_modes
from modebench.rl import BatchGrader, Completion, ModeBank, RolloutRecorder, TRLReward


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


def _reward_call(reward, batch):
    """Call a TRLReward as TRL does (dataset columns repeated per completion)."""
    return reward(
        [None] * len(batch),
        [c.response for c in batch],
        answer=[c.answer for c in batch],
        level=[c.level for c in batch],
        domain=[c.domain for c in batch],
        prompt_id=[c.prompt_id for c in batch],
    )


def _unscorable_batch(records):
    """Every response of two prompts, plus one completion of the first over the size limit
    (``resource_limit``)."""
    record = records[0]
    huge = "\\boxed{" + "1" * (MAX_RESPONSE_CHARS + 10) + "}"
    batch = completions(records[:2], lambda r: r["responses"])
    batch.append(Completion(record["level"], record["domain"], record["answer"], huge, record["id"]))
    return batch


def _cells_equal_metrics(report, metrics):
    for cell in report.cells:
        name = f"modebench/level{cell.level}_{cell.domain}"
        assert metrics[f"{name}/accuracy"] == pytest.approx(cell.accuracy)
        assert metrics[f"{name}/pass_at_k"] == pytest.approx(cell.pass_at_k)
        assert metrics[f"{name}/distinct_at_k"] == pytest.approx(cell.distinct_at_k)
        assert metrics[f"{name}/pcmd"] == cell.pcmd.d_mode


def test_count_as_incorrect_counts_the_completion_in_the_metrics_and_the_receipt(tmp_path, records, grader):
    batch = _unscorable_batch(records)
    first = records[0]
    name = f"modebench/level{first['level']}_{first['domain']}"
    with BatchGrader(1, unscorable="count-as-incorrect") as counting:
        recorder = RolloutRecorder(receipts_dir=tmp_path, grader=counting, min_defined_prompts=1)
        reward = TRLReward(counting, recorder=recorder)
        rewards = _reward_call(reward, batch)
        step = recorder.flush(1)
        _reward_call(reward, completions(records[:2], lambda r: r["responses"]))
        assert recorder.flush(2) is not None
    assert rewards[-1] == 0.0  # what the trainer was given
    assert step is not None
    # The completion is an incorrect draw of its prompt (as the trainer saw it), and unscorable.
    verified = sum(
        result.verified for result in grader.grade(completions(records[:1], lambda r: r["responses"]))
    )
    assert step.metrics[f"{name}/accuracy"] == pytest.approx(verified / (len(first["responses"]) + 1))
    assert step.metrics[f"{name}/unscorable"] == 1.0
    assert step.metrics["modebench/all/prompts"] == 2.0 and step.metrics["modebench/all/unscorable"] == 1.0
    # The step receipt is evaluate's --unscorable count-as-incorrect one, and its cells are the metrics.
    payload = json.loads(step.receipt.read_text())
    assert payload["evaluation"]["unscorable"] == "count-as-incorrect"
    assert payload["evaluation"]["counted_as_incorrect"] == {"resource_limit": 1}
    report = read_report(step.receipt)
    assert report.status == "completed" and len(report.cells) == 2
    _cells_equal_metrics(report, step.metrics)
    # Every step of the run is published under the run's policy, and trajectory reads them.
    assert cli_main(["trajectory", *recorder.trajectory_runs()]) == 0


def test_mask_leaves_the_prompt_out_and_publishes_under_fail_run(tmp_path, records):
    batch = _unscorable_batch(records)
    first, second = records[0], records[1]
    with BatchGrader(1, unscorable="mask") as masking:
        recorder = RolloutRecorder(receipts_dir=tmp_path, grader=masking, min_defined_prompts=1)
        reward = TRLReward(masking, recorder=recorder)
        rewards = _reward_call(reward, batch)
        step = recorder.flush(1)
        clean = completions(records[:2], lambda r: r["responses"])
        _reward_call(reward, clean)
        clean_step = recorder.flush(2)
    assert rewards[-1] is None
    assert step is not None and clean_step is not None
    # Today's rule: the prompt with an unscorable completion is left out of the other metrics.
    assert step.metrics[f"modebench/level{first['level']}_{first['domain']}/accuracy"] is None
    assert step.metrics[f"modebench/level{first['level']}_{first['domain']}/unscorable"] == 1.0
    assert step.metrics[f"modebench/level{second['level']}_{second['domain']}/accuracy"] is not None
    # The receipts are 0.4.0's fail-run ones (no policy keys): the unscorable step's scores are
    # void there, and a step without an unscorable completion has cells equal to the metrics.
    for record in (step, clean_step):
        evaluation = json.loads(record.receipt.read_text())["evaluation"]
        assert "unscorable" not in evaluation and "counted_as_incorrect" not in evaluation
    assert read_report(step.receipt).status != "completed"
    report = read_report(clean_step.receipt)
    assert report.status == "completed"
    _cells_equal_metrics(report, clean_step.metrics)


def test_one_step_takes_one_unscorable_policy(records, grader):
    batch = completions(records[:1], lambda r: r["responses"])
    graded = grader.grade(batch)
    recorder = RolloutRecorder()
    recorder.record(batch, graded, unscorable="count-as-incorrect")
    with pytest.raises(ValueError, match="two unscorable policies"):
        recorder.record(batch, graded, unscorable="mask")
    assert recorder.flush(1) is not None
    recorder.record(batch, graded, unscorable="mask")  # a new step may take another
    assert recorder.flush(2) is not None
