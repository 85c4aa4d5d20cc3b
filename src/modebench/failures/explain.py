"""Which attempts of a run could not be scored, where they came from, and what to do about them.

Read back from a receipt: its result journal (when present and matching the receipt's hash)
holds every attempt with its status and detail; a preflight failure receipt holds its one
``failure``. Input line numbers come from the input file when it is at hand and is the file the
receipt graded (same SHA-256); otherwise a prompt is located by its record number (the n-th
non-blank line of the input).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from modebench._words import counted as _counted
from modebench._words import were
from modebench.diagnostics import MAX_RESPONSE_CHARS, UNSCORABLE
from modebench.failures.policy import COUNT_AS_INCORRECT, COUNTED, ORIGINAL_STATUS
from modebench.receipt.reader import journal_path, read_report
from modebench.receipt.schema import V4
from modebench.validation import InputError, loads

__all__ = ["DEFAULT_LIMIT", "FailureExplanation", "UnscorableAttempt", "explain"]

#: Attempts listed by default; the rest are counted ("and N more").
DEFAULT_LIMIT = 10

#: ``worker_failure`` details that the response alone causes, every time it is graded: a
#: ``RecursionError`` of a deeply nested expression (0.4.0's verdict) and a reply over the byte cap.
RESPONSE_CAUSED_DETAILS = frozenset({"unexpected RecursionError", "worker reply byte limit exceeded"})
#: The advice key of ``worker_failure`` attempts that the response caused.
RESPONSE_CAUSED = "worker_failure (caused by the response)"

#: Why each status happens and what to do, in the library's words (``{option}`` is how the caller
#: spells the opt-in policy: a keyword argument for the API, a flag for the CLI).
_ADVICE = {
    "resource_limit": (
        f"a response longer than {MAX_RESPONSE_CHARS:,} characters (or one that hit a request or "
        "memory cap) is not graded: shorten or truncate such responses before evaluating, or use "
        "{option} to score them as incorrect draws (the receipt records that policy)"
    ),
    "timeout": (
        "the verifier's deadline passed: a candidate program that runs too long, or an overloaded "
        "machine (then rerun with fewer workers); or use {option} to score them as incorrect draws "
        "(the receipt records that policy)"
    ),
    "worker_failure": (
        "a verifier worker crashed or broke its protocol: an evaluator problem, not the model's; "
        "rerun, and report it with the journal line if it persists (no policy scores it)"
    ),
    RESPONSE_CAUSED: (
        "the response itself made the verifier fail (an expression nested too deep for it, or a "
        "reply over the worker's byte cap): deterministic, so a rerun gives the same status and it "
        "is not an evaluator problem; remove or shorten such responses before evaluating (no "
        "policy scores it)"
    ),
    "invalid_reference": (
        "a reference failed validation while grading: fix that prompt's answer object (no policy scores it)"
    ),
}


@dataclass(frozen=True)
class UnscorableAttempt:
    """One attempt that could not be scored (or was scored as incorrect under the opt-in policy)."""

    prompt_id: str
    record: int  # 1-based position among the input's records (non-blank lines)
    line: int | None  # physical input line, when the graded input file was at hand
    draw: int  # 0-based index into the record's ``responses``
    status: str  # the unscorable status (the original one, for a counted attempt)
    detail: str | None
    counted: bool = False  # scored as incorrect under ``count-as-incorrect``

    def where(self) -> str:
        place = f"line {self.line}" if self.line is not None else f"record {self.record}"
        return f"{place}, prompt {self.prompt_id[:100]!r}, responses[{self.draw}]"


@dataclass(frozen=True)
class FailureExplanation:
    """The unscorable attempts of one receipt, or where their diagnostics live."""

    receipt: Path
    status: str  # the receipt's evaluation status
    counts: dict[str, int] = field(default_factory=dict)  # unscorable attempts by status
    attempts: tuple[UnscorableAttempt, ...] = ()  # the first ``limit`` of them, in input order
    journal: Path | None = None
    #: Set when the attempts could not be read: says precisely where the diagnostics are.
    unavailable: str | None = None
    #: A preflight failure receipt's ``failure`` detail (reference validation could not run).
    failure: str | None = None
    #: The run graded a selection of the input (a prompt-id list): records count selected ones.
    selection: bool = False
    #: Of the ``worker_failure`` attempts, how many the response caused (``RESPONSE_CAUSED_DETAILS``).
    response_caused: int = 0

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def text(self, option: str = f'unscorable="{COUNT_AS_INCORRECT}"') -> str:
        """A short plain-text account; ``option`` spells the opt-in policy for the reader."""
        if self.failure is not None:
            return (
                "reference validation could not run, so nothing was graded: "
                f"{self.failure}\n(the failure receipt {self.receipt} holds this diagnostic)"
            )
        if not self.counts and self.unavailable is None:
            return ""
        counts = ", ".join(f"{status} {count}" for status, count in sorted(self.counts.items()))
        counted = bool(self.attempts) and all(attempt.counted for attempt in self.attempts)
        responses = _counted(self.total, "response")
        if self.status == "completed" or counted:
            head = f"{responses} could not be scored and {were(self.total)} counted as incorrect ({counts})"
        elif self.counts:
            head = (
                f"{responses} could not be scored ({counts}), so the run failed and every score is withheld"
            )
        else:
            head = "the run failed: some responses could not be scored"
        lines = [head + ":"]
        lines.extend(f"  {a.where()}: {a.status}: {a.detail or 'no detail'}" for a in self.attempts)
        if self.unavailable is not None:
            lines.append(f"  {self.unavailable}")
        elif self.total > len(self.attempts):
            lines.append(
                f"  … and {self.total - len(self.attempts)} more, all in the result journal {self.journal}"
            )
        elif self.journal is not None:
            lines.append(f"  (every attempt's status and detail: the result journal {self.journal})")
        if any(attempt.line is None for attempt in self.attempts):
            which = "selected record" if self.selection else "non-blank line"
            lines.append(f"  (record N: the N-th {which} of the graded input)")
        if self.status != "completed":
            advice = [status for status in sorted(self.counts) if status in _ADVICE]
            if "worker_failure" in advice and self.response_caused:
                # Say which: all caused by responses, or some of each kind.
                where = advice.index("worker_failure")
                caused_by_all = self.response_caused >= self.counts["worker_failure"]
                advice[where : where + 1] = (
                    [RESPONSE_CAUSED] if caused_by_all else [RESPONSE_CAUSED, "worker_failure"]
                )
            if advice:
                lines.append("What to do:")
                lines.extend(f"  {status}: {_ADVICE[status].format(option=option)}" for status in advice)
        return "\n".join(lines)


def explain(
    receipt: str | os.PathLike[str],
    *,
    input_path: str | os.PathLike[str] | None = None,
    limit: int = DEFAULT_LIMIT,
) -> FailureExplanation:
    """The unscorable attempts of ``receipt`` (the first ``limit`` listed, all counted).

    ``input_path``, when given and identical to the graded input, adds physical line numbers.
    """
    path = Path(receipt)
    checked = read_report(path, verify_results=False)
    payload, status = checked.payload, checked.status
    failure = payload.get("failure")
    if isinstance(failure, dict):
        return FailureExplanation(path, status, failure=str(failure.get("detail")))
    if checked.schema != V4 or checked.prompt_results is None:
        return FailureExplanation(path, status, counts=_unscorable_counts(payload))
    journal = journal_path(path, payload)
    unavailable = _journal_problem(journal, checked.prompt_results["sha256"])
    if unavailable is not None:
        return FailureExplanation(
            path, status, _unscorable_counts(payload), journal=journal, unavailable=unavailable
        )
    counts: dict[str, int] = {}
    response_caused = 0
    found: list[UnscorableAttempt] = []
    for record, entry in enumerate(_entries(journal), start=1):
        for draw, attempt in enumerate(entry["result"]["draws"][0]["attempts"]):
            original = attempt.get(ORIGINAL_STATUS)
            unscorable = attempt.get("status") if attempt.get("status") in UNSCORABLE else None
            status_found = unscorable or (original if original in COUNTED else None)
            if status_found is None:
                continue
            counts[status_found] = counts.get(status_found, 0) + 1
            if status_found == "worker_failure" and attempt.get("detail") in RESPONSE_CAUSED_DETAILS:
                response_caused += 1
            if len(found) < limit:
                found.append(
                    UnscorableAttempt(
                        str(entry["result"]["id"]),
                        record,
                        None,
                        draw,
                        status_found,
                        attempt.get("detail"),
                        counted=unscorable is None,
                    )
                )
    dataset = checked.dataset
    selected = dataset.get("prompt_ids") if dataset is not None else None
    chosen = {str(ident) for ident in selected} if isinstance(selected, list) else None
    lines = _line_numbers(input_path, checked.input_sha256, {a.record for a in found}, chosen)
    attempts = tuple(
        UnscorableAttempt(a.prompt_id, a.record, lines.get(a.record), a.draw, a.status, a.detail, a.counted)
        for a in found
    )
    return FailureExplanation(
        path,
        status,
        counts,
        attempts,
        journal=journal,
        selection=chosen is not None,
        response_caused=response_caused,
    )


def _record_id(line: bytes) -> str | None:
    try:
        record = loads(line)
    except InputError:
        return None
    ident = record.get("id") if isinstance(record, dict) else None
    return None if isinstance(ident, bool) or not isinstance(ident, (str, int)) else str(ident)


def _unscorable_counts(payload: dict[str, Any]) -> dict[str, int]:
    counts = payload["evaluation"].get("status_counts", {})
    return (
        {s: int(n) for s, n in sorted(counts.items()) if s in UNSCORABLE} if isinstance(counts, dict) else {}
    )


def _journal_problem(journal: Path, sha256: str) -> str | None:
    """Why the journal cannot be read back (then: where the diagnostics live), or None."""
    where = (
        f"attempt diagnostics are in the result journal {journal} "
        "(the receipt's prompt_results.path, relative to the receipt's directory)"
    )
    if not journal.is_file():
        return f"{where}, which is not there; run report where the journal is"
    digest = hashlib.sha256()
    with open(journal, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    if digest.hexdigest() != sha256:
        return f"{where}, which does not match the receipt's hash, so it is not read"
    return None


def _entries(journal: Path) -> Iterator[dict[str, Any]]:
    with open(journal, "rb") as handle:
        for line in handle:
            entry: dict[str, Any] = json.loads(line)
            yield entry


def _line_numbers(
    input_path: str | os.PathLike[str] | None,
    input_sha256: object,
    records: set[int],
    selected: set[str] | None = None,
) -> dict[int, int]:
    """Physical line of each wanted record number, if ``input_path`` is the graded input.

    With ``selected`` (the run's prompt-id list) only the records it names count, as the
    evaluator skipped the others.
    """
    if input_path is None or not records or not isinstance(input_sha256, str):
        return {}
    try:
        digest = hashlib.sha256()
        with open(input_path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        if digest.hexdigest() != input_sha256:
            return {}
        found: dict[int, int] = {}
        record = 0
        last = max(records)
        with open(input_path, "rb") as handle:
            for number, line in enumerate(handle, start=1):
                if not line.strip():  # blank lines are not records, but count as lines
                    continue
                if selected is not None and _record_id(line) not in selected:
                    continue
                record += 1
                if record in records:
                    found[record] = number
                if record >= last:
                    break
        return found
    except OSError:
        return {}
