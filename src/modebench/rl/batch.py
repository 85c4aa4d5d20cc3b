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


def _graded(  # noqa: PLR0913 - one Graded's fields, as the dataclass lists them
    row: int,
    prompt_id: str | None,
    level: int,
    domain: str,
    status: str,
    verified: bool,
    canonical_key: str | None,
    detail: str | None,
    attempt: dict[str, Any],
    reference_sha256: str,
    reference: dict[str, Any],
) -> Graded:
    """``Graded(...)`` with these fields, built without the frozen dataclass's ``__init__``.

    That ``__init__`` sets each field through ``object.__setattr__``, a few microseconds per row,
    which a 2,048-row batch pays on every step; the instance made here is the same (every field
    set, nothing else: ``tests/rl/test_batch.py`` compares the two).
    """
    graded = object.__new__(Graded)
    graded.__dict__.update(
        row=row,
        prompt_id=prompt_id,
        level=level,
        domain=domain,
        status=status,
        verified=verified,
        canonical_key=canonical_key,
        detail=detail,
        attempt=attempt,
        reference_sha256=reference_sha256,
        reference=reference,
    )
    return graded


class _Group:
    """One distinct reference of a batch: its validated form and its distinct texts."""

    __slots__ = ("index", "key", "reference", "sha256", "encoded", "texts", "rows")

    def __init__(
        self, index: int, key: tuple[int, str, str], reference: dict[str, Any], sha256: str, encoded: Any
    ) -> None:
        self.index = index  # position among the batch's prepared prompts
        self.key = key
        self.reference = reference
        self.sha256 = sha256
        self.encoded = encoded  # the reference as sent, its wire encoding made once (_engine.sendable)
        self.texts: dict[str, int] = {}  # distinct text -> position in this prompt's responses
        self.rows: list[tuple[int, int]] = []  # (batch row, position of its text)


#: ``_name``'s marker for an answer named by the object itself rather than by its JSON text.
_BY_OBJECT = object()


def _name(completion: Completion) -> tuple[Any, ...] | None:
    """How a row names its reference within one batch, or None when that name would not be a
    cheap dictionary key (a level or domain of another type: the row is then looked up alone).

    An answer given as JSON text is named by that text; any other answer by the object itself
    (its ``id``, valid while the batch holds the object: ``BatchGrader.grade`` keeps the named
    objects alive for the call), since rows that repeat a prompt share its answer object.
    """
    level, domain, answer = completion.level, completion.domain, completion.answer
    if type(domain) is not str or type(level) not in (int, str):
        return None
    if type(answer) is str:
        return (level, domain, answer)
    return (level, domain, _BY_OBJECT, id(answer))


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
        # Key -> (decoded reference, its digest, the reference ready to send: _engine.sendable).
        self._references: OrderedDict[tuple[int, str, str], tuple[dict[str, Any], str, Any]] = OrderedDict()
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
            # Per distinct reference of the batch (in first-seen order): its distinct texts in
            # first-seen order -> position, and its rows with their text's position.
            groups: dict[tuple[int, str, str], _Group] = {}
            # How a row names its reference (level, domain and the answer's text, or the answer
            # object itself) -> its group: one dict lookup for each of the many rows that repeat
            # a prompt, so a reference is looked up and its key built once per batch.
            named: dict[tuple[Any, ...], _Group] = {}
            held: list[Any] = []  # the named answer objects, so no id in ``named`` is reused
            for row, completion in enumerate(completions):
                response = completion.response
                if not isinstance(response, str):
                    raise RewardInputError(row, completion.prompt_id, "completion must be a string")
                name = _name(completion)
                group = named.get(name) if name is not None else None
                if group is None:
                    key = self._reference(pool, row, completion)
                    group = groups.get(key)
                    if group is None:
                        group = groups[key] = _Group(len(groups), key, *self._references[key])
                    if name is not None:
                        named[name] = group
                        held.append(completion.answer)
                texts = group.texts
                position = texts.get(response)
                if position is None:
                    position = texts[response] = len(texts)
                group.rows.append((row, position))
            items = [
                _engine.prepared(group.key[0], group.key[1], group.encoded, list(group.texts))
                for group in groups.values()
            ]
            # Rows are built prompt by prompt as the pool hands each one back, while it grades
            # the next ones; every row lands at its own index.
            ordered = list(groups.values())
            out: list[Graded] = [None] * len(completions)  # type: ignore[list-item]  # all filled below
            first_unscorable = len(completions)
            filled = 0
            for index, attempts in _engine.grade_prepared(pool, items):
                group = ordered[index]
                filled += len(group.rows)
                level, domain = group.key[0], group.key[1]
                for row, position in group.rows:
                    attempt = dict(attempts[position])  # each row owns its result
                    status = attempt["status"]
                    if status in _engine.UNSCORABLE and row < first_unscorable:
                        first_unscorable = row
                    out[row] = _graded(
                        row,
                        completions[row].prompt_id,
                        level,
                        domain,
                        status,
                        attempt["verified"],
                        attempt["canonical_key"],
                        attempt.get("detail"),
                        attempt,
                        group.sha256,
                        group.reference,
                    )
            if filled != len(completions):  # the pool answers every prompt; never return holes
                raise RuntimeError("the worker pool did not return every prompt of the batch")
            self.last_items = len(completions)
            self.last_distinct = sum(len(group.texts) for group in groups.values())
        if policy == "raise" and first_unscorable < len(out):
            raise UnscorableCompletion(out[first_unscorable], out)
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
        self._references[key] = (parsed, _engine.sha256_json(parsed), _engine.sendable(parsed))
        while len(self._references) > REFERENCE_CACHE:
            self._references.popitem(last=False)
        return key
