"""modebench inside the RL training loop: batch rewards, a verified-mode bank, live collapse metrics.

The ``rl`` extra (``pip install -e '.[rl]'``) brings TRL and transformers; everything except the
trainer callback works without them. ``docs/rl.md`` has a recipe per trainer.

* :class:`BatchGrader` — a persistent pool of isolated workers grading whole rollout batches.
* :class:`TRLReward`, :func:`compute_score`, :func:`compute_score_batch` — reward functions with
  TRL's and verl's signatures.
* :func:`trainer_rows`, :func:`trainer_dataset`, :func:`verl_rows` — a frozen split as a
  trainer's dataset; :func:`generated_rows` — a freshly drawn training split.
* :class:`ModeBank` — verified exemplars per prompt and canonical mode key, with a replay schedule;
  :class:`RolloutBank` — the protocol (offer, modes, save, load, identity) any bank implements.
* :class:`RolloutRecorder` and :class:`ModebenchCallback` — per-step metrics in the trainer's
  logs, and receipts for ``modebench trajectory``.
* :class:`NoveltyBonus` — optional mode-aware shaping, off by default.
* :class:`ReMaxBank` — Re:Max's verified bank (token-id exemplars, first-come capacity, a
  group-per-step schedule); :class:`ReplayGRPOTrainer` — ``trl.GRPOTrainer`` with Re:Max's replay
  loss or its compute-only control (needs the ``rl`` extra).
"""

from __future__ import annotations

from typing import Any

from modebench.rl.bank import ModeBank, ReplayItem
from modebench.rl.batch import BatchGrader, Completion, Graded, RewardInputError, UnscorableCompletion
from modebench.rl.dataset import generated_rows, trainer_dataset, trainer_rows, verl_rows
from modebench.rl.live import RolloutRecorder, StepRecord
from modebench.rl.protocols import RolloutBank
from modebench.rl.remax_bank import ReMaxBank, ReplayGroup
from modebench.rl.rewards import TRLReward, completion_text, reward_of
from modebench.rl.shaping import NoveltyBonus
from modebench.rl.verl import compute_score, compute_score_batch

__all__ = [
    "BatchGrader",
    "Completion",
    "Graded",
    "ModeBank",
    "ModebenchCallback",
    "NoveltyBonus",
    "ReplayItem",
    "ReMaxBank",
    "ReplayConfig",
    "ReplayGRPOTrainer",
    "ReplayGroup",
    "RewardInputError",
    "RolloutBank",
    "RolloutRecorder",
    "StepRecord",
    "TRLReward",
    "UnscorableCompletion",
    "completion_text",
    "compute_score",
    "compute_score_batch",
    "generated_rows",
    "load_bank",
    "reward_of",
    "trainer_dataset",
    "trainer_rows",
    "verl_rows",
]

_CALLBACK = ("ModebenchCallback", "load_bank")
_REPLAY = ("ReplayConfig", "ReplayGRPOTrainer")


def __getattr__(name: str) -> Any:
    # The callback subclasses transformers.TrainerCallback: imported on first use, with a one-line
    # install hint when the extra is missing.
    if name in _CALLBACK:
        try:
            from modebench.rl import callback
        except ImportError as exc:
            raise ImportError(
                f"modebench.rl.{name} needs the rl extra ({exc.name} is missing): pip install -e '.[rl]'"
            ) from None
        return getattr(callback, name)
    if name in _REPLAY:  # subclasses trl.GRPOTrainer: imported on first use, as the callback is
        try:
            from modebench.rl import replay
        except ImportError as exc:
            raise ImportError(
                f"modebench.rl.{name} needs the rl extra ({(exc.name or '').partition('.')[0]} is missing): "
                "pip install -e '.[rl]'"
            ) from None
        return getattr(replay, name)
    raise AttributeError(f"module 'modebench.rl' has no attribute {name!r}")
