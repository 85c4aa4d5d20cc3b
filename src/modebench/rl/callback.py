"""A ``transformers.TrainerCallback`` that puts the live collapse metrics into the trainer's logs.

* **Training steps.** At the end of every optimizer step it flushes the
  :class:`~modebench.rl.live.RolloutRecorder` (the completions the reward function graded during
  that step, every rank's: the reward function gathers them) into per-cell metrics, writing the
  step's receipt from the main process. At the next training log event it adds the metrics of
  the latest flushed step to the logs: to the dict every reporting callback receives
  (TensorBoard, W&B, the console) and to the entry the trainer has just appended to
  ``state.log_history``. Metrics undefined for a step (None) are left out.
* **Evaluation.** :meth:`ModebenchCallback.attach` points the recorder's ``evaluating`` test at
  ``trainer.model.training`` (TRL's own test: ``mode = "train" if self.model.training else
  "eval"`` in ``GRPOTrainer._generate_and_score_completions``), so rollouts graded during
  ``trainer.evaluate()`` stay out of the bank, the seen sets and the training metrics. The
  trainer logs an evaluation's metrics (``Trainer.evaluate``: ``self.log(output.metrics)``, then
  ``on_evaluate``) with the model still in eval mode: that log event flushes the evaluation rows
  into metrics under the trainer's prefix (``eval_modebench/<cell>/<metric>``; the prefix is read
  from the ``<prefix>_runtime`` key of the evaluation's logs) and the receipt ``eval-<N>.json``,
  and ``on_evaluate`` adds them to the metrics ``trainer.evaluate()`` returns.
* **Checkpoints.** ``on_save`` writes the bank and the recorder state into the checkpoint
  directory the trainer has just written (:mod:`modebench.rl.checkpoint`); ``on_train_begin`` of a
  resumed run (``state.global_step > 0``: the trainer has loaded ``trainer_state.json``)
  restores them from ``args.output_dir/checkpoint-<global step>`` — the directory
  ``trainer.train(resume_from_checkpoint=True)`` picks — or from ``resume_from`` when given, and
  refuses another run's state.

Reporting callbacks run in the order they were added, and the trainer adds its reporters before
user callbacks: :meth:`ModebenchCallback.attach` puts this callback first, so they see the metrics
at the same log event (``trainer.add_callback`` would let them see it only in log_history).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from transformers import TrainerCallback, TrainerControl, TrainerState, TrainingArguments

from modebench.rl import checkpoint
from modebench.rl.bank import ModeBank, read_json_bounded
from modebench.rl.checkpoint import BANK_FILE, STATE_FILE, CheckpointMismatch
from modebench.rl.live import RolloutRecorder, StepRecord
from modebench.rl.rewards import TRLReward

__all__ = ["BANK_FILE", "STATE_FILE", "CheckpointMismatch", "ModebenchCallback", "load_bank"]


class ModebenchCallback(TrainerCallback):  # type: ignore[misc,unused-ignore]  # Any when transformers is absent
    """Live collapse metrics in the trainer's logs, evaluation kept apart, state in checkpoints
    (module docstring). ``resume_from``: the checkpoint directory a resumed run restores the
    modebench state from, when it is not ``args.output_dir/checkpoint-<step>``."""

    def __init__(
        self, recorder: RolloutRecorder, *, resume_from: str | os.PathLike[str] | None = None
    ) -> None:
        self.recorder = recorder
        self.resume_from = None if resume_from is None else Path(resume_from)
        self._pending: dict[str, float] = {}
        self._eval_metrics: dict[str, float] = {}
        self._trainer: Any = None
        self._identity: dict[str, Any] | None = None

    def attach(self, trainer: Any) -> ModebenchCallback:
        """Register this callback on ``trainer`` ahead of its reporters, tell the recorder when the
        trainer evaluates, and give the trainer's ``TRLReward`` functions its stop token ids (for
        ``truncated``); returns this callback."""
        trainer.callback_handler.callbacks.insert(0, self)
        self._trainer = trainer
        self.recorder.evaluating = lambda: not trainer.model.training
        stops = {int(token) for token in getattr(trainer, "eos_token_ids", None) or []}
        tokenizer = getattr(trainer, "processing_class", None)
        tokenizer = getattr(tokenizer, "tokenizer", tokenizer)  # a processor wraps its tokenizer
        pad = getattr(tokenizer, "pad_token_id", None)
        if pad is not None:
            stops.add(int(pad))
        for function in getattr(trainer, "reward_funcs", []):
            if isinstance(function, TRLReward) and function.stop_token_ids is None and stops:
                function.stop_token_ids = frozenset(stops)
        return self

    # -- training ------------------------------------------------------------------------------
    def on_train_begin(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        if self._trainer is None and kwargs.get("model") is not None:
            model = kwargs["model"]  # added with trainer.add_callback: the same test, from the model
            self.recorder.evaluating = lambda: not model.training
        self._identity = checkpoint.run_identity(self.recorder, self._train_dataset(kwargs))
        if state.global_step > 0:
            directory = self.resume_from
            named = getattr(args, "resume_from_checkpoint", None)
            if directory is None and isinstance(named, str):
                directory = Path(named)
            if directory is None:
                directory = Path(str(args.output_dir)) / f"checkpoint-{state.global_step}"
            checkpoint.restore(directory, self.recorder, self._identity, state.global_step)

    def on_step_end(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        # Every rank recorded the same gathered rows; only the main process writes receipts, so
        # that no two processes write the same step.
        record = self.recorder.flush(state.global_step, publish=state.is_world_process_zero)
        if record is not None:
            self._pending = _defined(record)

    def on_log(
        self,
        args: TrainingArguments,
        state: TrainerState,
        control: TrainerControl,
        logs: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        if logs is None:
            return
        if self.recorder.evaluating():
            prefix = next((key[: -len("_runtime")] for key in logs if key.endswith("_runtime")), "eval")
            record = self.recorder.flush_eval(state.global_step, publish=state.is_world_process_zero)
            if record is None:
                return
            values = {f"{prefix}_{key}": value for key, value in _defined(record).items()}
            self._eval_metrics = values
        else:
            values, self._pending = self._pending, {}
        if not values:
            return
        logs.update(values)
        # The trainer appended {**logs, "step": ...} before calling the callbacks.
        if state.log_history and state.log_history[-1].get("step") == state.global_step:
            state.log_history[-1].update(values)

    def on_evaluate(
        self,
        args: TrainingArguments,
        state: TrainerState,
        control: TrainerControl,
        metrics: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        # The evaluation's log event came first and flushed its rows; hand its metrics to the
        # dict trainer.evaluate() returns as well.
        if metrics is not None:
            metrics.update(self._eval_metrics)
        self._eval_metrics = {}

    def on_save(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        # The trainer writes the checkpoint from the main process (of each node with
        # save_on_each_node); every rank holds the same state, so the same process writes ours.
        writer = state.is_local_process_zero if args.save_on_each_node else state.is_world_process_zero
        if not writer or args.output_dir is None:
            return
        directory = Path(args.output_dir) / f"checkpoint-{state.global_step}"
        if not directory.is_dir():
            return
        if self._identity is None:
            self._identity = checkpoint.run_identity(self.recorder, self._train_dataset(kwargs))
        checkpoint.save(directory, self.recorder, self._identity, state.global_step)

    def _train_dataset(self, kwargs: dict[str, Any]) -> Any:
        if self._trainer is not None:
            return getattr(self._trainer, "train_dataset", None)
        loader = kwargs.get("train_dataloader")
        return getattr(loader, "dataset", None)


def _defined(record: StepRecord) -> dict[str, float]:
    return {key: value for key, value in record.metrics.items() if value is not None}


def load_bank(checkpoint_dir: str | os.PathLike[str], bank: ModeBank | None = None) -> ModeBank:
    """The :class:`ModeBank` saved in a checkpoint directory (into ``bank`` when given)."""
    state = read_json_bounded(Path(checkpoint_dir) / BANK_FILE)
    target = bank if bank is not None else ModeBank()
    target.load_state_dict(state)
    return target
