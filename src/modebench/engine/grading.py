"""Grading the pending prompts: results committed in groups, the journal appended after each commit.

A group is committed to the ledger before its lines reach the journal, so the journal never runs
ahead of the ledger; a group closes at ``COMMIT_PROMPTS`` prompts or ``COMMIT_SECONDS`` of work.
The receipt's cells are tallied as results are made, not read back at publication.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any

from modebench.backends import Grader
from modebench.engine import ledger as _ledger
from modebench.engine.preflight import event
from modebench.engine.spec import ProgressCallback
from modebench.failures import policy
from modebench.identity import canonical
from modebench.intake.shards import Shard
from modebench.isolation.assemble import Assembled
from modebench.isolation.pool import OrderedResults, ParallelGrader
from modebench.receipt.tallies import Cells, StatusTally, tally_counted, tally_result
from modebench.receipt.writer import journal_line, prompt_result

#: Grading commits at most this many prompts, or this many seconds of work, per transaction.
COMMIT_PROMPTS = 128
COMMIT_SECONDS = 0.5

__all__ = ["COMMIT_PROMPTS", "COMMIT_SECONDS", "Grading", "Journal", "grade_pending"]


class Journal:
    """The open journal of a run: its running digest, its chain link and the prompts done."""

    def __init__(self, path: Path, digest: Any, link: bytes, done: int) -> None:
        self.path = path
        self.digest = digest
        self.link = link
        self.done = done


class _Groups:
    """Results waiting for their commit, and the commit that writes them to the journal."""

    def __init__(
        self,
        ledger: _ledger.Ledger,
        journal: Journal,
        handle: IO[str],
        progress: ProgressCallback | None,
        count: int | None,
    ) -> None:
        self.ledger = ledger
        self.journal = journal
        self.handle = handle
        #: None while preflight still runs: the grading events wait until it has ended.
        self.progress = progress
        self.count = count
        self.lines: list[str] = []
        self.started = time.monotonic()

    def add(self, seq: int, line: str, result_json: str | None, packed: bytes = b"") -> None:
        """Queue one result (its text, or ``packed`` as the ledger stores it) and its journal line."""
        self.journal.link = _ledger.chain_link(self.journal.link, line)
        if result_json is None:
            self.ledger.set_packed_result(seq, packed, self.journal.link)
        else:
            self.ledger.set_result(seq, result_json, self.journal.link)
        self.lines.append(line)
        if len(self.lines) >= COMMIT_PROMPTS or time.monotonic() - self.started >= COMMIT_SECONDS:
            self.flush()

    def flush(self) -> None:
        if not self.lines:
            return
        self.ledger.commit()  # commit before journal: the journal never runs ahead of the ledger
        self.handle.write("".join(self.lines))
        self.handle.flush()
        for line in self.lines:
            self.journal.digest.update(line.encode("utf-8"))
        finished = len(self.lines)
        self.lines.clear()
        for _ in range(finished):
            self.journal.done += 1
            event(self.progress, "grading", self.journal.done, self.count)
        self.started = time.monotonic()


class Grading:
    """One invocation's grading: results in input order into the ledger, the journal and the tally.

    ``offer`` takes prompts while preflight is still running (``docs/performance.md``, "Grading
    while preflight runs"): they are graded as soon as they are stored, their results committed
    and journaled as usual, but the phase stays ``preflight``, so a line refused later in the
    input still fails the run and the checkpoint is discarded with everything graded. A grading
    failure met meanwhile is kept and raised only once preflight has passed, so a refused line
    reports its own error, as before. The grading events wait too: ``start`` replays them after
    the ``validated`` event, so the progress stream is the one a sequential run gives.
    """

    def __init__(
        self,
        ledger: _ledger.Ledger,
        journal: Journal,
        grader: Grader,
        tallied: tuple[StatusTally, Cells],
        progress: ProgressCallback | None,
    ) -> None:
        self.ledger = ledger
        self.journal = journal
        self.grader = grader
        self.statuses, self.cells = tallied
        self.progress = progress
        self._handle = open(journal.path, "a", encoding="utf-8", newline="")  # noqa: SIM115 - closed by close()
        self._groups = _Groups(ledger, journal, self._handle, None, None)
        self._feed: OrderedResults | None = None
        self._error: Exception | None = None
        self.graded = journal.done  # prompts with a result, journaled or waiting for their commit

    def __enter__(self) -> Grading:
        return self

    def __exit__(self, *exc: object) -> None:
        self._handle.close()

    def overlap(self) -> bool:
        """Start taking offers during preflight (only a local pool grades as prompts arrive, and
        assembles their results on its workers: ``modebench.isolation.assemble``)."""
        if isinstance(self.grader, ParallelGrader):
            self._feed = self.grader.ordered(self.statuses.policy)
        return self._feed is not None

    def offer(self, seq: int, domain: str, prepared_json: str) -> None:
        """Grade a stored prompt (preflight: input order, selected prompts only)."""
        if self._feed is None:
            return
        try:
            self._take(self._feed.put(seq, (domain, prepared_json)))
        except Exception as exc:  # kept for after preflight; see the class docstring
            self._error, self._feed = exc, None

    def live(self, count: int) -> None:
        """Report a grading event per committed prompt from now on (``count``: the total)."""
        self._groups.progress, self._groups.count = self.progress, count

    def start(self, count: int) -> None:
        """Preflight has passed: replay the grading events so far, then report live."""
        self.live(count)
        event(self.progress, "grading", 0, count)
        for done in range(1, self.journal.done + 1):
            event(self.progress, "grading", done, count)
        if self._error is not None:
            raise self._error

    def _take(self, graded: Iterable[tuple[int, Any, Any]]) -> None:
        statuses, cells, groups = self.statuses, self.cells, self._groups
        unscorable = statuses.policy
        for seq, prepared, attempts in graded:
            if prepared is None:  # assembled on the worker: only the serial steps are left
                done: Assembled = attempts
                tally_counted(
                    statuses,
                    cells,
                    done.cell,
                    (done.status_counts, done.counted),
                    (done.accuracy, done.pass_at_k, done.distinct_at_k, done.pcmd),
                )
                groups.add(seq, done.line, None, done.packed)
                self.graded += 1
                continue
            result = prompt_result(prepared, policy.apply(unscorable, attempts))
            result_json = canonical(result)
            k = len(prepared["raw"]["responses"])
            tally_result(statuses, cells, (prepared["level"], prepared["domain"], k), result)
            groups.add(seq, journal_line(seq, prepared, result_json), result_json)
            self.graded += 1

    def finish(self, count: int, selection: Shard) -> None:
        """Grade what is still pending, in input order, and make the journal durable."""
        if self._feed is not None:
            started, self._feed = self._feed, None
            self._take(started.drain())
        if self.graded < count:
            # Results are a prefix of the selected prompts, so the next pending one is the
            # graded-th. A local pool assembles them on its workers, as during preflight.
            where = f"result IS NULL AND {selection.where()}"
            rows = self.ledger.rows("domain, prepared", where, selection.seq_at(self.graded))
            feed = self._feed if self.overlap() else None
            self._feed = None
            if feed is not None:
                for seq, domain, text in rows:
                    self._take(feed.put(seq, (domain, text)))
                self._take(feed.drain())
            else:
                # Ledger rows were written by the engine as canonical JSON: the plain decoder suffices.
                self._take(self.grader.results((seq, json.loads(text)) for seq, _, text in rows))
        self._groups.flush()
        os.fsync(self._handle.fileno())


def grade_pending(
    ledger: _ledger.Ledger,
    journal: Journal,
    count: int,
    grader: Grader,
    progress: ProgressCallback | None,
    selection: Shard,
    tallied: tuple[StatusTally, Cells],
) -> None:
    """Grade the selected prompts without a result, in input order, into ledger, journal and tally."""
    event(progress, "grading", journal.done, count)
    if journal.done == count:
        return
    with Grading(ledger, journal, grader, tallied, progress) as grading:
        grading.live(count)
        grading.finish(count, selection)
