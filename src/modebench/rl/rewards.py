"""Reward functions with the trainers' own signatures, grading on a :class:`BatchGrader`.

* TRL: :class:`TRLReward` is a callable for ``GRPOTrainer(reward_funcs=[...])``. TRL calls it as
  ``reward_func(prompts=..., completions=..., completion_ids=..., **reward_kwargs)`` where
  ``reward_kwargs`` holds every dataset column repeated per completion plus ``trainer_state``
  (``trl/trainer/grpo_trainer.py``, ``GRPOTrainer._calculate_rewards``), and turns a ``None``
  reward into NaN (what it does with NaN depends on the TRL version: docs/rl.md).
* verl: :mod:`modebench.rl.verl`; OpenRLHF: :mod:`modebench.rl.openrlhf`.

The reward of a completion is 1.0 when its verdict is ``correct`` and 0.0 when it is
``incorrect`` or ``malformed``; an unscorable completion raises :class:`UnscorableCompletion`
(``unscorable="raise"``, TRLReward's default), gets ``None`` (``"mask"``) or 0.0
(``"count-as-incorrect"``), its status kept either way (:mod:`modebench.rl.batch`). Optional
shaping: :mod:`modebench.rl.shaping`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from modebench.rl.batch import (
    BatchGrader,
    Completion,
    Graded,
    RewardInputError,
    UnscorableCompletion,
    UnscorablePolicy,
)
from modebench.rl.distributed import gather_rows
from modebench.rl.live import RolloutRecorder
from modebench.rl.shaping import NoveltyBonus

__all__ = [
    "TRLReward",
    "completion_text",
    "reward_of",
]


def reward_of(graded: Graded, unscorable: UnscorablePolicy = "mask") -> float | None:
    """1.0 for a verified completion, 0.0 for a model failure; an unscorable one gets 0.0 under
    ``unscorable="count-as-incorrect"`` and None otherwise (under ``"raise"`` the grader has
    already raised)."""
    if not graded.scorable:
        return 0.0 if unscorable == "count-as-incorrect" else None
    return 1.0 if graded.verified else 0.0


def completion_text(completion: Any, row: int = 0) -> str:
    """The text TRL generated: a plain string, or (conversational) the content of the last
    assistant message of the completion's message list."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Sequence):
        for message in reversed(completion):
            if isinstance(message, Mapping) and message.get("role") == "assistant":
                content = message.get("content")
                if isinstance(content, str):
                    return content
                if isinstance(content, Sequence):  # content parts: [{"type": "text", "text": ...}]
                    return "".join(
                        part["text"]
                        for part in content
                        if isinstance(part, Mapping)
                        and part.get("type") == "text"
                        and isinstance(part.get("text"), str)
                    )
    raise RewardInputError(
        row, None, "completion must be a string or a list of chat messages with an assistant turn"
    )


class TRLReward:
    """A TRL ``GRPOTrainer`` reward function grading on a persistent :class:`BatchGrader`.

    Reads the dataset columns ``answer`` (the reference object or its JSON text), ``level``,
    ``domain`` and, when present, ``prompt_id`` (:func:`modebench.rl.dataset.trainer_rows` writes
    all four). Every graded batch is kept in :attr:`last` and handed to ``recorder`` (metrics,
    bank, receipts) when one is given, with the grader's unscorable policy (the recorder counts
    an unscorable completion as the reward did); each completion's status and mode key also go to TRL's
    completions table (columns ``modebench_status``, ``modebench_mode_key``) through the
    ``log_extra`` argument TRL passes.

    **Several ranks.** With a recorder or shaping, each rank grades its own share, then every
    rank's graded rows are gathered (:func:`modebench.rl.distributed.gather_rows`): the shaping
    and the recorder see each prompt's whole group, every rank records the same rows, and this
    rank's rewards are sliced back out. **Truncation.** A completion is ``truncated`` when its
    last token id is not one of ``stop_token_ids`` (TRL's own rule for ``clipped_ratio`` and
    ``mask_truncated_completions``: the trainer's ``eos_token_ids`` plus the pad token id);
    ``None`` when the stop ids are unknown or the completion has no ids.
    :meth:`ModebenchCallback.attach <modebench.rl.callback.ModebenchCallback.attach>` fills them
    from the trainer.
    """

    #: TRL names a plain callable's reward column after ``__name__`` (``rewards/modebench/mean``).
    __name__ = "modebench"

    def __init__(  # noqa: PLR0913 - every option keyword-only
        self,
        grader: BatchGrader | None = None,
        *,
        workers: int = 1,
        unscorable: UnscorablePolicy = "raise",
        recorder: RolloutRecorder | None = None,
        shaping: NoveltyBonus | None = None,
        stop_token_ids: Iterable[int] | None = None,
    ) -> None:
        self.grader = grader if grader is not None else BatchGrader(workers, unscorable=unscorable)
        self.recorder = recorder
        self.shaping = shaping
        self.stop_token_ids: frozenset[int] | None = (
            None if stop_token_ids is None else frozenset(stop_token_ids)
        )
        self.last: list[Graded] = []
        self.calls = 0

    def __call__(
        self,
        prompts: Sequence[Any],
        completions: Sequence[Any],
        completion_ids: Sequence[Any] | None = None,
        **kwargs: Any,
    ) -> list[float | None]:
        columns = {}
        for name in ("answer", "level", "domain"):
            value = kwargs.get(name)
            if value is None:
                raise KeyError(
                    f"the training dataset has no {name!r} column (modebench.rl.trainer_dataset writes it)"
                )
            if len(value) != len(completions):
                raise ValueError(f"column {name!r} has {len(value)} rows for {len(completions)} completions")
            columns[name] = value
        if completion_ids is not None and len(completion_ids) != len(completions):
            raise ValueError(
                f"completion_ids has {len(completion_ids)} rows for {len(completions)} completions"
            )
        ids = kwargs.get("prompt_id")
        batch = [
            Completion(
                level=columns["level"][row],
                domain=columns["domain"][row],
                answer=columns["answer"][row],
                response=completion_text(completion, row),
                prompt_id=None if ids is None else str(ids[row]),
            )
            for row, completion in enumerate(completions)
        ]
        token_ids = [_token_ids(item) for item in completion_ids] if completion_ids is not None else None
        # Asked before grading, on every rank alike: the whole batch is either training or evaluation.
        evaluation = self.recorder is not None and bool(self.recorder.evaluating())
        error: Exception | None = None
        graded: list[Graded] = []
        try:
            graded = self.grader.grade(batch)
        except (RewardInputError, UnscorableCompletion) as exc:
            error = exc
        rows = [
            _Row(
                completion,
                result,
                prompts[row] if row < len(prompts) else None,
                None if token_ids is None else token_ids[row],
                None if token_ids is None else self._truncated(token_ids[row]),
            )
            for row, (completion, result) in enumerate(zip(batch, graded))
        ]
        if self.recorder is not None or self.shaping is not None:
            # Whole groups: every rank's rows, rank order (a no-op in one process).
            everything, offset = gather_rows(rows, error)
        elif error is not None:
            raise error
        else:
            everything, offset = rows, 0
        rewards = [reward_of(row.graded, self.grader.unscorable) for row in everything]
        if self.shaping is not None:
            pids = [
                row.completion.prompt_id
                if row.completion.prompt_id is not None
                else "sha256:" + row.graded.reference_sha256
                for row in everything
            ]
            bank = None if self.recorder is None else self.recorder.bank
            rewards = self.shaping.apply(rewards, [row.graded for row in everything], pids, bank)
        if self.recorder is not None:
            self.recorder.record(
                [row.completion for row in everything],
                [row.graded for row in everything],
                [row.prompt for row in everything],
                completion_ids=[row.completion_ids for row in everything],
                truncated=[row.truncated for row in everything],
                evaluation=evaluation,
                unscorable=self.grader.unscorable,  # the metrics follow the rewards given
            )
        log_extra = kwargs.get("log_extra")
        if callable(log_extra):  # TRL >= 1.x: extra columns of its completions table
            log_extra("modebench_status", [result.status for result in graded])
            log_extra("modebench_mode_key", [result.canonical_key or "" for result in graded])
        self.last = graded
        self.calls += 1
        return rewards[offset : offset + len(batch)]

    def _truncated(self, ids: list[int] | None) -> bool | None:
        if ids is None or not ids or self.stop_token_ids is None:
            return None
        return ids[-1] not in self.stop_token_ids


@dataclass(frozen=True)
class _Row:
    """One graded completion as it travels between ranks (pickled by ``all_gather_object``)."""

    completion: Completion
    graded: Graded
    prompt: Any
    completion_ids: list[int] | None
    truncated: bool | None


def _token_ids(value: Any) -> list[int] | None:
    """A completion's token ids as a plain list (TRL passes lists; a tensor is converted)."""
    if value is None:
        return None
    tolist = getattr(value, "tolist", None)
    items = tolist() if callable(tolist) else value
    return [int(item) for item in items]
