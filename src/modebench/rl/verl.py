"""modebench's reward functions for verl, loaded through ``custom_reward_function.path/name``.

:func:`compute_score` is called once per response by verl's ``NaiveRewardManager``;
:func:`compute_score_batch` by ``BatchRewardManager`` (``reward_model.reward_manager=batch``),
with ``data_sources, solution_strs, ground_truths, extra_infos``
(``verl/workers/reward_manager/{naive,batch}.py``). Both grade on a module-level
:class:`~modebench.rl.batch.BatchGrader` (verl imports the function from a file and calls it as a
plain function, so the pool cannot be passed in).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any, Final

from modebench.rl.batch import BatchGrader, Completion, Graded, RewardInputError
from modebench.rl.rewards import reward_of

__all__ = ["DATA_SOURCE_PREFIX", "compute_score", "compute_score_batch"]

#: ``data_source`` of the verl rows :func:`modebench.rl.dataset.verl_rows` writes: ``modebench/level1_countdown``.
DATA_SOURCE_PREFIX: Final = "modebench/"

_shared: dict[int, BatchGrader] = {}
_shared_lock = threading.Lock()


def _verl_grader(workers: int) -> BatchGrader:
    # verl imports the reward function from a file path and calls it as a plain function, so the
    # pool lives at module level: started on the first call, reused, closed at interpreter exit.
    with _shared_lock:
        grader = _shared.get(workers)
        if grader is None:
            grader = _shared[workers] = BatchGrader(workers, unscorable="raise")
        return grader


def _verl_completion(data_source: Any, ground_truth: Any, extra_info: Any, text: Any, row: int) -> Completion:
    info = extra_info if isinstance(extra_info, Mapping) else {}
    level, domain = info.get("level"), info.get("domain")
    if (
        (level is None or domain is None)
        and isinstance(data_source, str)
        and data_source.startswith(DATA_SOURCE_PREFIX)
    ):
        cell = data_source[len(DATA_SOURCE_PREFIX) :]
        head, _, tail = cell.partition("_")
        level = head if level is None else level
        domain = tail if domain is None else domain
    if level is None or domain is None:
        raise RewardInputError(
            row,
            None,
            "level and domain are needed: extra_info['level'/'domain'] or data_source 'modebench/level<L>_<domain>'",
        )
    pid = info.get("prompt_id")
    if not isinstance(text, str):
        raise RewardInputError(row, None, "solution_str must be a string")
    return Completion(
        level=level,
        domain=domain,
        answer=ground_truth,
        response=text,
        prompt_id=None if pid is None else str(pid),
    )


def _score(graded: Graded) -> dict[str, Any]:
    reward = reward_of(graded)
    assert reward is not None  # verl's grader raises on unscorable completions
    # verl keeps every key of this dict as a per-sample column of reward_extra_info.
    return {
        "score": reward,
        "acc": graded.verified,
        "status": graded.status,
        "mode_key": graded.canonical_key or "",
    }


def compute_score(
    data_source: Any,
    solution_str: str,
    ground_truth: Any,
    extra_info: Mapping[str, Any] | None = None,
    *,
    workers: int = 1,
    **kwargs: Any,
) -> dict[str, Any]:
    """verl's per-response reward function (``custom_reward_function.name=compute_score``).

    ``ground_truth`` is the task's ``answer`` (JSON text or mapping); level and domain come from
    ``extra_info`` (or a ``modebench/level<L>_<domain>`` data source). Returns ``score`` (1.0 or
    0.0), ``acc``, ``status`` and ``mode_key``; ``workers`` may be set through
    ``custom_reward_function.reward_kwargs``.
    """
    completion = _verl_completion(data_source, ground_truth, extra_info, solution_str, 0)
    return _score(_verl_grader(workers).grade([completion])[0])


def compute_score_batch(
    data_sources: Sequence[Any],
    solution_strs: Sequence[str],
    ground_truths: Sequence[Any],
    extra_infos: Sequence[Mapping[str, Any] | None] | None = None,
    *,
    workers: int = 1,
    **kwargs: Any,
) -> list[dict[str, Any]]:
    """verl's batched reward function (``reward_model.reward_manager=batch``): one call, one
    pool round trip per batch, identical pairs graded once; one :func:`compute_score` result
    per response."""
    infos = list(extra_infos) if extra_infos is not None else [None] * len(solution_strs)
    if not len(data_sources) == len(solution_strs) == len(ground_truths) == len(infos):
        raise ValueError("data_sources, solution_strs, ground_truths and extra_infos differ in length")
    batch = [
        _verl_completion(source, truth, info, text, row)
        for row, (source, text, truth, info) in enumerate(
            zip(data_sources, solution_strs, ground_truths, infos)
        )
    ]
    return [_score(result) for result in _verl_grader(workers).grade(batch)]
