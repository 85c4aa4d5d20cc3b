"""Grading the pending prompts: results committed in groups, the journal appended after each commit.

A group is committed to the ledger before its lines reach the journal, so the journal never runs
ahead of the ledger; a group closes at ``COMMIT_PROMPTS`` prompts or ``COMMIT_SECONDS`` of work.
The receipt's cells are tallied as results are made, not read back at publication.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import IO, Any

from modebench.backends import Grader
from modebench.engine import ledger as _ledger
from modebench.engine.preflight import event
from modebench.engine.spec import ProgressCallback
from modebench.failures import policy
from modebench.identity import canonical
from modebench.intake.shards import Shard
from modebench.receipt.tallies import Cells, StatusTally, tally_result
from modebench.receipt.writer import journal_line, prompt_result

#: Grading commits at most this many prompts, or this many seconds of work, per transaction.
COMMIT_PROMPTS = 128
COMMIT_SECONDS = 0.5

__all__ = ["COMMIT_PROMPTS", "COMMIT_SECONDS", "Journal", "grade_pending"]


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
        count: int,
    ) -> None:
        self.ledger = ledger
        self.journal = journal
        self.handle = handle
        self.progress = progress
        self.count = count
        self.lines: list[str] = []
        self.started = time.monotonic()

    def add(self, seq: int, line: str, result_json: str) -> None:
        self.journal.link = _ledger.chain_link(self.journal.link, line)
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
    # Ledger rows were written by the engine as canonical JSON: the plain decoder suffices.
    # Results are a prefix of the selected prompts, so the next pending one is the done-th.
    where = f"result IS NULL AND {selection.where()}"
    pending = (
        (seq, json.loads(text))
        for seq, text in ledger.rows("prepared", where, selection.seq_at(journal.done))
    )
    statuses, cells = tallied
    unscorable = statuses.policy
    with open(journal.path, "a", encoding="utf-8", newline="") as handle:
        groups = _Groups(ledger, journal, handle, progress, count)
        for seq, prepared, attempts in grader.results(pending):
            result = prompt_result(prepared, policy.apply(unscorable, attempts))
            result_json = canonical(result)
            k = len(prepared["raw"]["responses"])
            tally_result(statuses, cells, (prepared["level"], prepared["domain"], k), result)
            groups.add(seq, journal_line(seq, prepared, result_json), result_json)
        groups.flush()
        os.fsync(handle.fileno())
