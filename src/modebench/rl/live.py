"""Live collapse metrics from the rollouts a trainer has just graded, and their receipts.

A :class:`RolloutRecorder` receives every graded completion from the reward functions
(:meth:`RolloutRecorder.record`) and, once per optimizer step (:meth:`RolloutRecorder.flush`),
turns the completions recorded since the previous step into metrics per cell (level, domain):

``accuracy``, ``pass_at_k``, ``distinct_at_k``
    means over the step's prompts of the per-prompt values of ``modebench.metrics.prompt_metrics``,
    where a prompt's group is all its completions of the step (k = their number).
``pcmd``, ``effective_modes``
    the mean of the defined per-prompt PCMD values (prompts with at least two verified
    completions) and ``1 / (1 - pcmd)``, as a receipt's cell (``metrics.mode_diversity``,
    ``metrics.effective_modes``); None when no prompt is defined.
``new_modes``
    verified modes per prompt never seen verified for that prompt before this step (mean).
``bank_coverage``
    share of the step's prompts with at least one mode in the bank after this step.
``unscorable``
    completions that could not be scored (status ``timeout``, ``resource_limit`` or
    ``worker_failure``), whatever the reward policy made of them; they are never banked.

**Unscorable completions follow the reward policy** (``record(..., unscorable=...)``, which
``TRLReward`` fills with its grader's policy). Under ``"count-as-incorrect"`` — the trainer was
given 0.0 — a timeout or resource limit counts as an incorrect draw in the metrics, as
``modebench evaluate --unscorable count-as-incorrect`` scores it, and the step receipt is
published under that same policy, so its cells equal the live metrics. Under ``"mask"`` and
``"raise"`` the completion got no reward: its prompt is left out of the other metrics and the
receipt is published under 0.4.0's ``fail-run`` (which then voids the step's scores). A worker
failure fails its prompt under every policy, as in ``evaluate``.

Keys are ``modebench/<cell>/<metric>`` with ``<cell>`` like ``level1_countdown``, plus
``modebench/all/<metric>`` over every prompt of the step. With ``receipts_dir`` set, each flushed
step is also written as ``step-<N>.jsonl`` (the step's prompts and completions, ``modebench
evaluate`` input) and evaluated into the receipt ``step-<N>.json`` through ``evaluate``'s own
pipeline, reusing the verdicts already graded; ``modebench trajectory`` reads those receipts
(:meth:`RolloutRecorder.trajectory_runs`).

**Several ranks.** The reward function gathers every rank's graded rows before recording them
(:mod:`modebench.rl.distributed`), so every rank records the same whole groups in the same order:
the metrics, the seen sets and the bank are identical on every rank, and the receipts the main
process writes cover every rank's rollouts.

**Evaluation.** Rows recorded while the trainer evaluates (:attr:`RolloutRecorder.evaluating`,
which the callback points at ``trainer.model.training``, TRL's own test) are kept apart: they
never reach the bank, the seen sets or the training metrics; :meth:`RolloutRecorder.flush_eval`
turns them into metrics of their own and the receipt ``eval-<N>.json``.

**Resume.** :meth:`RolloutRecorder.state_dict` holds the seen sets and the flushed steps (the
bank saves itself, :class:`~modebench.rl.protocols.RolloutBank`); ``modebench.rl.checkpoint``
writes both into each checkpoint directory and restores them.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from modebench import metrics
from modebench.metrics import DEFAULT_MIN_DEFINED_PROMPTS
from modebench.rl import _engine
from modebench.rl.batch import BatchGrader, Completion, Graded, UnscorablePolicy, check_policy
from modebench.rl.protocols import RolloutBank

__all__ = ["METRIC_NAMES", "RECORDER_SCHEMA", "RolloutRecorder", "StepRecord"]

RECORDER_SCHEMA: Final = "modebench-rl-recorder-v1"

METRIC_NAMES = (
    "accuracy",
    "pass_at_k",
    "distinct_at_k",
    "pcmd",
    "effective_modes",
    "new_modes",
    "bank_coverage",
    "prompts",
    "completions",
    "unscorable",
)

_Key = tuple[int, str, str]  # (level, domain, prompt id)


@dataclass
class _Prompt:
    level: int
    domain: str
    answer: Any
    reference: dict[str, Any]
    reference_sha256: str
    texts: list[str]
    attempts: list[dict[str, Any]]


@dataclass(frozen=True)
class StepRecord:
    """One flushed step: its metrics and, when written, its receipt."""

    step: int
    metrics: dict[str, float | None]
    receipt: Path | None


class RolloutRecorder:
    """Collects graded rollouts between optimizer steps; see the module docstring.

    ``bank`` (optional) is offered every recorded training completion at :meth:`record`.
    ``grader`` is the pool used to publish receipts (the reward function's, so nothing is graded
    twice). ``evaluating`` (set by :meth:`ModebenchCallback.attach
    <modebench.rl.callback.ModebenchCallback.attach>`) says whether the trainer is evaluating.
    """

    def __init__(
        self,
        *,
        bank: RolloutBank | None = None,
        receipts_dir: str | os.PathLike[str] | None = None,
        grader: BatchGrader | None = None,
        min_defined_prompts: int = DEFAULT_MIN_DEFINED_PROMPTS,
    ) -> None:
        if receipts_dir is not None and grader is None:
            raise ValueError("writing receipts needs the grader whose verdicts they record")
        self.bank = bank
        self.receipts_dir = None if receipts_dir is None else Path(receipts_dir)
        self.grader = grader
        self.min_defined_prompts = min_defined_prompts
        self.evaluating: Callable[[], bool] = _never
        self._pending: dict[_Key, _Prompt] = {}
        self._eval_pending: dict[_Key, _Prompt] = {}
        # evaluate's --unscorable policy of the rows pending in each (one per step).
        self._policy: dict[bool, str | None] = {False: None, True: None}
        self._seen: dict[_Key, set[str]] = {}
        self._lock = threading.Lock()
        self.steps: list[StepRecord] = []
        self.eval_steps: list[StepRecord] = []
        self.last: dict[str, float | None] = {}

    def record(  # noqa: PLR0913 - a batch and its per-row companions
        self,
        completions: Sequence[Completion],
        graded: Sequence[Graded],
        prompts: Sequence[Any] | None = None,
        *,
        completion_ids: Sequence[Sequence[int] | None] | None = None,
        truncated: Sequence[bool | None] | None = None,
        evaluation: bool | None = None,
        unscorable: UnscorablePolicy | None = None,
    ) -> None:
        """Note a graded batch (the reward function calls this, with every rank's rows).

        ``prompts``, when given, is what the bank hands back on replay (the trainer's prompt of
        each row); ``completion_ids`` and ``truncated`` go to the bank with each row, and the
        bank is sealed after the batch (see :class:`~modebench.rl.protocols.RolloutBank`).
        ``evaluation`` (default: ask :attr:`evaluating`) keeps the batch out of the bank, the seen
        sets and the training metrics. ``unscorable`` is the reward policy the batch was graded
        under (default: the recorder's grader's, else ``"mask"``): it decides how an unscorable
        completion counts in the metrics and the receipt (module docstring); one step's rows
        must share it."""
        if evaluation is None:
            evaluation = bool(self.evaluating())
        if unscorable is None:
            unscorable = self.grader.unscorable if self.grader is not None else "mask"
        receipt_policy = _engine.receipt_policy(check_policy(unscorable))
        for name, column in (
            ("prompts", prompts),
            ("completion_ids", completion_ids),
            ("truncated", truncated),
        ):
            if column is not None and len(column) != len(completions):
                raise ValueError(f"{name} has {len(column)} rows for {len(completions)} completions")
        with self._lock:
            pending = self._eval_pending if evaluation else self._pending
            earlier = self._policy[evaluation]
            if pending and earlier is not None and earlier != receipt_policy:
                raise ValueError(
                    f"rows of one step were graded under two unscorable policies ({earlier} and "
                    f"{receipt_policy}): its metrics and receipt need one"
                )
            self._policy[evaluation] = receipt_policy
            for row, (completion, result) in enumerate(zip(completions, graded, strict=True)):
                pid = _prompt_id(completion, result)
                key = (result.level, result.domain, pid)
                entry = pending.get(key)
                if entry is None:
                    answer = completion.answer
                    if isinstance(answer, str):
                        answer = json.loads(answer)
                    reference = result.reference
                    entry = pending[key] = _Prompt(
                        result.level, result.domain, answer, reference, result.reference_sha256, [], []
                    )
                elif entry.reference_sha256 != result.reference_sha256:
                    raise ValueError(f"row {row}: prompt {pid!r} was recorded with another reference")
                entry.texts.append(completion.response)
                entry.attempts.append(dict(result.attempt))
                if self.bank is not None and not evaluation:
                    self.bank.offer(
                        pid,
                        level=result.level,
                        domain=result.domain,
                        answer=entry.answer,
                        reference_sha256=result.reference_sha256,
                        text=completion.response,
                        status=result.status,
                        canonical_key=result.canonical_key,
                        prompt=None if prompts is None else prompts[row],
                        completion_ids=None if completion_ids is None else completion_ids[row],
                        truncated=None if truncated is None else truncated[row],
                    )
            if self.bank is not None and not evaluation and completions:
                # One gathered reward call is one generation batch: the same batches on every
                # rank, whatever else reads the bank in between (RolloutBank.seal).
                self.bank.seal()

    def flush(self, step: int, *, publish: bool = True) -> StepRecord | None:
        """Metrics (and receipt, unless ``publish`` is False) of the training rows recorded since
        the last flush, labelled ``step``; None when nothing was recorded (a step that reused
        earlier generations)."""
        with self._lock:
            pending, self._pending = self._pending, {}
            policy = self._policy[False] or _engine.receipt_policy("mask")
            self._policy[False] = None
        if not pending:
            return None
        values = self._metrics(pending, policy, remember=True)
        receipt = None
        if publish and self.receipts_dir is not None:
            receipt = self._publish(f"step-{step:08d}", pending, policy)
        record = StepRecord(step, values, receipt)
        self.steps.append(record)
        self.last = values
        return record

    def flush_eval(self, step: int, *, publish: bool = True) -> StepRecord | None:
        """Metrics (and receipt ``eval-<step>[-<n>].json``) of the rows recorded during an
        evaluation; the seen sets are read (``new_modes`` counts modes new to training) but never
        updated. None when nothing was recorded."""
        with self._lock:
            pending, self._eval_pending = self._eval_pending, {}
            policy = self._policy[True] or _engine.receipt_policy("mask")
            self._policy[True] = None
        if not pending:
            return None
        values = self._metrics(pending, policy, remember=False)
        receipt = None
        if publish and self.receipts_dir is not None:
            earlier = sum(1 for record in self.eval_steps if record.step == step)
            name = f"eval-{step:08d}" + (f"-{earlier + 1}" if earlier else "")
            receipt = self._publish(name, pending, policy)
        record = StepRecord(step, values, receipt)
        self.eval_steps.append(record)
        return record

    def trajectory_runs(self) -> list[str]:
        """``STEP=PATH`` arguments of ``modebench trajectory`` for the training receipts written."""
        return [f"{record.step}={record.receipt}" for record in self.steps if record.receipt is not None]

    # -- state -------------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """Plain JSON state: the seen sets and the flushed steps (the bank saves itself).

        Rows recorded but not yet flushed are not part of it: the callback saves after the
        step's flush, when there are none."""
        with self._lock:
            return {
                "schema": RECORDER_SCHEMA,
                "seen": [
                    [level, domain, pid, sorted(keys)]
                    for (level, domain, pid), keys in sorted(self._seen.items())
                ],
                "steps": [_step_state(record) for record in self.steps],
                "eval_steps": [_step_state(record) for record in self.eval_steps],
            }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Replace the seen sets and the flushed steps with ``state`` (:meth:`state_dict`'s)."""
        if not isinstance(state, Mapping) or state.get("schema") != RECORDER_SCHEMA:
            raise ValueError(f"not a rollout recorder state (schema {RECORDER_SCHEMA} expected)")
        try:
            seen = {
                (int(level), str(domain), str(pid)): {str(k) for k in keys}
                for level, domain, pid, keys in state["seen"]
            }
            steps = [_step_record(item) for item in state["steps"]]
            eval_steps = [_step_record(item) for item in state["eval_steps"]]
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"malformed rollout recorder state: {exc!r}") from None
        with self._lock:
            self._seen = seen
            self.steps = steps
            self.eval_steps = eval_steps
            self.last = steps[-1].metrics if steps else {}
            self._pending = {}
            self._eval_pending = {}
            self._policy = {False: None, True: None}

    # -- metrics -----------------------------------------------------------------------------
    def _metrics(
        self, pending: dict[_Key, _Prompt], policy: str, *, remember: bool
    ) -> dict[str, float | None]:
        cells: dict[str, list[tuple[_Key, _Prompt]]] = {}
        for key, entry in pending.items():
            cells.setdefault(f"level{entry.level}_{entry.domain}", []).append((key, entry))
        out: dict[str, float | None] = {}
        everything = [item for items in cells.values() for item in items]
        new_by_prompt = {key: self._new_modes(key, entry) for key, entry in everything}
        if remember:
            for key, entry in everything:  # after counting: "new" means before this step
                self._seen.setdefault(key, set()).update(_verified_keys(entry.attempts))
        for name, items in [*sorted(cells.items()), ("all", everything)]:
            for metric, value in self._cell(items, new_by_prompt, policy).items():
                out[f"modebench/{name}/{metric}"] = value
        return out

    def _new_modes(self, key: _Key, entry: _Prompt) -> int:
        seen = self._seen.get(key, set())
        return len(set(_verified_keys(entry.attempts)) - seen)

    def _cell(
        self, items: list[tuple[_Key, _Prompt]], new: dict[_Key, int], policy: str
    ) -> dict[str, float | None]:
        # The attempts as the step receipt scores them (evaluate's --unscorable policy); a prompt
        # with an attempt still unscorable is failed there, so it is left out here.
        scored = [(key, _engine.scored_attempts(policy, entry.attempts)) for key, entry in items]
        scorable = [
            (key, attempts)
            for key, attempts in scored
            if not any(attempt["status"] in _engine.UNSCORABLE for attempt in attempts)
        ]
        unscorable = sum(
            1 for _, entry in items for attempt in entry.attempts if attempt["status"] in _engine.UNSCORABLE
        )
        per_prompt = [metrics.prompt_metrics(attempts) for _, attempts in scorable]
        pcmd_values = [
            value
            for _, attempts in scorable
            if (value := metrics.mode_diversity(metrics.verified_mode_counts(attempts))) is not None
        ]
        d_mode = sum(pcmd_values) / len(pcmd_values) if pcmd_values else None
        coverage = None
        if self.bank is not None and items:
            coverage = sum(1 for key, _ in items if self.bank.modes(key[2])) / len(items)
        return {
            "accuracy": _mean([m["accuracy"] for m in per_prompt]),
            "pass_at_k": _mean([m["pass_at_k"] for m in per_prompt]),
            "distinct_at_k": _mean([float(m["distinct_at_k"]) for m in per_prompt]),
            "pcmd": d_mode,
            "effective_modes": metrics.effective_modes(d_mode),
            "new_modes": _mean([float(new[key]) for key, _ in scorable]),
            "bank_coverage": coverage,
            "prompts": float(len(items)),
            "completions": float(sum(len(entry.texts) for _, entry in items)),
            "unscorable": float(unscorable),
        }

    # -- receipts ----------------------------------------------------------------------------
    def _publish(self, name: str, pending: dict[_Key, _Prompt], policy: str) -> Path:
        assert self.receipts_dir is not None and self.grader is not None
        self.receipts_dir.mkdir(parents=True, exist_ok=True)
        records = self.receipts_dir / f"{name}.jsonl"
        receipt = self.receipts_dir / f"{name}.json"
        lines = []
        graded = []
        for (level, domain, pid), entry in sorted(pending.items(), key=lambda item: item[0][2]):
            record = {
                "id": pid,
                "level": level,
                "domain": domain,
                "answer": entry.answer,
                "responses": entry.texts,
            }
            lines.append(json.dumps(record, ensure_ascii=False, allow_nan=False) + "\n")
            graded.append((_engine.prepared(level, domain, entry.reference, entry.texts), entry.attempts))
        with open(records, "x", encoding="utf-8") as handle:  # a step is written once
            handle.writelines(lines)
        _engine.publish_receipt(
            records,
            receipt,
            self.grader.pool,
            graded,
            min_defined_prompts=self.min_defined_prompts,
            unscorable=policy,
        )
        return receipt


def _never() -> bool:
    return False


def _step_state(record: StepRecord) -> dict[str, Any]:
    return {
        "step": record.step,
        "metrics": dict(sorted(record.metrics.items())),
        "receipt": None if record.receipt is None else str(record.receipt),
    }


def _step_record(item: Mapping[str, Any]) -> StepRecord:
    values = {str(name): None if value is None else float(value) for name, value in item["metrics"].items()}
    receipt = item["receipt"]
    return StepRecord(int(item["step"]), values, None if receipt is None else Path(str(receipt)))


def _prompt_id(completion: Completion, result: Graded) -> str:
    """The prompt's id, or (no id column) its reference digest: mode identity stays prompt-local."""
    if completion.prompt_id is not None:
        return str(completion.prompt_id)
    return "sha256:" + result.reference_sha256


def _verified_keys(attempts: list[dict[str, Any]]) -> list[str]:
    return [attempt["canonical_key"] for attempt in attempts if attempt["verified"]]


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None
