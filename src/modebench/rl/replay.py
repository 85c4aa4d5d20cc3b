"""Verified-mode replay for TRL's GRPO: a ``GRPOTrainer`` subclass adding Re:Max's replay loss.

At every optimizer step — the gradient-accumulation boundary, after the last micro-batch's GRPO
backward and before the optimizer steps, as Re:Max's learner does
(``learner/grpo.py``: ``if canonical_replay_groups and local_grad_step % grad_acc_step == 0``) —
:class:`ReplayGRPOTrainer` takes the next scheduled prompt groups of a
:class:`~modebench.rl.remax_bank.ReMaxBank`, teacher-forces each exemplar's stored token ids on
its prompt (the registered messages, tokenized by TRL's own ``_tokenize_prompts``) and adds

    alpha × scale × mean over groups of (mean over the group's exemplars of the exemplar's mean token NLL)

to the gradient: Re:Max's ``core/objectives.py:canonical_replay_uniform_verified_likelihood_loss``
(uniform over exemplars; a score is the response-token mean log-probability, logits divided by
the sampling temperature, as ``learner/grpo.py:_score_canonical_replay_rows`` does). ``scale`` is
the group-size scaling with N = ``num_generations``: ``"per_rollout"`` (N − 1)/N × 1/N (the Re:Max
recipes' ``verified_likelihood_per_rollout``), ``"estimator"`` (N − 1)/N (``verified_likelihood``)
or ``"none"`` (1). ``alpha`` defaults to 0.1, the recipes' ``ONLINE_CANONICAL_REPLAY_ALPHA``.

``mode="compute_only"`` is the control arm (Re:Max's ``online_canonical_replay_compute_only``):
the same forward and backward passes over the same exemplars, with the loss multiplied by zero,
so its parameters follow plain GRPO's exactly while it spends the replay arm's compute.

Why a ``training_step`` override and not ``compute_loss``: TRL's ``GRPOTrainer.compute_loss``
runs once per micro-batch, is also called by ``prediction_step`` during evaluation, and returns a
loss already divided by the accumulation steps; replay belongs once per optimizer step and never
in evaluation. ``training_step`` runs only in training and TRL counts micro-batches in it
(``self._step``, ``GRPOTrainer.training_step``), so the boundary is known exactly there.

Replay metrics go to the trainer's logs under ``replay/…`` (TRL averages them over the logging
interval): ``groups``, ``exemplars``, ``nll`` (mean over the replayed exemplars), ``loss`` (the
applied term; 0 in the control), ``forward_passes``, ``forward_tokens``, the bank's
``bank_exemplars``, ``banked_prompts``, ``modes_per_prompt``, ``discovered_modes`` and ``frozen``,
and ``compute_only``. ``replay_forward_passes`` and ``replay_forward_tokens`` on the trainer count
the whole run's replay cost.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import torch
from trl.trainer.grpo_trainer import GRPOTrainer

from modebench.rl.remax_bank import ReMaxBank, ReplayGroup
from modebench.rl.rewards import TRLReward

__all__ = ["ReplayConfig", "ReplayGRPOTrainer", "replay_nll", "replay_scale"]

Scaling = Literal["per_rollout", "estimator", "none"]


@dataclass(frozen=True)
class ReplayConfig:
    """How replay trains: ``mode`` ``"replay"`` or ``"compute_only"`` (the control), ``alpha``
    and the group-size ``scaling`` (module docstring)."""

    mode: Literal["replay", "compute_only"] = "replay"
    alpha: float = 0.1
    scaling: Scaling = "per_rollout"

    def __post_init__(self) -> None:
        if self.mode not in ("replay", "compute_only"):
            raise ValueError("mode must be 'replay' or 'compute_only'")
        if self.scaling not in ("per_rollout", "estimator", "none"):
            raise ValueError("scaling must be 'per_rollout', 'estimator' or 'none'")
        if isinstance(self.alpha, bool) or not math.isfinite(self.alpha) or self.alpha < 0:
            raise ValueError("alpha must be a finite nonnegative number")


def replay_scale(scaling: Scaling, num_generations: int) -> float:
    """The group-size factor of the replay term for groups of ``num_generations`` rollouts."""
    n = float(num_generations)
    if scaling == "per_rollout":
        return (n - 1.0) / n / n
    if scaling == "estimator":
        return (n - 1.0) / n
    return 1.0


def replay_nll(
    model: Any,
    prompt_ids: list[list[int]],
    groups: list[ReplayGroup],
    *,
    pad_token_id: int,
    temperature: float = 1.0,
) -> tuple[torch.Tensor, list[torch.Tensor], int]:
    """Teacher-force every exemplar of ``groups`` on its prompt's token ids (one forward pass over
    the right-padded rows) and return the uniform verified-likelihood loss (mean over groups of the
    mean over exemplars of each exemplar's mean token NLL), the per-exemplar NLLs (detached) and
    the number of tokens fed to the model."""
    rows: list[tuple[list[int], int]] = []  # (sequence, prompt length)
    sizes = []
    for ids, group in zip(prompt_ids, groups, strict=True):
        sizes.append(len(group.completion_ids))
        rows.extend((list(ids) + list(completion), len(ids)) for completion in group.completion_ids)
    width = max(len(sequence) for sequence, _ in rows)
    device = next(model.parameters()).device
    input_ids = torch.full((len(rows), width), pad_token_id, dtype=torch.long, device=device)
    attention = torch.zeros_like(input_ids)
    # response_mask[r, t] is True when token t + 1 of row r is a completion token.
    response_mask = torch.zeros((len(rows), width - 1), dtype=torch.bool, device=device)
    for index, (sequence, prompt_length) in enumerate(rows):
        input_ids[index, : len(sequence)] = torch.tensor(sequence, dtype=torch.long, device=device)
        attention[index, : len(sequence)] = 1
        response_mask[index, prompt_length - 1 : len(sequence) - 1] = True
    logits = model(input_ids=input_ids, attention_mask=attention, use_cache=False).logits[:, :-1, :].float()
    if temperature != 1.0:
        logits = logits / temperature
    token_logps = logits.log_softmax(-1).gather(-1, input_ids[:, 1:, None]).squeeze(-1)
    mask = response_mask.to(token_logps.dtype)
    nll = -(token_logps * mask).sum(-1) / mask.sum(-1)  # one mean token NLL per exemplar
    per_group = torch.stack([part.mean() for part in torch.split(nll, sizes)])
    return per_group.mean(), list(nll.detach()), int(attention.sum())


def _replay_bank(bank: ReMaxBank | None, reward_funcs: Any) -> ReMaxBank:
    """``bank``, or the ``ReMaxBank`` of the recorder of a ``TRLReward`` among ``reward_funcs``."""
    fed: list[ReMaxBank] = []
    for function in reward_funcs:
        recorder = getattr(function, "recorder", None) if isinstance(function, TRLReward) else None
        found = None if recorder is None else recorder.bank
        if isinstance(found, ReMaxBank) and all(found is not other for other in fed):
            fed.append(found)
    if bank is None:
        if len(fed) != 1:
            raise ValueError(
                "ReplayGRPOTrainer needs one ReMaxBank: give the TRLReward among reward_funcs a "
                "RolloutRecorder(bank=ReMaxBank(...)), or pass bank="
                + ("" if not fed else f" (the reward functions' recorders hold {len(fed)})")
            )
        return fed[0]
    if not isinstance(bank, ReMaxBank):
        raise TypeError(f"bank must be a ReMaxBank, not {type(bank).__name__}")
    if any(other is not bank for other in fed):
        raise ValueError(
            "bank= is not the ReMaxBank the reward function's recorder fills: pass that same bank "
            "(or leave bank= out), so that replay reads the bank the rollouts are offered to"
        )
    return bank


class ReplayGRPOTrainer(GRPOTrainer):  # type: ignore[misc,unused-ignore]  # Any when trl is untyped
    """``trl.GRPOTrainer`` plus Re:Max's verified replay at each optimizer step (module docstring).

    ``bank`` is the :class:`ReMaxBank` the run's verified completions fill. The standard way to
    fill it is the recorder: ``TRLReward(grader, recorder=RolloutRecorder(bank=ReMaxBank(...)))``
    among ``reward_funcs`` and ``ModebenchCallback(recorder).attach(trainer)`` (which gives the
    reward function the trainer's stop token ids, so that ``truncated`` is known); ``bank`` may
    then be left out and is that recorder's bank. A ``bank`` other than the ``ReMaxBank`` a
    recorder among the reward functions fills is refused (replay would read a bank nobody fills).
    ``replay`` is a :class:`ReplayConfig`. Everything else is ``GRPOTrainer``'s.
    """

    def __init__(
        self, *args: Any, bank: ReMaxBank | None = None, replay: ReplayConfig | None = None, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.bank = _replay_bank(bank, getattr(self, "reward_funcs", []))
        self.replay = replay if replay is not None else ReplayConfig()
        self.replay_forward_passes = 0
        self.replay_forward_tokens = 0
        self._prompt_ids: dict[str, list[int]] = {}

    def training_step(self, model: Any, inputs: Any, num_items_in_batch: Any = None) -> Any:
        # Through Any: TRL's training_step is untyped, and without the rl extra installed (a
        # newcomer's `make check`) TRL is not there for mypy to read at all.
        training_step: Any = super().training_step
        loss = training_step(model, inputs, num_items_in_batch)
        # GRPOTrainer.training_step has just counted this micro-batch in self._step.
        if self._step % self.current_gradient_accumulation_steps == 0:
            self.replay_step(model)
        return loss

    def _tokenized_prompt(self, group: ReplayGroup) -> list[int]:
        ids = self._prompt_ids.get(group.prompt_id)
        if ids is None:
            if group.prompt is None:
                raise ValueError(f"prompt {group.prompt_id!r} was banked without its prompt")
            # The same call TRL makes before generating, so the replayed prompt is the sampled one.
            ids = [int(token) for token in self._tokenize_prompts([group.prompt])[0][0]]
            self._prompt_ids[group.prompt_id] = ids
        return ids

    def replay_step(self, model: Any) -> dict[str, float]:
        """Replay the bank's next scheduled groups into the gradient (the control: zero gradient,
        same passes); returns and logs the step's replay metrics."""
        groups = self.bank.replay_groups()
        metrics: dict[str, float] = {"groups": float(len(groups)), "exemplars": 0.0, "forward_passes": 0.0,
                                     "forward_tokens": 0.0, "loss": 0.0}  # fmt: skip
        if groups:
            pad = self._tokenizer.pad_token_id  # GRPOTrainer.__init__ guarantees one
            was_training = model.training
            model.train(False)  # eval mode, as Re:Max scores exemplars: no dropout, no random state used
            try:
                loss, nlls, tokens = replay_nll(
                    model, [self._tokenized_prompt(g) for g in groups], groups,
                    pad_token_id=int(pad), temperature=float(self.temperature),
                )  # fmt: skip
                weight = self.replay.alpha * replay_scale(self.replay.scaling, int(self.num_generations or 1))
                applied = loss * (weight if self.replay.mode == "replay" else 0.0)
                # accelerate divides a backward loss by its accumulation steps; the replay term is
                # added once per optimizer step, so cancel that division (as Re:Max cancels DeepSpeed's).
                self.accelerator.backward(applied * self.accelerator.gradient_accumulation_steps)
            finally:
                model.train(was_training)
            self.replay_forward_passes += 1
            self.replay_forward_tokens += tokens
            metrics.update(
                exemplars=float(len(nlls)), nll=float(torch.stack(nlls).mean()), forward_passes=1.0,
                forward_tokens=float(tokens), loss=float(applied.detach()),
            )  # fmt: skip
        bank = self.bank.diagnostics()
        metrics.update(
            bank_exemplars=bank["exemplars"], banked_prompts=bank["banked_prompts"],
            modes_per_prompt=bank["modes_per_prompt"], discovered_modes=bank["discovered_modes"],
            frozen=bank["frozen"], compute_only=float(self.replay.mode == "compute_only"),
        )  # fmt: skip
        for name, value in metrics.items():
            self._metrics["train"][f"replay/{name}"].append(value)
        return metrics
