"""modebench's reward functions for verl, loaded through ``custom_reward_function.path/name``.

Three entry points, one per way verl calls a reward function (read from verl 0.9.1):

:func:`compute_score`
    once per response, synchronously: ``verl/workers/reward_manager/naive.py``
    (``NaiveRewardManager.__call__``) and the asynchronous reward loop's naive manager
    (``verl/experimental/reward_loop/reward_manager/naive.py``, ``run_single``), which runs it in
    its event loop's executor. Concurrent calls are coalesced into pool batches
    (:mod:`modebench.rl.coalesce`).
:func:`compute_score_async`
    the same as a coroutine: the reward loop awaits it on its event loop instead of using a
    thread per call (``get_custom_reward_fn`` wraps coroutine functions with
    ``_call_with_kwargs_async``; ``run_single`` checks ``inspect.iscoroutinefunction``), so a
    whole burst joins one batch.
:func:`compute_score_batch`
    once per batch: ``verl/workers/reward_manager/batch.py`` (``BatchRewardManager.verify``) with
    ``data_sources, solution_strs, ground_truths, extra_infos``.

A row is modebench's when its ``extra_info`` has ``level`` and ``domain`` or its data source is
``modebench/level<L>_<domain>``; any other row is handed to verl's own
``verl.utils.reward_score.default_compute_score`` (a mixed gsm8k + modebench batch works).

Every row gets the same keys (verl's reward loop builds its extra-info columns from the first
row's keys, ``RewardLoopManager.compute_rm_score``): ``score``, ``acc`` (floats), ``verified``,
``new_mode``, ``unscorable`` (0.0/1.0 floats, None on rows modebench did not grade), ``status``
and ``mode_key`` (strings). verl turns the numeric ones into metrics and leaves strings out
(``process_validation_metrics``).

Unscorable completions (a response over 131,072 characters, a verifier timeout) get the policy
``unscorable="count-as-incorrect"`` by default: score 0.0, ``unscorable`` 1.0, the status kept,
never an exception, so verl's reward loop never sees one. ``unscorable="raise"`` (through
``+custom_reward_function.reward_kwargs.unscorable=raise``) raises :class:`UnscorableCompletion`;
verl up to 0.8 calls the reward manager again outside its ``try`` after any exception
(``verl/trainer/ppo/reward.py``, ``compute_reward``): an identical call right after a failure
re-raises the recorded error, and the per-response rows graded before it are answered from a
memo of scorable verdicts, so a retry never grades anything again. ``"mask"`` is refused: verl
writes every score into a float tensor.
"""

from __future__ import annotations

import asyncio
import dataclasses
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any, Final

from modebench.rl.batch import (
    BatchGrader,
    Completion,
    Graded,
    RewardInputError,
    SeenModes,
    UnscorableCompletion,
    UnscorablePolicy,
    check_policy,
)
from modebench.rl.coalesce import Coalescer

__all__ = [
    "DATA_SOURCE_PREFIX",
    "SCORE_KEYS",
    "compute_score",
    "compute_score_async",
    "compute_score_batch",
    "reset",
]

#: ``data_source`` of the verl rows :func:`modebench.rl.dataset.verl_rows` writes: ``modebench/level1_countdown``.
DATA_SOURCE_PREFIX: Final = "modebench/"
#: The keys of every row's result, in order.
SCORE_KEYS: Final = ("score", "acc", "verified", "new_mode", "unscorable", "status", "mode_key")
#: Failed calls remembered, so that a retry of the same call re-raises instead of grading again.
FAILURES_KEPT: Final = 8
#: Characters of completion text the per-response verdict memo may hold (a retry of a whole
#: batch response by response finds the rows graded before the failure here).
MEMO_CHARS: Final = 32 * 1024 * 1024

_lock = threading.Lock()
_graders: dict[int, tuple[BatchGrader, Coalescer]] = {}
#: What ``new_mode`` is relative to: the verified modes this process has seen per prompt.
_seen = SeenModes()
_failures: OrderedDict[Hashable, BaseException] = OrderedDict()
_memo: OrderedDict[Hashable, Graded] = OrderedDict()
_memo_chars = 0


def _pool(workers: int) -> tuple[BatchGrader, Coalescer]:
    # verl imports the reward function from a file path and calls it as a plain function, so the
    # pool lives at module level: started on the first call, reused, closed at interpreter exit.
    with _lock:
        found = _graders.get(workers)
        if found is None:
            grader = BatchGrader(workers)
            found = _graders[workers] = (grader, Coalescer(grader))
        return found


def reset() -> None:
    """Close the module's pools and forget the seen modes and recorded failures (tests, or a new
    run in the same process)."""
    with _lock:
        pools = list(_graders.values())
        _graders.clear()
        _seen.clear()
        _failures.clear()
        _memo.clear()
    for grader, _ in pools:
        grader.close()


def _policy(unscorable: Any) -> UnscorablePolicy:
    policy = check_policy(unscorable)
    if policy == "mask":
        raise ValueError(
            "unscorable='mask' cannot be used with verl: verl writes every score into a float tensor "
            "(use 'count-as-incorrect', the default, or 'raise')"
        )
    return policy


def _identity(data_source: Any, extra_info: Any) -> tuple[Any, Any] | None:
    """(level, domain) of a modebench row, None for any other row."""
    info = extra_info if isinstance(extra_info, Mapping) else {}
    level, domain = info.get("level"), info.get("domain")
    if (
        (level is None or domain is None)
        and isinstance(data_source, str)
        and data_source.startswith(DATA_SOURCE_PREFIX)
    ):
        head, _, tail = data_source[len(DATA_SOURCE_PREFIX) :].partition("_")
        level = head if level is None else level
        domain = tail if domain is None else domain
    if level is None or domain is None:
        return None
    return level, domain


def _completion(
    identity: tuple[Any, Any], ground_truth: Any, extra_info: Any, text: Any, row: int
) -> Completion:
    info = extra_info if isinstance(extra_info, Mapping) else {}
    pid = info.get("prompt_id")
    if not isinstance(text, str):
        raise RewardInputError(row, None if pid is None else str(pid), "solution_str must be a string")
    return Completion(
        level=identity[0],
        domain=identity[1],
        answer=ground_truth,
        response=text,
        prompt_id=None if pid is None else str(pid),
    )


def _default(
    data_source: Any,
    solution_str: Any,
    ground_truth: Any,
    extra_info: Any,
    kwargs: Mapping[str, Any],
    row: int,
) -> dict[str, Any]:
    """A row that is not modebench's, scored by verl's ``default_compute_score`` (as verl itself
    scores it without a custom reward function), in modebench's result keys."""
    try:
        from verl.utils.reward_score import default_compute_score  # noqa: PLC0415 - verl is optional
    except ImportError:
        raise RewardInputError(
            row,
            None,
            f"data source {data_source!r} is not modebench's (no extra_info level/domain, no "
            f"'{DATA_SOURCE_PREFIX}level<L>_<domain>' data source) and verl, whose default_compute_score "
            "scores other data sources, is not installed",
        ) from None
    scorer: Callable[..., Any] = default_compute_score
    try:
        result = scorer(data_source, solution_str, ground_truth, extra_info, **kwargs)
    except NotImplementedError as exc:
        raise RewardInputError(
            row,
            None,
            f"data source {data_source!r} is not modebench's (no extra_info level/domain, no "
            f"'{DATA_SOURCE_PREFIX}level<L>_<domain>' data source) and verl's default_compute_score "
            f"has no scorer for it: {exc}",
        ) from None
    if isinstance(result, Mapping):
        score = float(result["score"])
        acc = float(result["acc"]) if isinstance(result.get("acc"), (int, float)) else score
    else:
        score = acc = float(result)
    # Only modebench's keys: verl needs the same keys on every row of a batch.
    return {
        "score": score,
        "acc": acc,
        "verified": None,
        "new_mode": None,
        "unscorable": None,
        "status": "",
        "mode_key": "",
    }


def _results(graded: Sequence[Graded], policy: UnscorablePolicy) -> list[dict[str, Any]]:
    """verl's result dicts of graded rows; raises under ``raise`` for the first unscorable row.
    ``new_mode``: a verified mode this process has not seen verified for the prompt before."""
    if policy == "raise":
        for result in graded:
            if not result.scorable:
                raise UnscorableCompletion(result, list(graded))
    out = []
    for result, new in zip(graded, _seen.new(graded)):
        reward = 1.0 if result.verified else 0.0  # an unscorable row counts as incorrect here
        out.append(
            {
                "score": reward,
                "acc": reward,
                "verified": float(result.verified),
                "new_mode": float(new),
                "unscorable": float(not result.scorable),
                "status": result.status,
                "mode_key": result.canonical_key or "",
            }
        )
    return out


def _remembered(signature: Hashable) -> None:
    """Re-raise the error of an identical call that failed just before (verl's retry)."""
    with _lock:
        error = _failures.get(signature)
    if error is not None:
        raise error


def _failed(signature: Hashable, error: BaseException) -> None:
    with _lock:
        _failures[signature] = error
        while len(_failures) > FAILURES_KEPT:
            _failures.popitem(last=False)


def _memoized(signature: Hashable) -> Graded | None:
    with _lock:
        found = _memo.get(signature)
        if found is not None:
            _memo.move_to_end(signature)
        return found


def _memorize(signature: Hashable, graded: Graded) -> Graded:
    """Keep a scorable verdict (a pure function of reference and text; an unscorable one may
    depend on the machine's load, so it is never kept), within :data:`MEMO_CHARS`."""
    global _memo_chars
    if graded.scorable:
        with _lock:
            if signature not in _memo:
                _memo[signature] = graded
                _memo_chars += _size(signature)
            while _memo_chars > MEMO_CHARS:
                old, _ = _memo.popitem(last=False)
                _memo_chars -= _size(old)
    return graded


def _size(signature: Hashable) -> int:
    return sum(len(part) for part in signature) if isinstance(signature, tuple) else 0


def _signature(data_source: Any, solution_str: Any, ground_truth: Any, extra_info: Any) -> Hashable:
    # What decides a row's result; verl's own extra_info fields (num_turns, rollout scores) do not.
    info = extra_info if isinstance(extra_info, Mapping) else {}
    return (
        repr(data_source),
        repr(solution_str),
        repr(ground_truth),
        repr(info.get("level")),
        repr(info.get("domain")),
        repr(info.get("prompt_id")),
    )


def _guarded(signature: Hashable, run: Callable[[], Any]) -> Any:
    _remembered(signature)
    try:
        return run()
    except (RewardInputError, UnscorableCompletion) as exc:
        _failed(signature, exc)
        raise


def compute_score(
    data_source: Any,
    solution_str: str,
    ground_truth: Any,
    extra_info: Mapping[str, Any] | None = None,
    *,
    workers: int = 1,
    unscorable: UnscorablePolicy = "count-as-incorrect",
    **kwargs: Any,
) -> dict[str, Any]:
    """verl's per-response reward function (``custom_reward_function.name=compute_score``).

    ``ground_truth`` is the task's ``answer`` (JSON text or mapping); level and domain come from
    ``extra_info`` (or a ``modebench/level<L>_<domain>`` data source); other rows go to verl's
    ``default_compute_score`` (``kwargs`` are passed on to it). ``workers`` and ``unscorable``
    may be set through ``custom_reward_function.reward_kwargs``. Returns the keys
    :data:`SCORE_KEYS`.
    """
    policy = _policy(unscorable)
    identity = _identity(data_source, extra_info)
    if identity is None:
        return _default(data_source, solution_str, ground_truth, extra_info, kwargs, 0)

    signature = _signature(data_source, solution_str, ground_truth, extra_info)

    def run() -> dict[str, Any]:
        graded = _memoized(signature)
        if graded is None:
            completion = _completion(identity, ground_truth, extra_info, solution_str, 0)
            graded = _memorize(signature, _pool(workers)[1].grade(completion))
        return _results([graded], policy)[0]

    result: dict[str, Any] = _guarded(signature, run)
    return result


async def compute_score_async(
    data_source: Any,
    solution_str: str,
    ground_truth: Any,
    extra_info: Mapping[str, Any] | None = None,
    *,
    workers: int = 1,
    unscorable: UnscorablePolicy = "count-as-incorrect",
    **kwargs: Any,
) -> dict[str, Any]:
    """:func:`compute_score` as a coroutine, for verl's asynchronous reward loop
    (``custom_reward_function.name=compute_score_async``): the calls a worker's event loop makes
    while a batch is graded join the next batch. Rows of other data sources are scored by
    ``default_compute_score`` in the loop's executor."""
    policy = _policy(unscorable)
    identity = _identity(data_source, extra_info)
    loop = asyncio.get_running_loop()
    if identity is None:
        return await loop.run_in_executor(
            None, lambda: _default(data_source, solution_str, ground_truth, extra_info, kwargs, 0)
        )
    signature = _signature(data_source, solution_str, ground_truth, extra_info)
    _remembered(signature)
    try:
        graded = _memoized(signature)
        if graded is None:
            completion = _completion(identity, ground_truth, extra_info, solution_str, 0)
            graded = _memorize(signature, await _pool(workers)[1].grade_async(completion))
        return _results([graded], policy)[0]
    except (RewardInputError, UnscorableCompletion) as exc:
        _failed(signature, exc)
        raise


def compute_score_batch(
    data_sources: Sequence[Any],
    solution_strs: Sequence[str],
    ground_truths: Sequence[Any],
    extra_infos: Sequence[Mapping[str, Any] | None] | None = None,
    *,
    workers: int = 1,
    unscorable: UnscorablePolicy = "count-as-incorrect",
    **kwargs: Any,
) -> list[dict[str, Any]]:
    """verl's batched reward function (``reward_model.reward_manager=batch``): the batch's
    modebench rows in one pool round trip (identical pairs graded once), the others through
    ``default_compute_score``; one :func:`compute_score` result per response, in order."""
    policy = _policy(unscorable)
    infos = list(extra_infos) if extra_infos is not None else [None] * len(solution_strs)
    if not len(data_sources) == len(solution_strs) == len(ground_truths) == len(infos):
        raise ValueError("data_sources, solution_strs, ground_truths and extra_infos differ in length")
    rows = list(zip(data_sources, solution_strs, ground_truths, infos))
    identities = [_identity(source, info) for source, _, _, info in rows]

    def run() -> list[dict[str, Any]]:
        mine = [row for row, identity in enumerate(identities) if identity is not None]
        batch = []
        for row in mine:
            identity = identities[row]
            assert identity is not None
            batch.append(_completion(identity, rows[row][2], rows[row][3], rows[row][1], row))
        try:
            graded = _pool(workers)[0].grade(batch, unscorable="mask") if batch else []
        except RewardInputError as exc:  # numbered within the modebench rows: name the batch's row
            raise RewardInputError(mine[exc.row], exc.prompt_id, exc.message) from None
        graded = [dataclasses.replace(result, row=row) for result, row in zip(graded, mine)]
        out: list[dict[str, Any] | None] = [None] * len(rows)
        for row, result in zip(mine, _results(graded, policy)):
            out[row] = result
        for row, identity in enumerate(identities):
            if identity is None:
                source, text, truth, info = rows[row]
                out[row] = _default(source, text, truth, info, kwargs, row)
        return [result for result in out if result is not None]

    signature = tuple(_signature(*row[:3], row[3]) for row in rows)
    results: list[dict[str, Any]] = _guarded(signature, run)
    return results
