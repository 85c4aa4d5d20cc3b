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

import gc
import hashlib
import json
import os
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar

from modebench.diagnostics import STATUSES, UNSCORABLE, VerifierExecutionError
from modebench.metrics import CellAccumulator, mode_diversity
from modebench.receipt.reader import (
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
from modebench.receipt.records import JournalReference, Receipt
from modebench.receipt.schema import MAX_RESULT_LINE_BYTES
from modebench.receipt.tallies import StatusTally
from modebench.stats.fastlines import decode_fast, valid_profile
from modebench.validation import InputError, loads

__all__ = [
    "Entry",
    "entries",
    "acyclic",
    "ResultError",
    "Scan",
    "decode_light",
    "decode_line",
    "fast_modes",
    "open_receipt",
]

T = TypeVar("T")
_BLOCK = 1 << 20
_WRONG = STATUSES - UNSCORABLE - {"correct"}  # scorable statuses of unverified attempts


@dataclass(frozen=True)
class Entry:
    """One prompt of the journal (or of a v3 receipt's cells)."""

    level: int
    domain: str
    draws: int  # ``k`` as the journal records it
    result: dict[str, Any]
    modes: dict[str, int] | None  # verified draws per canonical key; None when unusual (see fast_modes)
    index: int = 0  # the prompt's place in the receipt (a journal line's sequence number)


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
_UNPROVEN = object()
_WHITESPACE = b" \t\r\n"


def _proven(line: bytes) -> Any:
    """The C decoder's value of the line when it provably equals the strict one, else ``_UNPROVEN``."""
    # With no escaped quote, every ``"`` delimits a string, so a ``":`` ends a key; a key followed
    # by whitespace before its colon shows up once whitespace is deleted (then the count is off).
    if b'\\"' in line:
        return _UNPROVEN
    separators = line.count(b'":')
    if line.translate(None, _WHITESPACE).count(b'":') != separators:
        return _UNPROVEN
    try:
        value = _DECODER.decode(line.decode("utf-8"))
    except (_Unusual, ValueError, RecursionError):
        return _UNPROVEN
    return value if _keys(value) == separators else _UNPROVEN


def decode_line(line: bytes) -> Any:
    """The strict decoder's value of one journal line, or its error (see the module docstring)."""
    value = _proven(line)
    return loads(line) if value is _UNPROVEN else value


# Every prompt of a cell carries the same prompt profile, the largest object of a line, which the
# statistics never read. A light reading decodes each distinct profile text once (strictly) and
# the line with ``null`` in its place: ``,"`` opens a string there, so ``"prompt_profile":`` is a
# key and the text up to ``,"prompt_sha256":`` its whole value whenever either line is valid JSON.
_BLOCK_START, _BLOCK_END = b',"prompt_profile":', b',"prompt_sha256":'


def _reduced(line: bytes) -> bytes | None:
    """The line with a strictly valid prompt profile replaced by ``null`` (None: nothing to replace)."""
    start = line.find(_BLOCK_START)
    if start < 0:
        return None
    start += len(_BLOCK_START)
    end = line.find(_BLOCK_END, start)
    if end < 0:
        return None
    return line[:start] + b"null" + line[end:] if valid_profile(line[start:end]) else None


def decode_light(line: bytes) -> Any:
    """:func:`decode_line` without the prompt profile (``null``) when that can be proved; else its value."""
    value = decode_fast(line)  # with ``msgspec`` (the ``stats`` extra), for lines of the journal's own shape
    if value is not None:
        return value
    reduced = _reduced(line)
    if reduced is not None:
        value = _proven(reduced)
        if value is not _UNPROVEN:
            return value
    return decode_line(line)  # errors name positions in the line as it is


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


def entries(receipt: Receipt, reduce: Callable[[Entry], T], *, light: bool = False) -> Iterator[T]:
    """``reduce(entry)`` for every prompt of ``receipt``, in journal order, from one verified pass.

    Values are yielded while the journal streams, before its hash is known, so a caller keeps
    only reductions and uses them once the iterator is exhausted: every check ``read_report``
    makes is raised at the end (or where the stream stops), in ``read_report``'s order. An
    ``InputError`` of ``reduce`` itself is raised (as :class:`ResultError`) after all of them,
    as when the receipt was verified before anything read its results.

    ``light``: ``reduce`` reads no ``prompt_profile`` of a result (it may be None), so each
    distinct profile is decoded once (:func:`decode_light`); every check is unchanged.
    """
    if receipt.is_v3:  # the results are inside the cells
        index = 0
        for cell in receipt.cells:
            for result in cell.get("prompt_results", []):
                yield reduce(
                    Entry(cell["level"], cell["domain"], cell["k"], result, fast_modes(result), index)
                )
                index += 1
        return
    reference = receipt.prompt_results
    if reference is None:  # a v4 receipt the reader accepted always names its journal
        raise InputError("invalid detailed-result reference")
    with acyclic():
        yield from _journal_pass(receipt, reference, reduce, light)


def _journal_pass(
    receipt: Receipt, reference: JournalReference, reduce: Callable[[Entry], T], light: bool
) -> Iterator[T]:
    payload = receipt.payload
    journal = _Journal(journal_path(receipt.path, payload))
    failure: InputError | None = None
    scan: Scan | None = None
    try:
        try:
            threshold = recompute_threshold(payload)
            scan = Scan(recompute_policy(payload))
            yield from scan.run(journal.lines(), 0, reduce, light, expected=reference["records"])
            check_recomputed(payload, scan.tally, scan.accumulators(), threshold)
        except InputError as exc:
            failure = exc
        if journal.finish() != reference["sha256"]:
            raise InputError("detailed-result journal hash mismatch")
    finally:
        journal.close()
    if failure is not None:
        raise failure
    check_identity(payload)
    if scan is not None and scan.deferred is not None:
        raise ResultError(str(scan.deferred)) from None


class Scan:
    """The checks and reductions of a run of journal lines: the whole journal, or one chunk of it.

    ``run`` raises the first failure where the sequential pass meets it; ``tally`` and the cells
    hold what the lines read so far contribute to the receipt's recomputation, and ``deferred``
    the first error of ``reduce`` (after which ``reduce`` is not called again).
    """

    def __init__(self, policy: str) -> None:
        self.tally = _status_tally(policy)
        self.cells: dict[tuple[int, str, int], _Cell] = {}
        self.deferred: InputError | None = None
        self.count = 0

    def run(
        self,
        lines: Iterable[bytes],
        start: int,
        reduce: Callable[[Entry], T],
        light: bool,
        *,
        expected: int | None = None,
    ) -> Iterator[T]:
        """Reductions of ``lines``, numbered from ``start``; with ``expected``, the whole journal."""
        tally, cells = self.tally, self.cells
        for raw in sequenced(map(decode_light if light else decode_line, lines), expected, start):
            self.count += 1
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
            if self.deferred is None:
                try:
                    value = reduce(Entry(level, domain, k, result, modes, start + self.count - 1))
                except InputError as exc:
                    self.deferred = exc
                    continue
                yield value

    def accumulators(self) -> dict[tuple[int, str, int], CellAccumulator]:
        return {key: cell.flush() for key, cell in self.cells.items()}


@contextmanager
def acyclic() -> Iterator[None]:
    """The cyclic garbage collector paused for a journal pass (restored after, however it ends).

    Decoded lines hold no reference cycles, so reference counting frees each as soon as it is
    reduced; the collector would still walk the young objects every few lines, about a fifth of
    the pass over a large journal (docs/statistics.md).
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _status_tally(policy: str) -> Any:
    return StatusTally(policy)


def open_receipt(path: str | os.PathLike[str]) -> Receipt:
    """Read and check a receipt's header (``read_report`` without the journal pass)."""
    return read_report(path, verify_results=False)
