"""A tiny real ``trl.GRPOTrainer`` run with modebench rewards: shared by the rank, evaluation and
resume tests, and run by ``torchrun`` as a script for the two-rank test.

The model is a tiny randomly initialised Llama built from a config and the tokenizer is built
here (``tokenizers`` WordLevel with a chat template): nothing is downloaded. The tokenizer knows
a few whole answers as single tokens (the tasks' certified witnesses and two wrong answers), and
with ``max_completion_length=1`` each completion is one of them, so a random policy samples a mix
of verified modes, wrong and malformed answers. Training prompts come from a *train* split drawn
with the domains' own generators (``modebench.rl.generated_rows``; the bundled release ships only
``eval``).

As a script (``torchrun --nproc_per_node 2 tests/rl/grpo_harness.py OUT``) each rank writes
``OUT/rank-<r>.json``: what TRL passed to the reward function and what it returned, the bank
after every step, the log history and the recorder's steps.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import torch
from datasets import Dataset
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast, TrainerCallback
from trl import GRPOConfig, GRPOTrainer

from modebench.domains import plugin
from modebench.rl import (
    BatchGrader,
    ModeBank,
    ModebenchCallback,
    NoveltyBonus,
    ReMaxBank,
    ReplayGroup,
    RolloutRecorder,
    TRLReward,
    generated_rows,
)

CONFIGS = ("level1_countdown", "level1_graph_coloring")
CHAT_TEMPLATE = (
    "{% for message in messages %}<|{{ message['role'] }}|> {{ message['content'] }} <|end|> {% endfor %}"
    "{% if add_generation_prompt %}<|assistant|> {% endif %}"
)
SPECIAL = ["[UNK]", "[PAD]", "<|end|>", "<|system|>", "<|user|>", "<|assistant|>"]
WRONG = ["not a solution", "\\boxed{}"]


def train_rows(per_config: int = 2) -> list[dict[str, Any]]:
    """``per_config`` generated train prompts of each configuration."""
    return [row for config in CONFIGS for row in generated_rows(config, per_config, seed=7)]


def answers_for(rows: list[dict[str, Any]]) -> list[str]:
    answers = list(WRONG)
    for row in rows:
        answers += plugin(row["domain"]).witnesses(row["level"], json.loads(row["answer"]))[:3]
    return sorted(set(answers))


def build_tokenizer(answers: list[str]) -> PreTrainedTokenizerFast:
    vocab = {token: index for index, token in enumerate(SPECIAL)}
    backend = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    backend.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend, unk_token="[UNK]", pad_token="[PAD]", eos_token="<|end|>"
    )
    tokenizer.add_special_tokens({"additional_special_tokens": SPECIAL[3:]})
    tokenizer.add_tokens(answers)  # each whole answer is one token, matched before splitting
    tokenizer.chat_template = CHAT_TEMPLATE
    return tokenizer


def tiny_model(tokenizer: PreTrainedTokenizerFast, seed: int = 0) -> LlamaForCausalLM:
    torch.manual_seed(seed)
    return LlamaForCausalLM(
        LlamaConfig(
            vocab_size=len(tokenizer), hidden_size=16, intermediate_size=32, num_hidden_layers=1,
            num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=1024,
            pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id,
            bos_token_id=tokenizer.eos_token_id,
        )
    )  # fmt: skip


class Spy(TRLReward):
    """A :class:`TRLReward` that keeps what TRL passed to it and what it returned (this rank's
    share); a subclass, so that ``ModebenchCallback.attach`` finds it among the reward functions."""

    def __init__(self, grader: BatchGrader, **options: Any) -> None:
        super().__init__(grader, **options)
        self.inner = self
        self.trace: list[dict[str, Any]] = []

    def __call__(self, prompts: Any, completions: Any, completion_ids: Any = None, **kwargs: Any) -> Any:
        rewards = super().__call__(prompts, completions, completion_ids, **kwargs)
        self.trace.append(
            {
                "step": kwargs["trainer_state"].global_step,
                "evaluating": self.inner.recorder is not None and self.inner.recorder.evaluating(),
                "texts": [completion[-1]["content"] for completion in completions],
                "completion_ids": [list(ids) for ids in completion_ids],
                **{name: list(kwargs[name]) for name in ("answer", "level", "domain", "prompt_id")},
                "rewards": list(rewards),
            }
        )
        return rewards


class RecordingBank(ModeBank):
    """A :class:`ModeBank` keeping every offer's token ids and truncation flag (what a
    token-id bank would receive through the ``RolloutBank`` protocol)."""

    def __init__(self, capacity: int) -> None:
        super().__init__(capacity)
        self.offers: list[dict[str, Any]] = []

    def offer(self, prompt_id: str, **fields: Any) -> bool:
        self.offers.append(
            {
                "prompt_id": prompt_id,
                "text": fields["text"],
                "completion_ids": fields.get("completion_ids"),
                "truncated": fields.get("truncated"),
            }
        )
        return super().offer(prompt_id, **fields)


def bank_state(bank: Any) -> dict[str, Any]:
    """The whole state of a ``ModeBank`` (``state_dict``) or a ``ReMaxBank`` (``state``)."""
    state: dict[str, Any] = bank.state() if isinstance(bank, ReMaxBank) else bank.state_dict()
    return state


class ScheduleBank(ReMaxBank):
    """A :class:`ReMaxBank` that keeps each offer's prompt id and each scheduled call's groups."""

    def __init__(self, capacity: int = 4) -> None:
        super().__init__(capacity=capacity)
        self.offers: list[str] = []
        self.served: list[tuple[int, list[str]]] = []  # (cursor before the call, prompt ids)

    def offer(self, prompt_id: str, **fields: Any) -> bool:
        self.offers.append(prompt_id)
        return super().offer(prompt_id, **fields)

    def replay_groups(self) -> list[ReplayGroup]:
        self.seal()
        before = self.cursor
        groups = super().replay_groups()
        self.served.append((before, [group.prompt_id for group in groups]))
        return groups


def witness_bias(tokenizer: PreTrainedTokenizerFast, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """``generation_kwargs`` making completions the Re:Max bank admits common: +3 on every witness
    token of ``rows``, +10 on the end of sequence right after one (``sequence_bias``, sampling only)."""
    eos = tokenizer.eos_token_id
    witnesses = set()
    for row in rows:
        witnesses.update(plugin(row["domain"]).witnesses(row["level"], json.loads(row["answer"]))[:3])
    ids = sorted(tokenizer.convert_tokens_to_ids(w) for w in witnesses)
    bias = [[[token], 3.0] for token in ids] + [[[token, eos], 10.0] for token in ids]
    return {"sequence_bias": bias}


class Snapshots(TrainerCallback):  # type: ignore[misc]
    """The bank's state at the end of every step (after the callback's flush: it runs first)."""

    def __init__(self, recorder: RolloutRecorder) -> None:
        self.recorder = recorder
        self.banks: list[dict[str, Any]] = []

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        assert self.recorder.bank is not None
        self.banks.append({"step": state.global_step, "bank": bank_state(self.recorder.bank)})


class StopAt(TrainerCallback):  # type: ignore[misc]
    """Interrupts training after ``step`` (the trainer still saves that step's checkpoint)."""

    def __init__(self, step: int) -> None:
        self.step = step

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if state.global_step == self.step:
            control.should_training_stop = True


def make_trainer(  # noqa: PLR0913 - the knobs the tests turn
    out: Path,
    rows: list[dict[str, Any]],
    tokenizer: PreTrainedTokenizerFast,
    grader: BatchGrader,
    *,
    steps: int = 3,
    per_device: int = 8,
    generations: int = 4,
    eval_rows: list[dict[str, Any]] | None = None,
    shaping: NoveltyBonus | None = None,
    receipts: Path | None = None,
    save_steps: int | None = None,
    stop_at: int | None = None,
    resume_from: Path | None = None,
    multi_rank: bool = False,
    bank: Any = None,
    trainer_class: type[GRPOTrainer] = GRPOTrainer,
    trainer_options: dict[str, Any] | None = None,
    max_completion_length: int = 1,
    generation_kwargs: dict[str, Any] | None = None,
) -> tuple[GRPOTrainer, Spy, RolloutRecorder, Snapshots]:
    """A GRPO run on the tiny model; ``bank`` defaults to a :class:`RecordingBank`, and
    ``trainer_class`` (with ``trainer_options``) may be ``ReplayGRPOTrainer``."""
    bank = RecordingBank(capacity=4) if bank is None else bank
    recorder = RolloutRecorder(bank=bank, receipts_dir=receipts, grader=grader, min_defined_prompts=1)
    reward = Spy(grader, recorder=recorder, shaping=shaping)
    extra: dict[str, Any] = {}
    if eval_rows is not None:
        extra = {"eval_strategy": "steps", "eval_steps": 1, "per_device_eval_batch_size": per_device}
    if multi_rank:
        extra["ddp_backend"] = "gloo"
    args = GRPOConfig(
        output_dir=str(out), per_device_train_batch_size=per_device, num_generations=generations,
        max_completion_length=max_completion_length, generation_kwargs=generation_kwargs, max_steps=steps,
        logging_steps=1, learning_rate=1e-3, beta=0.0,
        report_to=[], save_strategy="steps" if save_steps else "no", save_steps=save_steps or 500,
        use_cpu=True, bf16=False, seed=0, temperature=1.0, dataloader_num_workers=0, **extra,
    )  # fmt: skip
    trainer = trainer_class(
        model=tiny_model(tokenizer), reward_funcs=[reward], args=args, train_dataset=Dataset.from_list(rows),
        eval_dataset=None if eval_rows is None else Dataset.from_list(eval_rows), processing_class=tokenizer,
        **(trainer_options or {}),
    )  # fmt: skip
    ModebenchCallback(recorder, resume_from=resume_from).attach(trainer)
    # The trainer's stop ids reached the reward function (TRL's truncation rule).
    assert reward.inner.stop_token_ids == frozenset({tokenizer.eos_token_id, tokenizer.pad_token_id})
    snapshots = Snapshots(recorder)
    trainer.add_callback(snapshots)
    if stop_at is not None:
        trainer.add_callback(StopAt(stop_at))
    return trainer, reward, recorder, snapshots


def main(out: Path, replay: bool = False) -> None:
    """One rank of the two-rank run (``torchrun`` sets the rank); with ``replay``, a
    ``ReplayGRPOTrainer`` reading the recorder's ``ReMaxBank``."""
    rows = train_rows(per_config=3)  # 6 prompts: 3 per step of 12 completions, so groups split
    tokenizer = build_tokenizer(answers_for(rows))
    options: dict[str, Any] = {}
    if replay:
        from modebench.rl.replay import ReplayConfig, ReplayGRPOTrainer

        options = {
            "bank": ScheduleBank(), "trainer_class": ReplayGRPOTrainer, "max_completion_length": 2,
            "trainer_options": {"replay": ReplayConfig(alpha=0.5, scaling="none")},
            "generation_kwargs": witness_bias(tokenizer, rows),
        }  # fmt: skip
    with BatchGrader(1) as grader:
        trainer, reward, recorder, snapshots = make_trainer(
            out, rows, tokenizer, grader, steps=3, per_device=6, generations=4,
            shaping=NoveltyBonus(bonus=0.5, scope="group"), receipts=out / "receipts", multi_rank=True,
            **options,
        )  # fmt: skip
        trainer.train()
    rank = trainer.accelerator.process_index
    assert trainer.accelerator.num_processes == 2
    bank = recorder.bank
    result = {
        "rank": rank,
        "calls": reward.trace,
        "banks": snapshots.banks,
        "log_history": trainer.state.log_history,
        "steps": [{"step": record.step, "metrics": record.metrics} for record in recorder.steps],
        "receipts": [str(record.receipt) if record.receipt else None for record in recorder.steps],
        "recorder": recorder.state_dict(),
        "stop_token_ids": sorted(reward.inner.stop_token_ids or []),
        "offers": bank.offers if isinstance(bank, RecordingBank | ScheduleBank) else [],
        "served": bank.served if isinstance(bank, ScheduleBank) else [],
        "parameters": {
            name: parameter.detach().flatten().tolist()
            for name, parameter in trainer.model.named_parameters()
        },
    }
    (out / f"rank-{rank}.json").write_text(json.dumps(result, default=str), encoding="utf-8")


if __name__ == "__main__":
    import faulthandler
    import signal

    faulthandler.register(signal.SIGUSR1)  # a hung rank's stacks, on demand
    main(Path(sys.argv[1]), replay=sys.argv[2:] == ["replay"])
