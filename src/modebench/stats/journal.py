"""One pass over a receipt's journal: hash, decoding, the receipt check and the caller's reduction.

``read_report`` verifies a v4 receipt by hashing its journal, then decoding every line with the
strict decoder to recompute the receipt's cells; a consumer that then iterates the results decodes
every line again. For the statistics, the report and the trajectory that is three passes over a
journal of hundreds of MB. Here the same checks run in one streaming pass:

* the journal is hashed block by block while its lines are decoded, and nothing is published
  before the hash matched: the caller gets its own reductions only once the whole pass succeeded,
  and any failure is reported exactly as ``read_report`` would report it (a hash mismatch first,
  then the first decoding or recomputation error, then the identity check);
* each line is decoded by the C decoder without per-object hooks and checked to be what the strict
  decoder would have returned: no NaN or infinity (hooks that only run on such numbers), and no
  duplicate key (the decoded objects hold as many keys as the canonical line has key separators).
  A line where that proof does not apply — escaped quotes, whitespace before a colon, an odd
  number — goes through the strict decoder, so its value or error is the strict one;
* the receipt's cells are recomputed with exact sums grouped by value (integer counts of each
  per-prompt float; the same rational totals as :class:`modebench.metrics.CellAccumulator`, which
  takes over for any entry outside the common shape, so its errors are its own);
* the caller's ``reduce`` sees every entry with its verified mode counts, so no line is ever
  decoded twice and nothing per line is kept.

See ``docs/statistics.md`` (reading receipts).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar

from modebench.diagnostics import STATUSES, UNSCORABLE, VerifierExecutionError
from modebench.metrics import CellAccumulator, mode_diversity
from modebench.reporting import (
    MAX_RESULT_LINE_BYTES,
    V3,
    check_identity,
    check_recomputed,
    incomplete_entry,
    journal_path,
    open_regular,
    read_report,
    recompute_policy,
    recompute_threshold,
    sequenced,
)
from modebench.validation import InputError, loads

__all__ = ["Entry", "Receipt", "ResultError", "decode_line", "fast_modes", "lockstep", "open_receipt"]

T = TypeVar("T")
_BLOCK = 1 << 20
_WRONG = frozenset(STATUSES) - UNSCORABLE - {"correct"}  # scorable statuses of unverified attempts


@dataclass(frozen=True)
class Entry:
    """One prompt of the journal (or of a v3 receipt's cells)."""

    level: int
    domain: str
    draws: int  # ``k`` as the journal records it
    result: dict[str, Any]
    modes: dict[str, int] | None  # verified draws per canonical key; None when unusual (see fast_modes)


def fast_modes(result: Any) -> dict[str, int] | None:
    """Verified mode counts over all groups of a well-formed result, or None for anything unusual.

    The journal's common case, checked with plain dict operations; callers hand anything else to
    :func:`modebench.metrics.verified_mode_counts`, whose errors are the contract's.
    """
    if type(result) is not dict:
        return None
    draws = result.get("draws")
    if type(draws) is not list or not draws:
        return None
    modes: dict[str, int] = {}
    for group in draws:
        attempts = group.get("attempts") if type(group) is dict else None
        if type(attempts) is not list:
            return None
        for attempt in attempts:
            if type(attempt) is not dict:
                return None
            status = attempt.get("status")
            if status == "correct" and attempt.get("verified") is True:
                key = attempt.get("canonical_key")
                if type(key) is not str or not key:
                    return None
                modes[key] = modes.get(key, 0) + 1
            elif status not in _WRONG or attempt.get("verified") is not False:
                return None
    return modes


# --- decoding ---------------------------------------------------------------------------------


class ResultError(InputError):
    """An error of the caller's reduction of one result, raised after all of the receipt's checks."""


class _Unusual(Exception):
    """A line the fast decoder cannot vouch for; the strict decoder takes it."""


def _float(text: str) -> float:
    value = float(text)
    if value - value != 0:  # inf - inf is NaN: 1e999 overflowed
        raise _Unusual
    return value


def _constant(text: str) -> Any:
    raise _Unusual


def _keys(value: Any) -> int:
    """The number of keys in all objects of a decoded value."""
    kind = type(value)
    if kind is dict:
        count = len(value)
        for item in value.values():
            if type(item) is dict or type(item) is list:
                count += _keys(item)
        return count
    if kind is list:
        count = 0
        for item in value:
            if type(item) is dict or type(item) is list:
                count += _keys(item)
        return count
    return 0


_DECODER = json.JSONDecoder(parse_float=_float, parse_constant=_constant)


def decode_line(line: bytes) -> Any:
    """The strict decoder's value of one journal line, or its error (see the module docstring)."""
    # With no escaped quote and no whitespace after a quote (a canonical line has none outside
    # strings), every ``":`` in the line ends a key: their count is the number of keys.
    if not (b'\\"' in line or b'" ' in line or b'"\t' in line or b'"\r' in line or b'"\n' in line):
        try:
            value = _DECODER.decode(line.decode("utf-8"))
        except (_Unusual, ValueError, RecursionError):
            pass
        else:
            if _keys(value) == line.count(b'":'):
                return value
    return loads(line)


# --- the journal stream -----------------------------------------------------------------------


class _Journal:
    """Lines of a journal file, hashed block by block as they are read."""

    def __init__(self, path: Path) -> None:
        self.handle = open_regular(path)
        self.digest = hashlib.sha256()

    def close(self) -> None:
        self.handle.close()

    def _blocks(self) -> Iterator[bytes]:
        while block := self.handle.read(_BLOCK):
            self.digest.update(block)
            yield block

    def lines(self) -> Iterator[bytes]:
        pending = b""
        for block in self._blocks():
            parts = (pending + block).split(b"\n")
            pending = parts.pop()
            for part in parts:
                if len(part) >= MAX_RESULT_LINE_BYTES:
                    raise InputError("detailed-result line exceeds byte limit")
                yield part + b"\n"
            if len(pending) > MAX_RESULT_LINE_BYTES:
                raise InputError("detailed-result line exceeds byte limit")
        if pending:
            yield pending

    def finish(self) -> str:
        """Hash whatever was not read yet; the journal's SHA-256."""
        for _ in self._blocks():
            pass
        return self.digest.hexdigest()


def _entries(journal: _Journal, expected: int) -> Iterator[dict[str, Any]]:
    return sequenced((decode_line(line) for line in journal.lines()), expected)


# --- recomputing the receipt's cells --------------------------------------------------------


@lru_cache(maxsize=4096)
def _pcmd(counts: tuple[int, ...]) -> float | None:
    return mode_diversity(counts)


class _Cell:
    """A cell's sums grouped by value, handed to a CellAccumulator (exactly its totals)."""

    def __init__(self) -> None:
        self.accumulator = CellAccumulator()
        self.fast = True  # once an entry needs the accumulator, the rest follow in order
        self.prompts = self.distinct = self.defined = 0
        self.accuracy: Counter[Any] = Counter()
        self.passed: Counter[Any] = Counter()
        self.pcmd: Counter[float] = Counter()

    def add(self, result: dict[str, Any], modes: dict[str, int] | None) -> None:
        if self.fast and modes is not None:
            accuracy, passed, distinct = (
                result.get("accuracy"),
                result.get("pass_at_k"),
                result.get("distinct_at_k"),
            )
            if (
                (type(accuracy) is float or type(accuracy) is int)
                and (type(passed) is float or type(passed) is int)
                and type(distinct) is int
                and accuracy - accuracy == 0
                and passed - passed == 0
            ):
                self.prompts += 1
                self.accuracy[accuracy] += 1
                self.passed[passed] += 1
                self.distinct += distinct
                value = _pcmd(tuple(sorted(modes.values())))
                if value is not None:
                    self.defined += 1
                    self.pcmd[value] += 1
                return
        self.flush()
        self.fast = False
        if result["accuracy"] is not None:
            self.accumulator.add(result)
        else:
            self.accumulator.prompts += 1

    def flush(self) -> CellAccumulator:
        into = self.accumulator
        if self.prompts:
            into.add_counted(self.prompts, self.accuracy, self.passed, self.distinct, self.defined, self.pcmd)
            self.prompts = self.distinct = self.defined = 0
            self.accuracy, self.passed, self.pcmd = Counter(), Counter(), Counter()
        return into


# --- the receipt --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Receipt:
    """A receipt whose header passed ``read_report``'s checks; ``reduce`` walks its results once."""

    path: str
    payload: dict[str, Any]

    @property
    def completed(self) -> bool:
        return bool(self.payload["evaluation"]["status"] == "completed")

    def entries(self, reduce: Callable[[Entry], T]) -> Iterator[T]:
        """``reduce(entry)`` for every prompt, in journal order, from one verified pass.

        Values are yielded while the journal streams, before its hash is known, so a caller keeps
        only reductions and uses them once the iterator is exhausted: every check ``read_report``
        makes is raised at the end (or where the stream stops), in ``read_report``'s order. An
        ``InputError`` of ``reduce`` itself is raised (as :class:`ResultError`) after all of them,
        as when the receipt was verified before anything read its results.
        """
        if self.payload["schema"] == V3:
            for cell in self.payload["cells"]:
                for result in cell.get("prompt_results", []):
                    yield reduce(Entry(cell["level"], cell["domain"], cell["k"], result, fast_modes(result)))
            return
        yield from self._journal(reduce)

    def _journal(self, reduce: Callable[[Entry], T]) -> Iterator[T]:
        reference = self.payload["prompt_results"]
        journal = _Journal(journal_path(self.path, self.payload))
        failure: InputError | None = None
        deferred: InputError | None = None
        try:
            try:
                threshold = recompute_threshold(self.payload)
                tally = _status_tally(recompute_policy(self.payload))
                cells: dict[tuple[int, str, int], _Cell] = {}
                for raw in _entries(journal, reference["records"]):
                    try:
                        level, domain, k, result = raw["level"], raw["domain"], raw["k"], raw["result"]
                        tally.add(result)
                        modes = fast_modes(result)
                        cell = cells.get((level, domain, k))
                        if cell is None:
                            cell = cells[(level, domain, k)] = _Cell()
                        cell.add(result, modes)
                    except (
                        KeyError,
                        TypeError,
                        IndexError,
                        AttributeError,
                        ValueError,
                        VerifierExecutionError,
                    ) as exc:
                        raise incomplete_entry(exc) from None
                    if deferred is None:
                        try:
                            value = reduce(Entry(level, domain, k, result, modes))
                        except InputError as exc:
                            deferred = exc
                            continue
                        yield value
                accumulators = {key: cell.flush() for key, cell in cells.items()}
                check_recomputed(self.payload, tally, accumulators, threshold)
            except InputError as exc:
                failure = exc
            if journal.finish() != reference["sha256"]:
                raise InputError("detailed-result journal hash mismatch")
        finally:
            journal.close()
        if failure is not None:
            raise failure
        check_identity(self.payload)
        if deferred is not None:
            raise ResultError(str(deferred)) from None


def _status_tally(policy: str) -> Any:
    from modebench.evaluation import StatusTally

    return StatusTally(policy)


def open_receipt(path: str | os.PathLike[str]) -> Receipt:
    """Read and check a receipt's header (``read_report`` without the journal pass)."""
    return Receipt(os.fspath(path), read_report(path, verify_results=False))


def lockstep(
    first: Callable[[], Receipt],
    second: Callable[[], Receipt],
    reduce: Callable[[Entry], T],
    reduce_second: Callable[[Entry], T] | None = None,
) -> Iterator[tuple[T | None, T | None]]:
    """Two receipts' reductions side by side (``None`` once one side is done), each journal read once.

    Errors come in the order of checking the first receipt completely, then the second, then
    reading their results: a failure of the first receipt's checks is raised at once; anything
    else waits until the first journal was read to its end.
    """
    a = first()
    try:
        b: Receipt | None = second()
        late: InputError | None = None
    except InputError as exc:
        b, late = None, exc
    other = reduce_second if reduce_second is not None else reduce
    streams = [a.entries(reduce), b.entries(other) if b is not None else iter(())]
    done = [False, False]
    errors: list[tuple[int, InputError]] = [(1, late)] if late is not None else []
    while not all(done):
        pair: list[T | None] = [None, None]
        for side in (0, 1):
            if done[side]:
                continue
            try:
                pair[side] = next(streams[side])
            except StopIteration:
                done[side] = True
            except ResultError as exc:
                done[side] = True
                errors.append((3 + side, exc))
            except InputError as exc:
                if side == 0:
                    raise
                done[side] = True
                errors.append((2, exc))
        if not errors and (pair[0] is not None or pair[1] is not None):
            yield pair[0], pair[1]
    if errors:
        raise min(errors, key=lambda item: item[0])[1]
