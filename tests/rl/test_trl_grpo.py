"""A real trl.GRPOTrainer run on CPU with the modebench reward function.

The model is a tiny randomly initialised Llama built from a config, the tokenizer is built here
with the ``tokenizers`` library and given a chat template, and the dataset comes from the bundled
release (``modebench.rl.trainer_dataset``). Nothing is downloaded. The tokenizer knows a few
whole answers as single tokens (the tasks' certified witnesses and some wrong answers) and with
``max_completion_length=1`` each completion is one of them, so a random policy samples a mix of
verified modes, wrong and malformed answers: the rewards, bank, metrics and receipts then have
something to show.

Needs the ``rl`` extra (``pip install torch==2.13.0`` first on CPU, then ``pip install -e
'.[rl]'``). Skipped when it is missing, except in CI (``CI=true``), where a missing package fails.
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

from modebench.api import Task, grade, read_report
from modebench.cli import main as cli_main
from modebench.rl import BatchGrader, ModeBank, RolloutRecorder, TRLReward, trainer_rows

if os.environ.get("CI") == "true":
    import torch  # noqa: F401  # in CI a missing rl package is a failure, never a skip
    import trl
    from tokenizers import Tokenizer
else:
    trl = pytest.importorskip(
        "trl", reason="needs the rl extra: pip install torch==2.13.0 && pip install -e '.[rl]'"
    )
    Tokenizer = pytest.importorskip("tokenizers").Tokenizer

from datasets import Dataset

from modebench.rl import ModebenchCallback, load_bank  # noqa: E402  # needs transformers
from tests.rl.grpo_harness import CONFIGS, answers_for, build_tokenizer, tiny_model  # noqa: E402


class Spy:
    """Keeps what TRL passed to the reward function and what it returned."""

    __name__ = "modebench"

    def __init__(self, inner: TRLReward) -> None:
        self.inner = inner
        self.calls: list[tuple[list[Any], dict[str, list[Any]], list[float | None]]] = []

    def __call__(self, prompts: Any, completions: Any, completion_ids: Any = None, **kwargs: Any) -> Any:
        rewards = self.inner(prompts, completions, completion_ids, **kwargs)
        columns = {name: list(kwargs[name]) for name in ("answer", "level", "domain", "prompt_id")}
        self.calls.append((list(completions), columns, list(rewards)))
        return rewards


def test_grpo_trainer_runs_with_modebench_rewards(tmp_path):
    # One prompt per config: a step's batch (8 completions, 4 per prompt) holds both, so every step
    # grades the same prompts, which `modebench trajectory` requires of a run's steps.
    rows = [row for config in CONFIGS for row in trainer_rows(config, registry="bundled", limit=1)]
    tokenizer = build_tokenizer(answers_for(rows))
    model = tiny_model(tokenizer, seed=0)
    grader = BatchGrader(1)
    bank = ModeBank(capacity=4)
    receipts = tmp_path / "receipts"
    recorder = RolloutRecorder(bank=bank, receipts_dir=receipts, grader=grader, min_defined_prompts=1)
    reward = Spy(TRLReward(grader, recorder=recorder))
    args = trl.GRPOConfig(
        output_dir=str(tmp_path / "out"), per_device_train_batch_size=8, num_generations=4,
        max_completion_length=1, max_steps=3, logging_steps=1, learning_rate=1e-3, beta=0.0,
        report_to=[], save_strategy="steps", save_steps=3, log_completions=True, use_cpu=True, bf16=False, seed=0, temperature=1.0,
        dataloader_num_workers=0,
    )  # fmt: skip
    trainer = trl.GRPOTrainer(
        model=model, reward_funcs=[reward], args=args, train_dataset=Dataset.from_list(rows),
        processing_class=tokenizer,
    )  # fmt: skip
    ModebenchCallback(recorder).attach(trainer)
    try:
        trainer.train()
    finally:
        grader.close()
    assert trainer.state.global_step == 3

    # Rewards are grade()'s verdicts on the very completions TRL generated.
    assert reward.calls
    verdicts = []
    for completions, columns, rewards in reward.calls:
        for row, completion in enumerate(completions):
            text = completion[-1]["content"]  # conversational dataset: conversational completions
            task = Task(
                "t", columns["level"][row], columns["domain"][row], "p", json.loads(columns["answer"][row])
            )
            result = grade(task, text)
            verdicts.append(result["status"])
            assert rewards[row] == (1.0 if result["verified"] else 0.0)
    assert "correct" in verdicts and len(set(verdicts)) > 1

    # The bank holds only verified exemplars, one per mode, of the prompts they were sampled for.
    assert len(bank) > 0
    by_id = {row["prompt_id"]: row for row in rows}
    for pid in bank.prompts:
        row = by_id[pid]
        for item in bank.exemplars(pid):
            result = grade(Task(pid, row["level"], row["domain"], "p", json.loads(row["answer"])), item.text)
            assert result["status"] == "correct" and result["canonical_key"] == item.canonical_key
            assert item.prompt == row["prompt"]

    # Each completion's status and mode key went to TRL's completions table beside its reward.
    table = trainer._logs["extra"]
    assert list(table["modebench_status"])[-len(reward.inner.last) :] == [g.status for g in reward.inner.last]

    # The bank was saved with the checkpoint and loads back to the same state.
    assert load_bank(tmp_path / "out" / "checkpoint-3").state_dict() == bank.state_dict()

    # The callback's metrics are in the trainer's log history, next to TRL's own reward mean.
    logged = [entry for entry in trainer.state.log_history if "modebench/all/accuracy" in entry]
    assert [entry["step"] for entry in logged] == [1, 2, 3]
    for entry in logged:
        assert entry["modebench/all/accuracy"] == pytest.approx(entry["rewards/modebench/mean"])
        assert entry["modebench/all/bank_coverage"] >= 0
        cells = {key.split("/")[1] for key in entry if key.startswith("modebench/")} - {"all"}
        assert cells and cells <= {"level1_countdown", "level1_graph_coloring"}

    # Each step's receipt agrees with the live metrics, and `modebench trajectory` reads them.
    runs = recorder.trajectory_runs()
    assert len(runs) == 3
    for record in recorder.steps:
        report = read_report(record.receipt)
        assert report.status == "completed"
        for cell in report.cells:
            name = f"modebench/level{cell.level}_{cell.domain}"
            assert cell.accuracy == pytest.approx(record.metrics[f"{name}/accuracy"])
            assert cell.pass_at_k == pytest.approx(record.metrics[f"{name}/pass_at_k"])
            assert cell.distinct_at_k == pytest.approx(record.metrics[f"{name}/distinct_at_k"])
    assert cli_main(["trajectory", *runs]) == 0
