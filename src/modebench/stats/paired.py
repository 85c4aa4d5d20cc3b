"""A comparison's two journals read side by side, in aligned chunks, by forked workers.

``compare`` pairs the prompts of two runs by (level, domain, id). Runs of the same input list
their prompts in the same order, so line *i* of one journal pairs with line *i* of the other. The
parent reads both files once, hashing them, and cuts them at the same line numbers (the first at
about :data:`modebench.stats.chunks.CHUNK_BYTES`, the second after as many lines); each worker
checks and summarizes its two runs of lines with the sequential pass's own
:class:`~modebench.stats.journal.Scan`, pairs them line by line and sends back only the joint
(profile A, profile B, retention) counts per cell and the totals of the receipts' checks. So no
per-prompt record crosses between processes and both journals are read in parallel.

Only the common case finishes here: both receipts completed and in order, every line paired with
its partner at the same place, the same reference on both sides. Anything else — runs in another
order, a subset, a prompt graded against another reference, a check that does not pass — returns
None, and :func:`modebench.stats.compare` reads the receipts the sequential way, whose result and
errors are therefore the only ones anybody sees. See ``docs/statistics.md``.
"""

from __future__ import annotations

import itertools
import os
from collections import Counter, deque
from collections.abc import Iterator
from typing import Any, Protocol

from modebench.receipt.reader import (
    journal_path,
    open_regular,
    recompute_policy,
    recompute_threshold,
)
from modebench.receipt.records import Receipt
from modebench.receipt.schema import MAX_RESULT_LINE_BYTES, V3
from modebench.stats import chunks
from modebench.stats.journal import Entry, Scan
from modebench.stats.profiles import PromptSummary, completed_receipt, entry_summary
from modebench.stats.retention import Retention, retention
from modebench.validation import InputError

__all__ = ["Digest", "paired_groups"]

Pair = tuple[Any, Any, Retention]
Groups = dict[tuple[int, str], Counter[Pair]]
_job: tuple[Any, ...] | None = None  # set in each worker


class Digest(Protocol):
    """What a caller builds from every entry of a run besides the comparison (the HTML report's
    digest): built per chunk in the workers, then merged in journal order."""

    def observe(self, entry: Entry) -> PromptSummary | None: ...  # the sequential pass's observer

    def add(self, entry: Entry, summary: PromptSummary | None) -> None: ...

    def fresh(self) -> Digest: ...  # an empty digest of the same receipt

    def part(self) -> Any: ...

    def merge(self, part: Any) -> None: ...


def paired_groups(
    a: str | os.PathLike[str],
    b: str | os.PathLike[str],
    digests: tuple[Digest | None, Digest | None] = (None, None),
) -> tuple[Groups, int] | None:
    """(joint counts per cell, prompts per run) of two aligned receipts, or None (read them the usual way).

    ``digests`` receive every entry of their run, merged only once the whole pass succeeded.
    """
    try:
        receipts = completed_receipt(a), completed_receipt(b)
    except InputError:
        return None
    if any(r.payload["schema"] == V3 for r in receipts) or chunks.processes() < 2:
        return None
    try:
        paths = [journal_path(r.path, r.payload) for r in receipts]
        if sum(path.stat().st_size for path in paths) < 2 * chunks.MIN_BYTES:
            return None
        policies = [recompute_policy(r.payload) for r in receipts]
        thresholds = [recompute_threshold(r.payload) for r in receipts]
        handles = [open_regular(path) for path in paths]
    except (OSError, InputError, KeyError, TypeError):
        return None
    try:
        job = (*map(os.fspath, paths), *policies, *(d.fresh if d is not None else None for d in digests))
        found = _pass(receipts, handles, job, policies, thresholds, digests)
        if found is None:
            return None
        groups, count, staged = found
        for digest, stage in zip(digests, staged):
            if digest is not None and stage is not None:
                digest.merge(stage.part())
        return groups, count
    finally:
        for handle in handles:
            handle.close()


def _pass(
    receipts: tuple[Receipt, Receipt],
    handles: list[Any],
    job: tuple[Any, ...],
    policies: list[str],
    thresholds: list[int],
    digests: tuple[Digest | None, Digest | None],
) -> tuple[Groups, int, list[Digest | None]] | None:
    """The aligned pass; the digests' chunks are merged into fresh ones (staged), and become the
    callers' only once everything passed."""
    cursors = [chunks.Cursor(handle) for handle in handles]
    groups: Groups = {}
    totals = [chunks.Merged(policy) for policy in policies]
    staged = [digest.fresh() if digest is not None else None for digest in digests]
    workers = chunks.processes()
    with chunks.worker_pool(workers, _start, job) as pool:
        pending: deque[Any] = deque()
        for task in _aligned(*cursors):
            pending.append(pool.submit(_pair, task))
            while len(pending) > 2 * workers:
                if not _merge(chunks.outcome(pending.popleft()), groups, totals, staged):
                    return None
        while pending:
            if not _merge(chunks.outcome(pending.popleft()), groups, totals, staged):
                return None
    for receipt, cursor, merged, threshold in zip(receipts, cursors, totals, thresholds):
        if not merged.passes(receipt.payload, cursor.digest.hexdigest(), threshold):
            return None
    return groups, totals[0].lines, staged


def _merge(
    result: _Result | None, groups: Groups, totals: list[chunks.Merged], staged: list[Digest | None]
) -> bool:
    if result is None:
        return False
    found, chunk_totals, chunk_parts = result
    for cell, counts in found.items():
        groups.setdefault(cell, Counter()).update(counts)
    for side in (0, 1):
        totals[side].add(chunk_totals[side])
        stage = staged[side]
        if stage is not None:
            stage.merge(chunk_parts[side])
    return True


def _aligned(a: chunks.Cursor, b: chunks.Cursor) -> Iterator[tuple[int, int, int, int, int]]:
    """``(offset A, size A, offset B, size B, first line)`` of chunks cut at the same line numbers;
    the last one runs both files to their ends (a worker finds any line left unpaired)."""
    first = 0
    while True:
        start_a, start_b = a.offset, b.offset
        count = a.past(start_a + chunks.CHUNK_BYTES)
        if a.done:
            b.rest()
        else:
            b.lines(count)
        yield start_a, a.offset - start_a, start_b, b.offset - start_b, first
        if a.done:
            return
        first += count


def _start(job: tuple[Any, ...]) -> None:
    global _job
    _job = job
    chunks.worker_started()


def _read(path: str, offset: int, size: int) -> bytes:
    with open(path, "rb") as handle:
        handle.seek(offset)
        return handle.read(size)


def _key(summary: PromptSummary) -> tuple[int, str, str, str]:
    return summary.cell[0], summary.cell[1], summary.id, summary.reference_sha256


def _observed(entry: Entry) -> tuple[Entry, PromptSummary]:
    return entry, entry_summary(entry)


_Result = tuple[Groups, tuple[chunks.Totals, chunks.Totals], tuple[Any, Any]]


def _pair(task: tuple[int, int, int, int, int]) -> _Result | None:
    """Joint counts, both runs' totals and digests of one aligned chunk (None: not in order)."""
    assert _job is not None
    path_a, path_b, policy_a, policy_b, fresh_a, fresh_b = _job
    offset_a, size_a, offset_b, size_b, first = task
    if max(size_a, size_b) >= MAX_RESULT_LINE_BYTES:
        return None
    data_a, data_b = _read(path_a, offset_a, size_a), _read(path_b, offset_b, size_b)
    scans = Scan(policy_a), Scan(policy_b)
    digests = [fresh() if fresh is not None else None for fresh in (fresh_a, fresh_b)]
    groups: Groups = {}
    try:
        streams = [
            scan.run(chunks.lines_of(data), first, _observed, True)
            for scan, data in zip(scans, (data_a, data_b))
        ]
        for mine, other in itertools.zip_longest(*streams):
            if mine is None or other is None or _key(mine[1]) != _key(other[1]):
                return None
            for digest, (entry, summary) in zip(digests, (mine, other)):
                if digest is not None:
                    digest.add(entry, summary)
            joint = (mine[1].profile, other[1].profile, retention(mine[1].modes, other[1].modes))
            groups.setdefault((mine[1].cell[0], mine[1].cell[1]), Counter())[joint] += 1
    except Exception:  # whatever it is, the sequential comparison meets it where it belongs
        return None
    if any(scan.deferred is not None for scan in scans) or (len(data_a), len(data_b)) != (size_a, size_b):
        return None
    parts = tuple(digest.part() if digest is not None else None for digest in digests)
    return groups, (chunks.totals_of(scans[0]), chunks.totals_of(scans[1])), (parts[0], parts[1])
