"""Grading a whole rollout batch at once, on a persistent pool of isolated workers.

A trainer grades thousands of completions per step. :class:`BatchGrader` owns one bounded worker
pool for its lifetime (started on first use, reused by every step, closed by :meth:`close`, the
``with`` block or interpreter exit) and grades a batch in few worker round trips: completions are
grouped by reference, identical ``(reference, response)`` pairs are graded once, and each
reference is validated once and remembered (a bounded cache). Verdicts are exactly those of
``modebench evaluate`` and ``modebench.api.grade``: the same worker, deadlines and caps.

An unscorable completion (timeout, resource limit, worker failure) is an evaluator failure, not a
wrong answer: its status is always kept, it is counted as ``unscorable`` in the metrics and never
admitted to a bank. What reward it gets is the policy's choice (``unscorable=``):

``"raise"`` (the default here)
    stop with :class:`UnscorableCompletion` naming the row.
``"mask"``
    reward ``None`` (what a trainer does with it depends on the trainer: docs/rl.md).
``"count-as-incorrect"``
    reward 0.0, as a wrong answer gets; the run goes on whatever the rollout. The verl and
    OpenRLHF functions use it by default (their trainers cannot take a ``None`` reward).
"""

from __future__ import annotations

import atexit
import json
import threading
import weakref
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from modebench.diagnostics import MAX_REFERENCE_BYTES
from modebench.rl import _engine
from modebench.validation import InputError

__all__ = [
    "BatchGrader",
    "Completion",
    "Graded",
    "RewardInputError",
    "SeenModes",
    "UNSCORABLE_POLICIES",
    "UnscorableCompletion",
    "UnscorablePolicy",
    "check_policy",
]

UnscorablePolicy = Literal["raise", "mask", "count-as-incorrect"]
UNSCORABLE_POLICIES: Final[tuple[str, ...]] = ("raise", "mask", "count-as-incorrect")
#: Distinct references whose validation is remembered (a training set's prompts, typically).
REFERENCE_CACHE: Final = 65_536


class RewardInputError(ValueError):
    """A row of the batch cannot be graded at all: bad level, domain or reference. Names the row."""

    def __init__(self, row: int, prompt_id: str | None, message: str) -> None:
        self.row = row
        self.prompt_id = prompt_id
        self.message = message
        where = f"row {row}" + ("" if prompt_id is None else f", prompt {prompt_id!r}")
        super().__init__(f"{where}: {message}")


class UnscorableCompletion(RuntimeError):
    """A completion could not be scored (an evaluator failure, never a model failure).

    Raised under the default ``unscorable="raise"`` policy, naming the batch row, its prompt,
    the status and the worker's detail; ``graded`` holds the whole batch's results so far.
    """

    def __init__(self, graded: Graded, batch: list[Graded]) -> None:
        self.row = graded.row
        self.prompt_id = graded.prompt_id
        self.status = graded.status
        self.detail = graded.detail
        self.graded = batch
        where = f"row {graded.row}" + ("" if graded.prompt_id is None else f", prompt {graded.prompt_id!r}")
        super().__init__(
            f"{where}: completion is unscorable ({graded.status}: {graded.detail}); "
            "it is not a wrong answer, so no reward is given for it "
            "(unscorable='count-as-incorrect' gives it reward 0.0 and counts it as unscorable; "
            "unscorable='mask' gives it reward None)"
        )


@dataclass(frozen=True)
class Completion:
    """One completion to grade: its prompt's level, domain and reference ``answer`` (a mapping or
    its JSON text, as stored in a dataset column) and the completion text."""

    level: Any
    domain: Any
    answer: Any
    response: str
    prompt_id: str | None = None


@dataclass(frozen=True)
class Graded:
    """The verdict of one completion, with the contract's fields of ``grade()``."""

    row: int
    prompt_id: str | None
    level: int
    domain: str
    status: str
    verified: bool
    canonical_key: str | None
    detail: str | None
    #: The worker's full result dict (what ``evaluate`` journals for this attempt).
    attempt: dict[str, Any] = field(repr=False, compare=False)
    #: Digest of the validated reference: the identity of "the same prompt" for the bank.
    reference_sha256: str = field(default="", compare=False)
    #: The validated reference (what ``evaluate`` grades against).
    reference: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def scorable(self) -> bool:
        return self.status not in _engine.UNSCORABLE


def check_policy(unscorable: Any) -> UnscorablePolicy:
    """``unscorable`` when it names a policy; ValueError listing the policies otherwise."""
    if unscorable not in UNSCORABLE_POLICIES:
        raise ValueError(f"unscorable must be one of {', '.join(UNSCORABLE_POLICIES)}, not {unscorable!r}")
    return unscorable  # type: ignore[no-any-return]


class SeenModes:
    """Verified mode keys seen per prompt in this process: what a per-response ``new_mode`` field
    is relative to (the trainers that call per response give no step boundary). Thread-safe."""

    def __init__(self) -> None:
        self._seen: dict[tuple[int, str, str], set[str]] = {}
        self._lock = threading.Lock()

    def new(self, results: Sequence[Graded]) -> list[bool]:
        """Per result, whether it is verified with a mode not seen verified for its prompt
        before (earlier results of the same call included); records them as seen."""
        out = []
        with self._lock:
            for result in results:
                new = False
                if result.verified and result.canonical_key:
                    pid = (
                        result.prompt_id
                        if result.prompt_id is not None
                        else "sha256:" + result.reference_sha256
                    )
                    seen = self._seen.setdefault((result.level, result.domain, pid), set())
                    new = result.canonical_key not in seen
                    seen.add(result.canonical_key)
                out.append(new)
        return out

    def clear(self) -> None:
        with self._lock:
            self._seen.clear()


_open: weakref.WeakSet[BatchGrader] = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    for grader in list(_open):
        grader.close()


class BatchGrader:
    """A persistent pool of ``workers`` isolated verifier workers for trainer batches.

    Thread-safe: one batch is graded at a time (the pool itself runs the workers in parallel).
    """

    def __init__(self, workers: int = 1, *, unscorable: UnscorablePolicy = "raise") -> None:
        self.workers = workers
        self.unscorable: UnscorablePolicy = check_policy(unscorable)
        self._pool: _engine.Pool | None = _engine.open_pool(workers)  # validates ``workers``
        self._references: OrderedDict[tuple[int, str, str], tuple[dict[str, Any], str]] = OrderedDict()
        # (level, domain, answer text) as a dataset column gives them -> the reference's key, so
        # that the thousands of rows of a batch that repeat one prompt cost a dict lookup each.
        self._aliases: OrderedDict[tuple[Any, Any, str], tuple[int, str, str]] = OrderedDict()
        self._lock = threading.Lock()
        #: Completions and distinct (reference, response) pairs sent in the last batch.
        self.last_items = 0
        self.last_distinct = 0
        _open.add(self)

    def __enter__(self) -> BatchGrader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop the workers; a closed grader refuses further batches."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.close()
        _open.discard(self)

    @property
    def pool(self) -> _engine.Pool:
        if self._pool is None:
            raise RuntimeError("this BatchGrader is closed")
        return self._pool

    def prestart(self) -> None:
        """Spawn every worker now, so their warm-up overlaps the trainer's start-up."""
        self.pool.prestart()

    def grade(
        self, completions: Sequence[Completion], *, unscorable: UnscorablePolicy | None = None
    ) -> list[Graded]:
        """Grade a batch; results in input order. Raises :class:`RewardInputError` for a row with
        a bad level, domain or reference and, under ``unscorable="raise"`` (this call's
        ``unscorable`` or else the grader's), :class:`UnscorableCompletion` for the first
        unscorable row."""
        policy = self.unscorable if unscorable is None else check_policy(unscorable)
        with self._lock:
            pool = self.pool
            keys: list[tuple[int, str, str]] = []
            references: dict[tuple[int, str, str], tuple[dict[str, Any], str]] = {}
            # Per distinct reference, its distinct texts in first-seen order -> position.
            groups: dict[tuple[int, str, str], dict[str, int]] = {}
            for row, completion in enumerate(completions):
                if not isinstance(completion.response, str):
                    raise RewardInputError(row, completion.prompt_id, "completion must be a string")
                key = self._reference(pool, row, completion)
                references[key] = self._references[key]
                keys.append(key)
                texts = groups.setdefault(key, {})
                texts.setdefault(completion.response, len(texts))
            index = {key: position for position, key in enumerate(groups)}
            items = [
                _engine.prepared(*key[:2], references[key][0], list(texts)) for key, texts in groups.items()
            ]
            graded = _engine.grade_prepared(pool, items)
            self.last_items, self.last_distinct = (
                len(completions),
                sum(len(texts) for texts in groups.values()),
            )
            out: list[Graded] = []
            for row, (completion, key) in enumerate(zip(completions, keys)):
                attempt = dict(graded[index[key]][groups[key][completion.response]])
                out.append(
                    Graded(
                        row=row,
                        prompt_id=completion.prompt_id,
                        level=key[0],
                        domain=key[1],
                        status=attempt["status"],
                        verified=attempt["verified"],
                        canonical_key=attempt["canonical_key"],
                        detail=attempt.get("detail"),
                        attempt=attempt,
                        reference_sha256=references[key][1],
                        reference=references[key][0],
                    )
                )
        if policy == "raise":
            for result in out:
                if not result.scorable:
                    raise UnscorableCompletion(result, out)
        return out

    def _reference(self, pool: _engine.Pool, row: int, completion: Completion) -> tuple[int, str, str]:
        """The cache key of a row's validated reference, validating it (once) on the pool."""
        alias = None
        if (
            isinstance(completion.answer, str)
            and type(completion.level) in (int, str)
            and type(completion.domain) is str
        ):
            alias = (completion.level, completion.domain, completion.answer)
            found = self._aliases.get(alias)
            if found is not None and found in self._references:
                return found
        key = self._validated(pool, row, completion)
        if alias is not None:
            self._aliases[alias] = key
            while len(self._aliases) > REFERENCE_CACHE:
                self._aliases.popitem(last=False)
        return key

    def _validated(self, pool: _engine.Pool, row: int, completion: Completion) -> tuple[int, str, str]:
        try:
            level = _engine.normalize_level(completion.level)
            domain = str(_engine.canonical_domain(completion.domain))
        except ValueError as exc:
            raise RewardInputError(row, completion.prompt_id, str(exc)) from None
        answer = completion.answer
        if isinstance(answer, str):
            if len(answer) > MAX_REFERENCE_BYTES:
                raise RewardInputError(row, completion.prompt_id, "answer exceeds the reference size limit")
            try:
                answer = json.loads(answer)
            except ValueError as exc:
                raise RewardInputError(row, completion.prompt_id, f"answer is not JSON: {exc}") from None
        if not isinstance(answer, Mapping):
            raise RewardInputError(row, completion.prompt_id, "answer must be a JSON object or its text")
        try:
            text = _engine.canonical_json(dict(answer))
        except (TypeError, ValueError, RecursionError) as exc:
            raise RewardInputError(row, completion.prompt_id, f"answer is not finite JSON: {exc}") from None
        key = (level, domain, text)
        if key in self._references:
            self._references.move_to_end(key)
            return key
        try:
            parsed = pool.reference_check(level, domain, dict(answer))
        except InputError as exc:
            raise RewardInputError(row, completion.prompt_id, f"invalid reference: {exc}") from None
        except _engine.VerifierExecutionError as exc:
            raise RewardInputError(
                row, completion.prompt_id, f"reference could not be validated: {exc}"
            ) from None
        self._references[key] = (parsed, _engine.sha256_json(parsed))
        while len(self._references) > REFERENCE_CACHE:
            self._references.popitem(last=False)
        return key
