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
    completions that could not be scored (only under the ``mask`` policy); their prompts are
    left out of the other metrics, as a failed prompt is in a receipt.

Keys are ``modebench/<cell>/<metric>`` with ``<cell>`` like ``level1_countdown``, plus
``modebench/all/<metric>`` over every prompt of the step. With ``receipts_dir`` set, each flushed
step is also written as ``step-<N>.jsonl`` (the step's prompts and completions, ``modebench
evaluate`` input) and evaluated into the receipt ``step-<N>.json`` through ``evaluate``'s own
pipeline, reusing the verdicts already graded; ``modebench trajectory`` reads those receipts
(:meth:`RolloutRecorder.trajectory_runs`).
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from modebench import metrics
from modebench.metrics import DEFAULT_MIN_DEFINED_PROMPTS
from modebench.rl import _engine
from modebench.rl.bank import ModeBank
from modebench.rl.batch import BatchGrader, Completion, Graded

__all__ = ["METRIC_NAMES", "RolloutRecorder", "StepRecord"]

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

    ``bank`` (optional) is offered every recorded completion at :meth:`record`. ``grader`` is the
    pool used to publish receipts (the reward function's, so nothing is graded twice).
    """

    def __init__(
        self,
        *,
        bank: ModeBank | None = None,
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
        self._pending: dict[tuple[int, str, str], _Prompt] = {}
        self._seen: dict[tuple[int, str, str], set[str]] = {}
        self._lock = threading.Lock()
        self.steps: list[StepRecord] = []
        self.last: dict[str, float | None] = {}

    def record(
        self,
        completions: Sequence[Completion],
        graded: Sequence[Graded],
        prompts: Sequence[Any] | None = None,
    ) -> None:
        """Note a graded batch (the reward function calls this). ``prompts``, when given, is what
        the bank hands back on replay (the trainer's prompt of each row)."""
        with self._lock:
            for row, (completion, result) in enumerate(zip(completions, graded, strict=True)):
                pid = _prompt_id(completion, result)
                key = (result.level, result.domain, pid)
                entry = self._pending.get(key)
                if entry is None:
                    answer = completion.answer
                    if isinstance(answer, str):
                        answer = json.loads(answer)
                    reference = result.reference
                    entry = self._pending[key] = _Prompt(
                        result.level, result.domain, answer, reference, result.reference_sha256, [], []
                    )
                elif entry.reference_sha256 != result.reference_sha256:
                    raise ValueError(f"row {row}: prompt {pid!r} was recorded with another reference")
                entry.texts.append(completion.response)
                entry.attempts.append(dict(result.attempt))
                if self.bank is not None:
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
                    )

    def flush(self, step: int, *, publish: bool = True) -> StepRecord | None:
        """Metrics (and receipt, unless ``publish`` is False) of everything recorded since the
        last flush, labelled ``step``; None when nothing was recorded (a step that reused earlier
        generations)."""
        with self._lock:
            pending, self._pending = self._pending, {}
        if not pending:
            return None
        values = self._metrics(pending)
        receipt = self._publish(step, pending) if publish and self.receipts_dir is not None else None
        record = StepRecord(step, values, receipt)
        self.steps.append(record)
        self.last = values
        return record

    def trajectory_runs(self) -> list[str]:
        """``STEP=PATH`` arguments of ``modebench trajectory`` for the receipts written so far."""
        return [f"{record.step}={record.receipt}" for record in self.steps if record.receipt is not None]

    # -- metrics -----------------------------------------------------------------------------
    def _metrics(self, pending: dict[tuple[int, str, str], _Prompt]) -> dict[str, float | None]:
        cells: dict[str, list[tuple[tuple[int, str, str], _Prompt]]] = {}
        for key, entry in pending.items():
            cells.setdefault(f"level{entry.level}_{entry.domain}", []).append((key, entry))
        out: dict[str, float | None] = {}
        everything = [item for items in cells.values() for item in items]
        new_by_prompt = {key: self._new_modes(key, entry) for key, entry in everything}
        for key, entry in everything:  # after counting: "new" means before this step
            self._seen.setdefault(key, set()).update(_verified_keys(entry.attempts))
        for name, items in [*sorted(cells.items()), ("all", everything)]:
            for metric, value in self._cell(items, new_by_prompt).items():
                out[f"modebench/{name}/{metric}"] = value
        return out

    def _new_modes(self, key: tuple[int, str, str], entry: _Prompt) -> int:
        seen = self._seen.get(key, set())
        return len(set(_verified_keys(entry.attempts)) - seen)

    def _cell(
        self, items: list[tuple[tuple[int, str, str], _Prompt]], new: dict[tuple[int, str, str], int]
    ) -> dict[str, float | None]:
        scorable = [
            (key, entry)
            for key, entry in items
            if not any(attempt["status"] in _engine.UNSCORABLE for attempt in entry.attempts)
        ]
        unscorable = sum(
            1 for _, entry in items for attempt in entry.attempts if attempt["status"] in _engine.UNSCORABLE
        )
        per_prompt = [metrics.prompt_metrics(entry.attempts) for _, entry in scorable]
        pcmd_values = [
            value
            for _, entry in scorable
            if (value := metrics.mode_diversity(metrics.verified_mode_counts(entry.attempts))) is not None
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
    def _publish(self, step: int, pending: dict[tuple[int, str, str], _Prompt]) -> Path:
        assert self.receipts_dir is not None and self.grader is not None
        self.receipts_dir.mkdir(parents=True, exist_ok=True)
        records = self.receipts_dir / f"step-{step:08d}.jsonl"
        receipt = self.receipts_dir / f"step-{step:08d}.json"
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
            records, receipt, self.grader.pool, graded, min_defined_prompts=self.min_defined_prompts
        )
        return receipt


def _prompt_id(completion: Completion, result: Graded) -> str:
    """The prompt's id, or (no id column) its reference digest: mode identity stays prompt-local."""
    if completion.prompt_id is not None:
        return str(completion.prompt_id)
    return "sha256:" + result.reference_sha256


def _verified_keys(attempts: list[dict[str, Any]]) -> list[str]:
    return [attempt["canonical_key"] for attempt in attempts if attempt["verified"]]


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None
