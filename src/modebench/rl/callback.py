"""A ``transformers.TrainerCallback`` that puts the live collapse metrics into the trainer's logs.

At the end of every optimizer step it flushes the :class:`~modebench.rl.live.RolloutRecorder`
(the completions the reward function graded during that step) into per-cell metrics, writing the
step's receipt when the recorder has a receipts directory. At the next log event it adds the
metrics of the latest flushed step to the logs: to the dict every reporting callback receives
(TensorBoard, W&B, the console) and to the entry the trainer has just appended to
``state.log_history``. Metrics that are undefined for a step (None) are left out. In a
multi-process run each process's metrics cover the rollouts it graded; only the main process
writes receipts. At each
checkpoint the bank's state is saved beside it as ``modebench_bank.json`` (:func:`load_bank`).

Reporting callbacks run in the order they were added, and the trainer adds its reporters before
user callbacks: :meth:`ModebenchCallback.attach` puts this callback first, so they see the metrics
at the same log event (``trainer.add_callback`` would let them see it only in log_history).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from transformers import TrainerCallback, TrainerControl, TrainerState, TrainingArguments

from modebench.rl.bank import ModeBank
from modebench.rl.live import RolloutRecorder

__all__ = ["BANK_FILE", "ModebenchCallback", "load_bank"]

BANK_FILE = "modebench_bank.json"


class ModebenchCallback(TrainerCallback):  # type: ignore[misc,unused-ignore]  # Any when transformers is absent
    """Live collapse metrics in the trainer's logs (module docstring)."""

    def __init__(self, recorder: RolloutRecorder) -> None:
        self.recorder = recorder
        self._pending: dict[str, float] = {}

    def attach(self, trainer: Any) -> ModebenchCallback:
        """Register this callback on ``trainer`` ahead of its reporters; returns it."""
        trainer.callback_handler.callbacks.insert(0, self)
        return self

    def on_step_end(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        # In a multi-process run each process grades its own share of the rollouts; only the
        # main process writes receipts, so that no two processes write the same step.
        record = self.recorder.flush(state.global_step, publish=state.is_world_process_zero)
        if record is not None:
            self._pending = {key: value for key, value in record.metrics.items() if value is not None}

    def on_log(
        self,
        args: TrainingArguments,
        state: TrainerState,
        control: TrainerControl,
        logs: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        if not self._pending or logs is None:
            return
        logs.update(self._pending)
        # The trainer appended {**logs, "step": ...} before calling the callbacks.
        if state.log_history and state.log_history[-1].get("step") == state.global_step:
            state.log_history[-1].update(self._pending)
        self._pending = {}

    def on_save(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        bank = self.recorder.bank
        if bank is None or not state.is_world_process_zero or args.output_dir is None:
            return
        checkpoint = Path(args.output_dir) / f"checkpoint-{state.global_step}"
        if checkpoint.is_dir():
            _write_json(checkpoint / BANK_FILE, bank.state_dict())


def load_bank(checkpoint: str | os.PathLike[str], bank: ModeBank | None = None) -> ModeBank:
    """The bank saved in a checkpoint directory (into ``bank`` when given)."""
    path = Path(checkpoint) / BANK_FILE
    if path.stat().st_size > 1 << 30:
        raise ValueError(f"{path}: larger than 1 GiB; not a mode bank")
    with open(path, encoding="utf-8") as handle:
        state = json.load(handle)
    target = bank if bank is not None else ModeBank(state.get("capacity", 1))
    target.load_state_dict(state)
    return target


def _write_json(path: Path, value: Any) -> None:
    temporary = path.with_name(path.name + ".tmp")
    with open(temporary, "w", encoding="utf-8") as handle:
        json.dump(value, handle, ensure_ascii=False, allow_nan=False)
    os.replace(temporary, path)
