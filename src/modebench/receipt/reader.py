"""Reading receipts (v3 and v4) with every check of the receipt contract.

A v4 receipt's numbers are not trusted: every cell, the status counts and the status are
recomputed from its hash-verified journal and must agree (``docs/receipts.md``). Files are read
only if they are regular files, with bounded reads, so a path to a device or FIFO cannot hang.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, cast

from modebench import guard
from modebench.contracts import normalize_domain, normalize_level
from modebench.diagnostics import VerifierExecutionError
from modebench.failures import policy
from modebench.guard import sibling_journal
from modebench.identity import canonical, digest_json
from modebench.receipt.records import JournalLine, Receipt
from modebench.receipt.run_identity import bound_options, checkpoint_identity
from modebench.receipt.schema import MAX_RECEIPT_BYTES, MAX_RESULT_LINE_BYTES, RESULT_FORMAT, SCHEMAS, V4
from modebench.receipt.tallies import StatusTally, tally_results, v4_cells
from modebench.validation import InputError, is_integer, loads, positive_integer

_HEX64 = re.compile(r"[0-9a-f]{64}")
_METRICS = ("accuracy", "pass_at_k", "distinct_at_k")


def _number(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float))


def recorded_plugins(payload: dict[str, Any]) -> frozenset[str]:
    """The third-party domains a receipt records in ``software.plugins`` (docs/evaluation.md)."""
    return Receipt("", payload).plugins


def cell_domain(value: Any, recorded: frozenset[str]) -> str:
    """The canonical domain of a receipt cell; raises ValueError for an unknown one.

    A plug-in domain the receipt itself records is accepted as written, so a receipt stays
    readable where that plug-in is not installed.
    """
    if isinstance(value, str) and value in recorded:
        return value
    return normalize_domain(value)


def _check_cell(cell: Any, completed: bool, recorded: frozenset[str]) -> None:
    try:
        normalize_level(cell["level"])
        cell_domain(cell["domain"], recorded)
    except ValueError as exc:
        raise InputError(str(exc)) from None
    except (KeyError, TypeError) as exc:
        raise InputError(f"incomplete report cell: {exc}") from None
    try:
        k = cell["k"]
        positive_integer(k, "report k")
        notes = cell.get("protocol_notes", [])
        if not isinstance(notes, list) or not all(isinstance(n, str) for n in notes):
            raise InputError("invalid protocol notes")
        for key in _METRICS:
            value = cell[key]
            if value is not None:
                if not _number(value) or value < 0:
                    raise InputError(f"invalid report metric: {key}")
                if value > (k if key == "distinct_at_k" else 1):
                    raise InputError(f"report metric out of bounds: {key}")
            if completed and value is None:
                raise InputError("completed report has missing aggregate scores")
            if not completed and value is not None:
                raise InputError("failed report must not contain aggregate scores")
        pcmd = cell["pcmd"]
        d_mode = pcmd["d_mode"]
        if d_mode is not None and (not _number(d_mode) or not 0 <= d_mode <= 1):
            raise InputError("invalid PCMD")
        if not isinstance(pcmd["reportable"], bool):
            raise InputError("invalid reportability flag")
        if not completed and (d_mode is not None or pcmd["reportable"]):
            raise InputError("failed report must not contain reportable PCMD")
    except (KeyError, TypeError, AttributeError) as exc:
        raise InputError(f"incomplete report cell: {exc}") from None


def open_regular(path: str | os.PathLike[str], kind: str = "journal") -> Any:
    return guard.open_regular(path, kind)  # a FIFO is refused without waiting for a writer


def _journal_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open_regular(path) as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_report(
    path: str | os.PathLike[str],
    *,
    verify_results: bool = True,
    journal: str | os.PathLike[str] | None = None,
) -> Receipt:
    """Load and check a receipt; for v4 also verify the journal and recompute its numbers.

    Returns the typed :class:`Receipt` (``modebench.reporting.read_report``, 0.4.0's edge,
    returns its dictionary). ``journal``: where the result journal is now, when it was moved away
    from its receipt (it is still verified against the receipt's hash); by default the receipt's
    ``prompt_results.path``.
    """
    with open_regular(path, "receipt") as handle:
        data = handle.read(MAX_RECEIPT_BYTES + 1)
    if len(data) > MAX_RECEIPT_BYTES:
        raise InputError(f"receipt exceeds {MAX_RECEIPT_BYTES} bytes")
    payload = loads(data)
    if not isinstance(payload, dict) or payload.get("schema") not in SCHEMAS:
        raise InputError("report requires a ModeBench v3 or v4 receipt")
    evaluation = payload.get("evaluation")
    if not isinstance(evaluation, dict):
        raise InputError("report requires evaluation metadata")
    if evaluation.get("status") not in ("completed", "failed"):
        raise InputError("report has no valid evaluation status")
    cells = payload.get("cells")
    if not isinstance(cells, list):
        raise InputError("report cells must be a list")
    completed = evaluation["status"] == "completed"
    recorded = recorded_plugins(payload)
    for cell in cells:
        _check_cell(cell, completed, recorded)
    if payload["schema"] == V4:
        reference = payload.get("prompt_results")
        if not isinstance(reference, dict) or reference.get("format") != RESULT_FORMAT:
            raise InputError("invalid detailed-result reference")
        if not isinstance(reference.get("path"), str) or not reference["path"]:
            raise InputError("missing detailed-result path")
        if not isinstance(reference.get("sha256"), str) or not _HEX64.fullmatch(reference["sha256"]):
            raise InputError("missing detailed-result hash")
        records = reference.get("records")
        if not is_integer(records) or records < 1:
            raise InputError("invalid detailed-result count")
        if verify_results:
            found = journal_path(path, payload) if journal is None else Path(journal)
            try:
                digest = _journal_sha256(found)
            except FileNotFoundError as exc:
                # 0.4.0's error (the OS error naming the path); the hint says what the file is.
                exc.hint = (  # type: ignore[attr-defined]
                    f"the receipt names its result journal {reference['path']!r} relative to its own "
                    "directory; it holds every attempt's status and detail, so keep or copy it "
                    "beside the receipt"
                )
                raise
            if digest != reference["sha256"]:
                raise InputError("detailed-result journal hash mismatch")
            _recompute(payload, found)
            check_identity(payload)
    return Receipt.at(path, payload)


def check_identity(payload: dict[str, Any]) -> None:
    """For a custom dataset, the input hash and options must reproduce the execution identity.

    The identity digest binds ``input_sha256`` with the options and software; everything it
    covers is in the receipt except whether the run was passed as an option or inline, so both
    are tried. (A frozen run's identity also covers the dataset manifest, which the receipt does
    not hold; it is not checked here.)
    """
    dataset, execution = payload.get("dataset"), payload.get("execution")
    if not isinstance(dataset, dict) or dataset.get("kind") != "custom" or not isinstance(execution, dict):
        return
    software = payload.get("software")
    if not isinstance(software, dict) or not isinstance(payload.get("input_sha256"), str):
        raise InputError("receipt input_sha256 disagrees with its execution identity")
    # The run's identity was bound before grading, when its software did not yet name the
    # third-party plug-ins it used (the receipt adds them at publication).
    software = {key: value for key, value in software.items() if key != "plugins"}
    for run in (payload.get("run"), None):
        # What a custom run's receipt records of its options; the rest are at their defaults.
        options = bound_options(
            {
                "min_defined_prompts": payload["evaluation"].get("min_defined_prompts"),
                "run": run,
                "ids": dataset.get("prompt_ids"),
                "unscorable": payload["evaluation"].get("unscorable", policy.FAIL_RUN),
            }
        )
        identity = checkpoint_identity(payload["input_sha256"], options, None, software)
        if digest_json(identity) == execution.get("identity_sha256"):
            return
    raise InputError("receipt input_sha256 disagrees with its execution identity")


def _journal_entries(journal: Path, expected: int) -> Iterator[JournalLine]:
    return sequenced(_strict_lines(journal), expected)


def _strict_lines(journal: Path) -> Iterator[Any]:
    with open_regular(journal) as handle:
        while True:
            line = handle.readline(MAX_RESULT_LINE_BYTES + 1)
            if not line:
                break
            if len(line) > MAX_RESULT_LINE_BYTES:
                raise InputError("detailed-result line exceeds byte limit")
            yield loads(line)


def sequenced(entries: Iterable[Any], expected: int | None, start: int = 0) -> Iterator[JournalLine]:
    """The decoded journal ``entries`` as :class:`JournalLine` records (what
    ``writer.journal_line`` writes), refused unless they are ``expected`` results in sequence.

    ``start``: the sequence number of the first entry (a chunk of a journal; ``expected`` None).
    """
    index = start
    for entry in entries:
        if (
            not isinstance(entry, dict)
            or entry.get("schema") != RESULT_FORMAT
            or entry.get("sequence") != index
        ):
            raise InputError("detailed-result sequence mismatch")
        yield cast(JournalLine, entry)
        index += 1
    if expected is not None and index - start != expected:
        raise InputError("detailed-result count mismatch")


def recompute_threshold(payload: dict[str, Any]) -> int:
    """The receipt's ``min_defined_prompts``, checked before its journal is recomputed."""
    threshold = payload["evaluation"].get("min_defined_prompts")
    if isinstance(threshold, bool) or not isinstance(threshold, int) or threshold <= 0:
        raise InputError("receipt evaluation has no valid min_defined_prompts")
    return threshold


def recompute_policy(payload: dict[str, Any]) -> str:
    """The receipt's unscorable policy (absent: the 0.4.0 default), checked before its journal is recomputed."""
    evaluation = payload["evaluation"]
    unscorable = evaluation.get("unscorable", policy.FAIL_RUN)
    if unscorable not in policy.POLICIES or unscorable == policy.FAIL_RUN and "unscorable" in evaluation:
        raise InputError(f"receipt evaluation has an unknown unscorable policy: {unscorable!r}")
    return str(unscorable)


def incomplete_entry(exc: Exception) -> InputError:
    """The error of a journal entry the tally cannot read (an InputError passes through)."""
    if isinstance(exc, InputError):
        return exc
    if isinstance(exc, VerifierExecutionError):
        # A genuine journal scores no prompt with an unscorable attempt under the 0.4.0 policy:
        # such an entry was edited, so it is refused, not tallied (the tally cannot score it).
        return InputError(
            f"detailed-result entry is inconsistent: a scored result holds an unscorable attempt ({exc})"
        )
    return InputError(f"detailed-result entry is incomplete: {exc}")


def _recompute(payload: dict[str, Any], journal: Path) -> None:
    """Refuse a v4 receipt whose status, status counts or cells disagree with its journal."""
    threshold = recompute_threshold(payload)
    unscorable = recompute_policy(payload)
    try:
        tally, cells = tally_results(
            (
                (entry["level"], entry["domain"], entry["k"], entry["result"])
                for entry in _journal_entries(journal, payload["prompt_results"]["records"])
            ),
            unscorable,
        )
    except (KeyError, TypeError, IndexError, AttributeError, ValueError, VerifierExecutionError) as exc:
        raise incomplete_entry(exc) from None
    check_recomputed(payload, tally, cells, threshold)


def check_recomputed(payload: dict[str, Any], tally: StatusTally, cells: Any, threshold: int) -> None:
    """Compare a receipt's status, status counts and cells with those tallied from its journal."""
    evaluation = payload["evaluation"]
    unscorable = tally.policy  # the receipt's policy: the tally was made under it
    healthy, counts = tally.healthy, tally.counts
    if evaluation["status"] != ("completed" if healthy else "failed"):
        raise InputError("receipt evaluation status disagrees with its result journal")
    if evaluation.get("status_counts") != dict(sorted(counts.items())):
        raise InputError("receipt status_counts disagree with its result journal")
    if unscorable == policy.FAIL_RUN and tally.counted:
        raise InputError(
            "receipt declares no unscorable policy, but its result journal counts unscorable attempts as incorrect"
        )
    for key, value in policy.evaluation_extras(unscorable, tally.counted).items():
        if evaluation.get(key) != value:
            raise InputError(f"receipt evaluation {key} disagrees with its result journal")
    expected = v4_cells(cells, threshold, healthy)
    if len(expected) != len(payload["cells"]):
        raise InputError("receipt cells disagree with its result journal: cell count")
    for given, derived in zip(payload["cells"], expected):
        if canonical(given) != canonical(derived):
            where = f"level {derived['level']} {derived['domain']} k={derived['k']}"
            keys = sorted(key for key in derived if given.get(key) != derived[key]) or ["cell"]
            raise InputError(f"receipt cells disagree with its result journal: {where}: {', '.join(keys)}")


def journal_path(receipt: str | os.PathLike[str], payload: dict[str, Any]) -> Path:
    relative = sibling_journal(receipt, payload["prompt_results"]["path"])
    return Path(receipt).resolve().parent / relative


def iter_prompt_results(path: str | os.PathLike[str]) -> Iterator[dict[str, Any]]:
    """Per-prompt results: input order from a v4 journal, cell order from a v3 receipt."""
    receipt = read_report(path)
    if receipt.is_v3 or receipt.prompt_results is None:  # v3: the results are inside the cells
        for cell in receipt.cells:
            yield from cell.get("prompt_results", [])
        return
    for entry in _journal_entries(journal_path(path, receipt.payload), receipt.prompt_results["records"]):
        yield entry["result"]


def iter_cell_results(path: str | os.PathLike[str]) -> Iterator[tuple[int, str, int, dict[str, Any]]]:
    """``(level, domain, k, per-prompt result)`` for every prompt (v4 journal or v3 cells)."""
    receipt = read_report(path)
    if receipt.is_v3 or receipt.prompt_results is None:  # v3: the results are inside the cells
        for cell in receipt.cells:
            for result in cell.get("prompt_results", []):
                yield cell["level"], cell["domain"], cell["k"], result
        return
    for entry in _journal_entries(journal_path(path, receipt.payload), receipt.prompt_results["records"]):
        yield entry["level"], entry["domain"], entry["k"], entry["result"]


__all__ = [
    "MAX_RESULT_LINE_BYTES",
    "SCHEMAS",
    "cell_domain",
    "iter_cell_results",
    "iter_prompt_results",
    "read_report",
    "recorded_plugins",
]
