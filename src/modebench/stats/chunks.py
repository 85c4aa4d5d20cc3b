"""A journal pass split over processes: chunks of lines checked and reduced in parallel.

Reading a large journal is decoding-bound (about 60 µs a line in one process, most of ``stats``
on a 100k-prompt receipt), and its lines are independent: each is checked against its own
sequence number, tallied and reduced on its own, and the receipt's recomputation only sums exact
per-cell totals. So the parent reads the file once, hashing it and cutting it into chunks of
whole lines (each with the sequence number of its first line); forked workers run the same
:class:`~modebench.stats.journal.Scan` as the sequential pass over each chunk and send back its
reductions and totals; the parent yields the reductions in journal order, merges the totals and
makes the receipt's checks.

Only a pass where everything is in order finishes in parallel. At the first sign of anything
else (a chunk that fails or whose ``reduce`` fails, a count, hash, recomputation or identity
check that does not pass) the sequential pass is replayed from the start, skipping the
reductions already yielded: errors, their order and every value are those of the sequential
pass by construction, and bad input costs one more read.

Parallel reading needs ``fork`` (workers inherit ``reduce``, which need not pickle, and start in
milliseconds), so Linux, and a process with no thread of its own besides our pools' (forking one
is unsafe); elsewhere, for small journals and on one core the pass stays sequential.
See ``docs/statistics.md``.
"""

from __future__ import annotations

import gc
import hashlib
import itertools
import multiprocessing
import os
import signal
import sys
import threading
from collections import deque
from collections.abc import Callable, Generator, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import closing, contextmanager
from typing import Any, TypeVar

from modebench.metrics import CellAccumulator
from modebench.receipt.reader import (
    check_identity,
    check_recomputed,
    journal_path,
    open_regular,
    recompute_policy,
    recompute_threshold,
)
from modebench.receipt.records import Receipt
from modebench.receipt.schema import MAX_RESULT_LINE_BYTES, V3
from modebench.stats.journal import Entry, Scan, acyclic
from modebench.stats.journal import entries as journal_entries
from modebench.validation import InputError

__all__ = [
    "CHUNK_BYTES",
    "Cursor",
    "MIN_BYTES",
    "Totals",
    "Merged",
    "chunks_of",
    "entries",
    "folded",
    "lines_of",
    "processes",
    "totals_of",
    "Workers",
    "outcome",
    "worker_pool",
    "worker_started",
]

T = TypeVar("T")
U = TypeVar("U")
#: Journals smaller than this are read in one process (forking costs more than it saves).
MIN_BYTES = 32 << 20
#: Bytes of whole lines per chunk: enough to amortise a task, few enough to keep memory small.
CHUNK_BYTES = 4 << 20
_MAX_PROCESSES = 8
_BLOCK = 1 << 20

Totals = tuple[int, dict[str, int], dict[str, int], dict[tuple[int, str, int], CellAccumulator]]
_job: tuple[str, str, Callable[[Entry], Any], Any, bool] | None = None  # set in each worker


def processes() -> int:
    """Worker processes for a parallel pass (1: read sequentially)."""
    if not sys.platform.startswith("linux"):  # fork is unsafe on macOS and absent on Windows
        return 1
    if threading.active_count() > 1:
        return 1  # another thread could hold a lock at the fork
    return max(1, min(len(os.sched_getaffinity(0)), _MAX_PROCESSES))


def entries(receipt: Receipt, reduce: Callable[[Entry], T], light: bool, share: int = 1) -> Iterator[T]:
    """``journal_entries(receipt, reduce, light=light)`` of a v4 receipt, in parallel where that pays.

    ``share``: passes read at the same time (a comparison reads two), which share the cores.
    """
    workers = _workers(receipt, share)  # decided now, before a pass the caller reads beside it starts
    if not workers:
        return journal_entries(receipt, reduce, light=light)
    return _chunked(receipt, reduce, None, light, workers)


def folded(
    receipt: Receipt, reduce: Callable[[Entry], T], fold: Callable[[Iterable[T]], U], light: bool
) -> Iterator[U]:
    """``fold`` of consecutive runs of ``journal_entries(receipt, reduce, light=light)`` covering them all.

    Workers fold their chunk's reductions themselves, so only the folds (small, when ``fold``
    aggregates) travel to this process; the caller combines them. ``fold`` gets an iterator and
    must consume it whole (the pass's errors are raised at its end).
    """
    workers = _workers(receipt, 1)
    if not workers:
        return _once(lambda: fold(journal_entries(receipt, reduce, light=light)))
    return _chunked(receipt, reduce, fold, light, workers)


def _chunked(
    receipt: Receipt, reduce: Callable[[Entry], Any], fold: Any, light: bool, workers: int
) -> Iterator[Any]:
    """The parallel pass's reductions (or their folds), then, if it stopped, the sequential
    replay's from where it stopped (folded once, when folding)."""
    yielded = 0
    with acyclic(), closing(_parallel(receipt, reduce, fold, light, workers)) as parallel:
        for values, count in parallel:
            if values is _REPLAY:
                break
            yielded += count
            yield from values
        else:
            return
    rest = itertools.islice(journal_entries(receipt, reduce, light=light), yielded, None)
    if fold is None:
        yield from rest
    else:
        yield fold(rest)


def _once(make: Callable[[], U]) -> Iterator[U]:
    yield make()


def _workers(receipt: Receipt, share: int) -> int:
    """Worker processes for this receipt's pass (0: read it sequentially, in this process)."""
    if receipt.payload["schema"] == V3:
        return 0
    cores = processes()
    if cores < 2:
        return 0
    try:
        size = journal_path(receipt.path, receipt.payload).stat().st_size
    except (OSError, InputError, KeyError, TypeError):
        return 0  # the sequential pass reports it
    # With passes sharing the cores, one worker each still moves a pass off this process.
    return max(1, cores // share) if size >= MIN_BYTES else 0


_REPLAY: Any = object()
_Chunk = tuple[list[Any], int]  # reductions (or their fold) and how many entries they cover


def _parallel(
    receipt: Receipt, reduce: Callable[[Entry], Any], fold: Any, light: bool, workers: int
) -> Generator[_Chunk, None, None]:
    """Each chunk's reductions, then the pass's checks; ``(_REPLAY, 0)`` once anything is not in order."""
    payload = receipt.payload
    try:
        threshold = recompute_threshold(payload)
        policy = recompute_policy(payload)
        path = journal_path(receipt.path, payload)
        handle = open_regular(path)
    except InputError:
        yield _REPLAY, 0
        return
    cursor = Cursor(handle)
    totals = Merged(policy)
    job = (os.fspath(path), policy, reduce, fold, light)
    with handle, worker_pool(workers, _start, job) as pool:
        pending: deque[Any] = deque()
        for task in chunks_of(cursor):
            pending.append(pool.submit(_scan, task))
            while len(pending) > 2 * workers:  # in flight: bounded, so memory stays flat
                if not (yield from _take(pending.popleft(), totals)):
                    return
        while pending:
            if not (yield from _take(pending.popleft(), totals)):
                return
    if not totals.passes(payload, cursor.digest.hexdigest(), threshold):
        yield _REPLAY, 0


class Workers:
    """The forked worker processes of one pass.

    ``concurrent.futures``, not ``multiprocessing.Pool``: a worker that dies (killed by the
    system, say) fails its chunk with ``BrokenProcessPool``, which the pass takes as a chunk not
    in order (the sequential replay then runs here), where a pool would wait for it forever.
    Whether a pass may fork is decided before it starts (:func:`entries`), so a comparison's two
    passes, read side by side, both do, although the first one's executor then runs a thread.
    """

    def __init__(self, workers: int, start: Callable[[Any], None], job: Any) -> None:
        context = multiprocessing.get_context("fork")
        self.executor = ProcessPoolExecutor(workers, mp_context=context, initializer=start, initargs=(job,))

    def submit(self, function: Callable[[Any], Any], task: Any) -> Future[Any]:
        return self.executor.submit(function, task)

    def close(self) -> None:
        # Chunks not started are cancelled; those under way (at most 2 × workers + 1) finish.
        self.executor.shutdown(wait=True, cancel_futures=True)


@contextmanager
def worker_pool(workers: int, start: Callable[[Any], None], job: Any) -> Iterator[Workers]:
    """The :class:`Workers` of one pass, each started with ``start(job)``, shut down however it ends."""
    pool = Workers(workers, start, job)
    try:
        yield pool
    finally:
        pool.close()


def outcome(future: Future[Any]) -> Any:
    """A chunk's result; None when its worker died (the caller replays, or reads sequentially)."""
    try:
        return future.result()
    except BrokenProcessPool:
        return None


def _take(result: Any, totals: Merged) -> Generator[_Chunk, None, bool]:
    """Yield one chunk; False when it was not in order (``_REPLAY`` yielded instead)."""
    found = outcome(result)
    values, count, chunk_totals = found if found is not None else ([], 0, None)
    if chunk_totals is None:
        yield _REPLAY, 0
        return False
    totals.add(chunk_totals)
    yield values, count
    return True


class Merged:
    """The totals of a journal's chunks, added as they arrive, in journal order (so cells keep
    their order of first appearance); memory does not grow with the journal."""

    def __init__(self, policy: str) -> None:
        self.lines = 0
        self.tally = Scan(policy).tally
        self.cells: dict[tuple[int, str, int], CellAccumulator] = {}

    def add(self, totals: Totals) -> None:
        lines, counts, counted, accumulators = totals
        self.lines += lines
        for status, count in counts.items():
            self.tally.counts[status] = self.tally.counts.get(status, 0) + count
        for status, count in counted.items():
            self.tally.counted[status] = self.tally.counted.get(status, 0) + count
        for key, accumulator in accumulators.items():
            if key in self.cells:
                self.cells[key].merge(accumulator)
            else:
                self.cells[key] = accumulator

    def passes(self, payload: dict[str, Any], sha256: str, threshold: int) -> bool:
        """Whether every check of the sequential pass passes on the journal's hash and these totals."""
        reference = payload["prompt_results"]
        if self.lines != reference["records"] or sha256 != reference["sha256"]:
            return False
        try:
            check_recomputed(payload, self.tally, self.cells, threshold)
            check_identity(payload)
        except InputError:
            return False
        return True


class Cursor:
    """A journal read once, block by block and hashed, moved forward over whole lines."""

    def __init__(self, handle: Any) -> None:
        self.handle = handle
        self.digest = hashlib.sha256()
        self.block = b""
        self.start = 0  # file offset of ``block``
        self.position = 0  # the cursor, within ``block``
        self.done = False  # the whole file was read

    @property
    def offset(self) -> int:
        return self.start + self.position

    def _next(self) -> bool:
        self.start += len(self.block)
        self.block, self.position = self.handle.read(_BLOCK), 0
        self.digest.update(self.block)
        self.done = not self.block
        return not self.done

    def past(self, target: int) -> int:
        """Move past the first line end at or beyond offset ``target`` (or to the end); lines passed."""
        lines = 0
        while True:
            skip = max(self.position, target - self.start)
            end = self.block.find(b"\n", skip) if skip < len(self.block) else -1
            if end >= 0:
                lines += self.block.count(b"\n", self.position, end + 1)
                self.position = end + 1
                return lines
            lines += self.block.count(b"\n", self.position)
            self.position = len(self.block)
            if not self._next():
                return lines

    def lines(self, count: int) -> int:
        """Move past ``count`` line ends (fewer at the end of the file); how many were passed."""
        passed = 0
        while passed < count:
            here = self.block.count(b"\n", self.position)
            if here < count - passed:
                passed += here
                self.position = len(self.block)
                if not self._next():
                    return passed
                continue
            while passed < count:
                self.position = self.block.index(b"\n", self.position) + 1
                passed += 1
        return passed

    def rest(self) -> None:
        """Move to the end of the file."""
        self.position = len(self.block)
        while not self.done and self._next():
            self.position = len(self.block)


def chunks_of(cursor: Cursor) -> Iterator[tuple[int, int, int]]:
    """``(offset, size, first sequence number)`` of chunks of whole lines of about ``CHUNK_BYTES``,
    the last one running to the end of the file."""
    first = 0
    while not cursor.done:
        start = cursor.offset
        count = cursor.past(start + CHUNK_BYTES)
        if cursor.offset > start:
            yield start, cursor.offset - start, first
        first += count


def worker_started() -> None:
    """What every worker of a pass does first."""
    # The parent's handlers are the CLI's (Ctrl-C, SIGTERM raise in the caller): a worker is
    # stopped by its pool, not by raising inside the pool's own queue handling.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    gc.disable()  # as in the sequential pass (journal.acyclic); the worker ends with the pass


def _start(job: tuple[str, str, Callable[[Entry], Any], Any, bool]) -> None:
    global _job
    _job = job
    worker_started()


def lines_of(data: bytes) -> Iterator[bytes]:
    parts = data.split(b"\n")
    last = parts.pop()
    for part in parts:
        yield part + b"\n"
    if last:
        yield last


def _scan(task: tuple[int, int, int]) -> tuple[list[Any], int, Totals | None]:
    """One chunk's reductions (or their fold), their number and totals (None: the parent replays)."""
    assert _job is not None
    path, policy, reduce, fold, light = _job
    offset, size, first = task
    if size >= MAX_RESULT_LINE_BYTES:  # a line could reach the limit: the sequential pass decides
        return [], 0, None
    with open(path, "rb") as handle:
        handle.seek(offset)
        data = handle.read(size)
    scan = Scan(policy)
    try:
        values = list(scan.run(lines_of(data), first, reduce, light))
        count = len(values)
        if fold is not None:
            values = [fold(iter(values))]
    except Exception:  # whatever it is, the sequential replay meets it where it belongs
        return [], 0, None
    if scan.deferred is not None or len(data) != size:
        return [], 0, None
    return values, count, totals_of(scan)


def totals_of(scan: Scan) -> Totals:
    """What a chunk contributes to the receipt's checks (lines, status tallies, cell sums)."""
    return scan.count, scan.tally.counts, scan.tally.counted, scan.accumulators()
