"""``ReplayGRPOTrainer`` with a ``ReMaxBank`` fed the standard way, in real GRPO runs on CPU.

The bank is the recorder's: ``TRLReward(grader, recorder=RolloutRecorder(bank=ReMaxBank(...)))``
and ``ModebenchCallback(recorder).attach(trainer)``; the trainer finds the bank there.

* Resume: 4 steps straight against 2 steps, an interruption and ``trainer.train(
  resume_from_checkpoint=...)`` for the other 2 (as ``test_trl_eval_resume.py`` does for a
  ``ModeBank``). The checkpoint holds the Re:Max bank (cursor included) and the recorder state;
  the resumed run restores them exactly, replays the same prompt groups at steps 3 and 4 as the
  uninterrupted run, and ends with the same bank, recorder state and bank file.
* Evaluation after every step: every training row is offered to the bank exactly once, no
  evaluation row ever is (though the evaluation rollouts hold completions the bank would admit),
  and replay runs once per optimizer step, never during evaluation.

The tiny model's completions are at most 2 tokens; a bias towards the prompts' witnesses and
towards ending right after one (``generation_kwargs={"sequence_bias": ...}``, sampling only) makes
completions that the Re:Max bank admits (verified, ended inside the budget) common enough for a
few steps to bank several prompts. Needs the ``rl`` extra; with ``CI=true`` a missing package
fails instead of skipping.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from modebench.rl import BatchGrader, ReMaxBank, trainer_rows

if os.environ.get("CI") == "true":
    import torch  # noqa: F401  # in CI a missing rl package is a failure, never a skip
    import trl  # noqa: F401
else:
    pytest.importorskip(
        "trl", reason="needs the rl extra: pip install torch==2.13.0 && pip install -e '.[rl]'"
    )

from modebench.rl.checkpoint import BANK_FILE, STATE_FILE  # noqa: E402
from modebench.rl.replay import ReplayConfig, ReplayGRPOTrainer  # noqa: E402
from tests.rl.grpo_harness import (  # noqa: E402
    ScheduleBank,
    answers_for,
    bank_state,
    build_tokenizer,
    make_trainer,
    train_rows,
    witness_bias,
)


def replay_trainer(
    out: Path, rows: list[dict[str, Any]], tokenizer: Any, grader: BatchGrader, **options: Any
):
    """The harness's GRPO run as a ``ReplayGRPOTrainer`` whose bank is the recorder's."""
    bank = ScheduleBank()
    trainer, reward, recorder, snapshots = make_trainer(
        out, rows, tokenizer, grader, bank=bank, trainer_class=ReplayGRPOTrainer,
        trainer_options={"replay": ReplayConfig(alpha=0.5, scaling="none")}, max_completion_length=2,
        generation_kwargs=witness_bias(tokenizer, rows + options.pop("bias_rows", [])), **options,
    )  # fmt: skip
    assert trainer.bank is bank  # found through the reward function's recorder
    return trainer, reward, recorder, snapshots, bank


@pytest.fixture(scope="module")
def grader():
    with BatchGrader(1) as pool:
        yield pool


def _comparable(recorder: Any) -> dict[str, Any]:
    state = recorder.state_dict()
    return {"seen": state["seen"], "steps": [(s["step"], s["metrics"]) for s in state["steps"]]}


def _replay_logs(trainer: Any) -> list[dict[str, float]]:
    return [
        {key: value for key, value in entry.items() if key.startswith("replay/")}
        for entry in trainer.state.log_history
        if "replay/groups" in entry
    ]


@pytest.mark.slow  # three real GRPO runs
def test_resume_restores_the_remax_bank_and_continues_its_schedule(tmp_path, grader):
    # 8 prompts, 2 a step: the 4 steps are one epoch and the resume falls inside it (see
    # test_trl_eval_resume.py: TRL's sampler would reorder a resumed epoch).
    rows = train_rows(per_config=4)
    tokenizer = build_tokenizer(answers_for(rows))

    straight, straight_reward, straight_recorder, straight_snaps, straight_bank = replay_trainer(
        tmp_path / "straight", rows, tokenizer, grader, steps=4, save_steps=2
    )
    straight.train()
    first, _, _, _, first_bank = replay_trainer(
        tmp_path / "split", rows, tokenizer, grader, steps=4, save_steps=2, stop_at=2
    )
    first.train()
    assert first.state.global_step == 2
    checkpoint = tmp_path / "split" / "checkpoint-2"

    # The checkpoint holds the Re:Max bank, in its own file format, and the recorder state.
    saved = ReMaxBank(capacity=4)
    saved.load(checkpoint / BANK_FILE)
    at_two = next(snap["bank"] for snap in straight_snaps.banks if snap["step"] == 2)
    assert saved.state() == at_two == first_bank.state()
    assert len(saved.prompts) >= 2 and saved.cursor == first_bank.cursor  # a schedule under way
    state = json.loads((checkpoint / STATE_FILE).read_text())
    assert state["identity"]["bank"] == {"schema": "modebench-rl-remax-bank-v1", "capacity": 4,
                                         "groups_per_step": 1}  # fmt: skip
    assert [step["step"] for step in state["recorder"]["steps"]] == [1, 2]
    assert state["recorder"]["seen"]  # the seen sets are saved with the bank

    resumed, resumed_reward, resumed_recorder, _, resumed_bank = replay_trainer(
        tmp_path / "split", rows, tokenizer, grader, steps=4, save_steps=2
    )
    resumed.train(resume_from_checkpoint=str(checkpoint))
    assert resumed.state.global_step == 4

    # The same rollouts were graded at steps 3 and 4 ...
    def texts(calls: list[dict[str, Any]]) -> list[tuple[int, list[str], list[list[int]]]]:
        return [(call["step"], call["prompt_id"], call["completion_ids"]) for call in calls]

    assert texts(straight_reward.trace)[2:] == texts(resumed_reward.trace)
    # ... the schedule continued from the restored cursor exactly as the uninterrupted run's ...
    assert resumed_bank.served == straight_bank.served[2:]
    assert all(prompts for _, prompts in resumed_bank.served)  # replay did run at steps 3 and 4
    # (The resumed trainer's log history is the checkpoint's, steps 1 and 2, plus its own.)
    assert len(_replay_logs(straight)) == 4
    for got, expected in zip(_replay_logs(resumed), _replay_logs(straight), strict=True):
        assert got.keys() == expected.keys()
        for key, value in expected.items():
            assert got[key] == pytest.approx(value, rel=1e-5), key
    # ... and the bank (cursor included) and the recorder end in the same state.
    assert bank_state(resumed_bank) == bank_state(straight_bank)
    assert resumed_bank.cursor == straight_bank.cursor
    assert _comparable(resumed_recorder) == _comparable(straight_recorder)
    assert (tmp_path / "split" / "checkpoint-4" / BANK_FILE).read_bytes() == (
        tmp_path / "straight" / "checkpoint-4" / BANK_FILE
    ).read_bytes()


@pytest.mark.slow  # a real GRPO run with an evaluation after every step
def test_evaluation_rollouts_never_enter_the_remax_bank(tmp_path, grader):
    rows = train_rows(per_config=1)
    eval_rows = [row for config in ("level1_countdown", "level1_graph_coloring")
                 for row in trainer_rows(config, registry="bundled", limit=1)]  # fmt: skip
    eval_ids = {row["prompt_id"] for row in eval_rows}
    tokenizer = build_tokenizer(answers_for(rows + eval_rows))
    trainer, reward, recorder, _, bank = replay_trainer(
        tmp_path / "out", rows, tokenizer, grader, steps=3, per_device=16, generations=8, eval_rows=eval_rows,
        receipts=tmp_path / "receipts", bias_rows=eval_rows,
    )  # fmt: skip
    trainer.train()
    trainer.evaluate()

    training = [call for call in reward.trace if not call["evaluating"]]
    evaluating = [call for call in reward.trace if call["evaluating"]]
    eos = tokenizer.eos_token_id
    # The evaluation rollouts hold completions the bank would admit: verified and ended in budget.
    assert any(
        r == 1.0 and ids and ids[-1] == eos
        for call in evaluating
        for r, ids in zip(call["rewards"], call["completion_ids"])
    )
    # Every training row was offered exactly once (the recorder is the only feeder), no
    # evaluation row ever was, and nothing of the evaluation is banked or counted.
    assert bank.offers == [pid for call in training for pid in call["prompt_id"]]
    assert bank.offered == len(bank.offers) == 3 * 16
    assert not set(bank.offers) & eval_ids
    assert not set(bank.prompts) & eval_ids
    assert all(not bank.counts(pid) for pid in eval_ids)
    assert bank.prompts  # the training rows did fill it
    # Replay ran once per optimizer step and never during an evaluation.
    assert len(bank.served) == trainer.state.global_step == 3
    assert len(evaluating) == 4 and [record.step for record in recorder.eval_steps] == [1, 2, 3, 3]
    assert all(set(call["prompt_id"]) <= eval_ids for call in evaluating)
