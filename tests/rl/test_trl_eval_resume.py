"""Real ``trl.GRPOTrainer`` runs on CPU: evaluation kept apart from training, and resume.

* Evaluation every step (``eval_strategy="steps"``, ``eval_steps=1``) on the bundled release's
  ``eval`` prompts while training on a generated ``train`` split: no evaluation prompt reaches
  the bank, the seen sets, the training metrics or the training receipts; the evaluation's
  metrics are logged under the trainer's prefix (``eval_modebench/...``), returned by
  ``trainer.evaluate()`` and written as ``eval-<N>.json`` receipts.
* Resume: 4 steps straight against 2 steps, an interruption, and ``trainer.train(
  resume_from_checkpoint=...)`` for the other 2. The completions are generated on CPU by a
  seeded model whose weights, optimizer and RNG states the trainer restores, so both runs grade
  the same rollouts (checked), and must end with the same bank and recorder state.

Needs the ``rl`` extra; with ``CI=true`` a missing package fails instead of skipping.
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

from modebench.api import read_report
from modebench.rl import BatchGrader, trainer_rows

if os.environ.get("CI") == "true":
    import torch  # noqa: F401  # in CI a missing rl package is a failure, never a skip
    import trl  # noqa: F401
else:
    pytest.importorskip(
        "trl", reason="needs the rl extra: pip install torch==2.13.0 && pip install -e '.[rl]'"
    )

from modebench.rl.checkpoint import STATE_FILE, CheckpointMismatch  # noqa: E402
from tests.rl.grpo_harness import answers_for, build_tokenizer, make_trainer, train_rows  # noqa: E402


@pytest.fixture(scope="module")
def grader():
    with BatchGrader(1) as pool:
        yield pool


@pytest.mark.slow  # a real GRPO run with an evaluation after every step
def test_evaluation_rollouts_never_reach_training_state(tmp_path, grader):
    rows = train_rows(per_config=1)
    eval_rows = [row for config in ("level1_countdown", "level1_graph_coloring")
                 for row in trainer_rows(config, registry="bundled", limit=1)]  # fmt: skip
    eval_ids = {row["prompt_id"] for row in eval_rows}
    train_ids = {row["prompt_id"] for row in rows}
    assert not eval_ids & train_ids
    tokenizer = build_tokenizer(answers_for(rows + eval_rows))
    receipts = tmp_path / "receipts"
    trainer, reward, recorder, _ = make_trainer(
        tmp_path / "out", rows, tokenizer, grader, steps=2, eval_rows=eval_rows, receipts=receipts
    )
    trainer.train()
    final = trainer.evaluate()

    # TRL did call the reward function during evaluation, on the evaluation prompts.
    evaluated = [call for call in reward.trace if call["evaluating"]]
    assert evaluated and all(set(call["prompt_id"]) <= eval_ids for call in evaluated)
    assert all(set(call["prompt_id"]) <= train_ids for call in reward.trace if not call["evaluating"])
    assert any(r == 1.0 for call in evaluated for r in call["rewards"])  # verified eval rollouts exist

    # Nothing of it in the bank, the seen sets or the training metrics and receipts.
    assert recorder.bank is not None
    offered = {offer["prompt_id"] for offer in recorder.bank.offers}
    assert offered == train_ids | offered and not offered & eval_ids
    seen = {pid for _, _, pid, _ in recorder.state_dict()["seen"]}
    assert seen <= train_ids and not seen & eval_ids
    assert [record.step for record in recorder.steps] == [1, 2]
    for record in recorder.steps:
        assert record.metrics["modebench/all/prompts"] == len(train_ids)
        lines = record.receipt.with_suffix(".jsonl").read_text().splitlines()
        assert {json.loads(line)["id"] for line in lines} == train_ids

    # Evaluation metrics under the trainer's eval prefix, in the logs and in evaluate()'s result.
    logged_eval = [
        entry for entry in trainer.state.log_history if "eval_loss" in entry or "eval_runtime" in entry
    ]
    assert len(logged_eval) == 3  # after step 1, after step 2, and the explicit evaluate()
    for entry in logged_eval:
        assert entry["eval_modebench/all/prompts"] == len(eval_ids)
        assert 0.0 <= entry["eval_modebench/all/accuracy"] <= 1.0
        assert not any(key.startswith("modebench/") for key in entry)
    for entry in trainer.state.log_history:
        if "loss" in entry:  # training log events carry no evaluation metrics
            assert not any(key.startswith("eval_modebench/") for key in entry)
            assert entry["modebench/all/prompts"] == len(train_ids)
    assert final["eval_modebench/all/prompts"] == len(eval_ids)

    # Evaluation receipts of their own, covering the evaluation prompts only.
    assert [record.step for record in recorder.eval_steps] == [1, 2, 2]
    names = [record.receipt.name for record in recorder.eval_steps]
    assert names == ["eval-00000001.json", "eval-00000002.json", "eval-00000002-2.json"]
    for record in recorder.eval_steps:
        report = read_report(record.receipt)
        assert report.status == "completed"
        lines = record.receipt.with_suffix(".jsonl").read_text().splitlines()
        assert {json.loads(line)["id"] for line in lines} == eval_ids
        for cell in report.cells:
            name = f"modebench/level{cell.level}_{cell.domain}"
            assert cell.accuracy == pytest.approx(record.metrics[f"{name}/accuracy"])
            assert cell.distinct_at_k == pytest.approx(record.metrics[f"{name}/distinct_at_k"])


def _comparable(recorder: Any) -> dict[str, Any]:
    state = recorder.state_dict()
    return {"seen": state["seen"], "steps": [(s["step"], s["metrics"]) for s in state["steps"]]}


@pytest.mark.slow  # three real GRPO runs
def test_resume_gives_the_same_bank_and_recorder_state(tmp_path, grader):
    # 8 prompts, 2 a step: the 4 steps are one epoch and the resume falls inside it. (TRL's
    # RepeatSampler draws each epoch's order from one seeded generator, which a resumed run
    # restarts, so a resume at an epoch boundary would see another order: another rollout set.)
    rows = train_rows(per_config=4)
    tokenizer = build_tokenizer(answers_for(rows))

    straight, straight_reward, straight_recorder, _ = make_trainer(
        tmp_path / "straight", rows, tokenizer, grader, steps=4, save_steps=2
    )
    straight.train()

    first, _, first_recorder, _ = make_trainer(
        tmp_path / "split", rows, tokenizer, grader, steps=4, save_steps=2, stop_at=2
    )
    first.train()
    assert first.state.global_step == 2
    checkpoint = tmp_path / "split" / "checkpoint-2"
    assert (checkpoint / STATE_FILE).is_file() and (checkpoint / "modebench_bank.json").is_file()
    assert not list(checkpoint.glob(".*.tmp"))  # written atomically: no temporary left behind

    resumed, resumed_reward, resumed_recorder, _ = make_trainer(
        tmp_path / "split", rows, tokenizer, grader, steps=4, save_steps=2
    )
    resumed.train(resume_from_checkpoint=str(checkpoint))
    assert resumed.state.global_step == 4

    # The same rollouts were graded in both runs (CPU generation restored from the checkpoint)...
    def texts(calls: list[dict[str, Any]]) -> list[tuple[int, list[str], list[str]]]:
        return [(call["step"], call["prompt_id"], call["texts"]) for call in calls]

    assert texts(straight_reward.trace)[2:] == texts(resumed_reward.trace)
    # ... so the bank and the recorder end in the same state, new_modes included.
    assert resumed_recorder.bank.state_dict() == straight_recorder.bank.state_dict()
    assert _comparable(resumed_recorder) == _comparable(straight_recorder)
    assert len(straight_recorder.bank.state_dict()["prompts"]) > 0
    # The state saved at the end is the same too (checkpoint-4 of both runs).
    for name in ("modebench_bank.json",):
        assert (tmp_path / "split" / "checkpoint-4" / name).read_bytes() == (
            tmp_path / "straight" / "checkpoint-4" / name
        ).read_bytes()
    del first_recorder


@pytest.mark.slow
def test_resume_from_another_runs_checkpoint_is_refused(tmp_path, grader):
    rows = train_rows(per_config=2)
    tokenizer = build_tokenizer(answers_for(rows))
    first, _, _, _ = make_trainer(tmp_path / "run", rows, tokenizer, grader, steps=1, save_steps=1)
    first.train()
    other_rows = rows[:1] + rows[2:]  # another prompt set
    other, _, recorder, _ = make_trainer(
        tmp_path / "run", other_rows, tokenizer, grader, steps=2, save_steps=1
    )
    with pytest.raises(CheckpointMismatch, match=r"belongs to another run.*prompts: saved"):
        other.train(resume_from_checkpoint=str(tmp_path / "run" / "checkpoint-1"))
    assert len(recorder.bank.state_dict()["prompts"]) == 0  # nothing was mixed in
