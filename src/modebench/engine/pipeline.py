"""The pipeline of one file evaluation: checkpoint, preflight, grading, publication.

Phases: preflight (validate every record into the ledger), ledger check, journal repair, grading
(grouped commits, journal appended after each commit), finalization (integrity checks, atomic
publication). A run killed at any moment resumes to the same receipt cells and journal.
:func:`run` takes a :class:`RunSpec` whose frozen split, if any, is already resolved
(``modebench.engine.evaluate`` resolves it); nothing here checks an option again.
"""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any

from modebench._datasets.frozen import open_frozen
from modebench.backends import Grader, make_grader
from modebench.engine import ledger as _ledger
from modebench.engine.checkpoint import (
    check_ledger,
    check_plugins,
    graded_rows,
    plugins_of,
    rederive_pending,
    repair_journal,
)
from modebench.engine.grading import Grading, Journal, grade_pending
from modebench.engine.preflight import event, run_preflight
from modebench.engine.spec import RunSpec
from modebench.identity import digest_json, file_sha256, software_identity
from modebench.intake.lines import input_file, raw_lines
from modebench.intake.preflight import now_iso
from modebench.intake.shards import WHOLE
from modebench.isolation.pool import ParallelGrader
from modebench.publish import atomic_output
from modebench.receipt.reader import read_report
from modebench.receipt.records import ReceiptMeta, Summary
from modebench.receipt.schema import CHECKPOINT_SCHEMA, JOURNAL_NAME, REPORT_SCHEMA
from modebench.receipt.tallies import Cells, StatusTally, tally_results
from modebench.receipt.writer import journal_reference, receipt_text, shard_receipt_text, with_plugins
from modebench.validation import InputError, output_exists

__all__ = ["run"]


def run(spec: RunSpec, *, software: dict[str, Any] | None = None) -> Summary:
    """Evaluate ``spec``'s input into its v4 receipt (or shard receipt); return the summary.

    ``software``: the software identity to record (default: this installation's; 0.4.0's
    ``streaming.software_identity`` is passed in by ``modebench.streaming``, looked up there).

    After a completed run the ledger is removed (the journal the receipt names stays) unless
    ``keep_checkpoint``. Resuming a run whose receipt is already published returns its summary.
    """
    source = input_file(spec.source)
    output, directory = spec.output, spec.work_dir
    if output.exists() and not spec.execution.resume:
        raise output_exists(output)
    if spec.spooled and source != directory / _ledger.SPOOL_NAME:
        raise InputError("a spooled input must be the checkpoint's own copy")
    if directory in (output, source) or (directory in source.parents and not spec.spooled):
        raise InputError("checkpoint must not contain the input file or occupy an output path")
    # Everything that can fail on bad input before grading is checked before the checkpoint
    # exists, and hashing the input happens here too: a failure leaves nothing behind, and a
    # kill before the first commit has little to interrupt.
    frozen = None
    options = spec.options
    if options.config is not None:
        root = options.data_root if options.data_root is not None else "data"
        # A custom registry enters the resume identity through the split record and the
        # manifest hash of its data root (the cache manifest holds the registry's bytes).
        frozen = open_frozen(
            root, options.config, options.split, options.allow_partial, spec.registry, options.limit
        )
        if spec.prompt_ids is not None:
            spec.prompt_ids.require_within(set(frozen.expected_ids), f"{options.config}/{options.split}")
    execution = spec.execution
    context: AbstractContextManager[Grader] = (
        make_grader(execution.backend, execution.workers, execution.cluster_address)
        if execution.grader is None
        else nullcontext(execution.grader)
    )
    with context as active:
        # The workers start first: their start-up (interpreter, imports) overlaps the software
        # identity (source hashes, git, package versions), the input's hash and the checkpoint.
        active.prestart()
        if isinstance(active, ParallelGrader) and frozen is None and spec.prompt_ids is None:
            _prime(active, spec, source)
        software = software if software is not None else software_identity()
        bound = spec.identity(file_sha256(source), frozen, software)
        if output.exists():
            summary = _finished(spec, bound, frozen is not None)
            if summary is None:
                raise output_exists(output)
            return summary
        with _ledger.checkpoint(directory, execution.resume, spooled=spec.spooled) as ledger:
            try:
                summary = _run(ledger, spec, source, software, frozen, bound, active)
            except Exception:
                # A checkpoint whose preflight failed holds nothing graded: remove it so that a
                # corrected input can simply be run again (the reference leaves it behind).
                if not (ledger.has("phase") and ledger.get("phase") != "preflight"):
                    ledger.db.close()
                    _ledger.discard(directory)
                raise
    if not spec.options.keep_checkpoint:
        _ledger.drop_ledger(directory)
    return summary


def _prime(pool: ParallelGrader, spec: RunSpec, source: Path) -> None:
    """Send the input's first preflight request now (``ParallelGrader.prime``): the worker
    preflights those lines while the software identity is made, the input hashed and the
    checkpoint opened. ``run_preflight`` takes the answer only if its first request is the same;
    a problem reading the input is left for it to report, in its place."""
    lines = raw_lines(source)
    try:
        pool.prime(spec.run, lines)
    except (OSError, ValueError):
        pass
    finally:
        lines.close()


def _summary(output: Path, cells: int, count: int, frozen: bool, status: str, directory: Path) -> Summary:
    return {
        "output": str(output),
        "cells": cells,
        "prompts": count,
        "dataset_kind": "frozen" if frozen else "custom",
        "status": status,
        "work_dir": str(directory),
    }


def _finished(spec: RunSpec, bound: dict[str, Any], frozen: bool) -> Summary | None:
    """The summary of a run already published at the spec's output under this identity, else None.

    A kill after publication leaves the receipt and maybe the ledger; the receipt (with its
    journal verified) proves the run complete, so resuming it only tidies up.
    """
    output, directory = spec.output, spec.work_dir
    try:
        receipt = read_report(output)
    except (ValueError, OSError):
        return None
    execution, reference = receipt.execution, receipt.prompt_results
    if (
        receipt.schema != REPORT_SCHEMA
        or execution is None
        or reference is None
        or execution.get("identity_sha256") != digest_json(bound)
        or (output.parent / reference["path"]).resolve() != directory / JOURNAL_NAME
    ):
        return None
    if (directory / _ledger.LEDGER_NAME).is_file():
        with _ledger.checkpoint(directory, True) as ledger:
            ours = ledger.has("identity") and ledger.get("identity") == bound
            if ours:
                ledger.put("phase", "complete")
                ledger.put("output_sha256", file_sha256(output))
                ledger.commit()
        if ours and not spec.options.keep_checkpoint:
            _ledger.drop_ledger(directory)
    elif not spec.options.keep_checkpoint:
        # A kill inside drop_ledger, after the database went but before the lock did, leaves
        # the ledger's other files beside the journal: tidy them as the finished run would have.
        _ledger.drop_ledger(directory)
    return _summary(output, len(receipt.cells), reference["records"], frozen, receipt.status, directory)


def _start(ledger: _ledger.Ledger, spec: RunSpec, bound: dict[str, Any]) -> None:
    """Check a resumed checkpoint's identity, or start a fresh one."""
    if spec.execution.resume and ledger.has("identity"):
        if ledger.get("identity") != bound:
            raise InputError("resume identity mismatch: input, configuration, dataset, or evaluator changed")
        if ledger.get("output") != str(spec.output):
            raise InputError("resume output destination differs from checkpoint")
        return
    # A fresh run, or a checkpoint killed before its first commit (identity, output, phase,
    # created_at and history are committed together): start from the beginning.
    ledger.put("identity", bound)
    ledger.put("output", str(spec.output))
    ledger.put("phase", "preflight")
    ledger.put("created_at", now_iso())
    ledger.put("history", [])
    ledger.commit()


def _run(
    ledger: _ledger.Ledger,
    spec: RunSpec,
    source: Path,
    software: dict[str, Any],
    frozen: Any,
    bound: dict[str, Any],
    grader: Grader,
) -> Summary:
    selection = spec.shard or WHOLE
    _start(ledger, spec, bound)
    path = ledger.directory / JOURNAL_NAME
    progress = spec.execution.progress
    if ledger.get("phase") == "preflight":
        # Fresh (or restarted) preflight: nothing graded counts, the journal starts empty, and
        # prompts are graded as preflight stores them (``Grading``). The phase stays
        # ``preflight`` until the whole input has passed, so a refused line discards them all.
        ledger.reset_prompts()
        digest, link = repair_journal(ledger, path)
        done = 0
        tallied = tally_results(iter(()), spec.options.unscorable)
        journal = Journal(path, digest, link, done)
        with Grading(ledger, journal, grader, tallied, progress) as grading:
            offer = grading.offer if grading.overlap() else None
            run_preflight(ledger, spec, source, frozen, bound["input_sha256"], grader, offer)
            count = int(ledger.get("count"))  # written moments ago by this invocation
            _history(ledger, grader, done)
            grading.start(selection.size(count))
            grading.finish(selection.size(count), selection)
    else:
        count = check_ledger(ledger, selection)  # an earlier invocation's checkpoint is verified first
        check_plugins(ledger)
        rederive_pending(ledger, spec, frozen, grader, selection)
        done = ledger.completed()
        digest, link = repair_journal(ledger, path)
        _history(ledger, grader, done)
        # Results committed by an earlier invocation are tallied from the ledger; the rest as graded.
        tallied = tally_results(graded_rows(ledger) if done else iter(()), spec.options.unscorable)
        journal = Journal(path, digest, link, done)
        grade_pending(ledger, journal, selection.size(count), grader, progress, selection, tallied)
    event(spec.execution.progress, "finalizing", count, count)
    if file_sha256(source) != bound["input_sha256"]:
        raise InputError("input changed during evaluation; no final output published")
    if file_sha256(path) != digest.hexdigest():
        raise InputError("result journal changed during evaluation; no final output published")
    software = with_plugins(software, plugins_of(ledger))
    status, published = _publish(ledger, spec, path, software, count, tallied)
    ledger.put("phase", "complete")
    ledger.put("output_sha256", file_sha256(spec.output))
    ledger.commit()
    event(spec.execution.progress, "complete", count, count)
    return _summary(spec.output, published, count, frozen is not None, status, ledger.directory)


def _history(ledger: _ledger.Ledger, grader: Grader, done: int) -> None:
    """Record this invocation in the run's history (the receipt's ``execution.history``)."""
    history = ledger.get("history")
    history.append({"started_at": now_iso(), "workers": grader.workers, "resumed_prompts": done})
    ledger.put("history", history)
    ledger.commit()


def _run_meta(ledger: _ledger.Ledger, software: dict[str, Any], bound: dict[str, Any]) -> ReceiptMeta:
    return {
        "created_at": ledger.get("created_at"),
        "records_sha256": ledger.get("records_sha256"),
        "input_sha256": ledger.get("identity")["input_sha256"],
        "software": software,
        "run": ledger.get("run"),
        "generation_metadata_status": ledger.get("generation_metadata_status"),
        "run_sha256": ledger.get("run_sha256"),
        "dataset": ledger.get("dataset"),
        "execution": {
            "checkpoint_schema": CHECKPOINT_SCHEMA,
            "identity_sha256": digest_json(bound),
            "history": ledger.get("history"),
        },
    }


def _publish(
    ledger: _ledger.Ledger,
    spec: RunSpec,
    journal: Path,
    software: dict[str, Any],
    count: int,
    tallied: tuple[StatusTally, Cells],
) -> tuple[str, int]:
    """Write the receipt (a shard's: the identity an unsharded run binds, and this shard's journal)."""
    statuses, cells = tallied
    threshold = spec.options.min_defined_prompts
    shard = spec.shard
    if shard is None:
        meta = _run_meta(ledger, software, ledger.get("identity"))
        text, status = receipt_text(
            meta, statuses, cells, threshold, journal_reference(journal, spec.output, count)
        )
        _ledger.sweep_temporaries(spec.output, older_than=60.0)  # a publication cut short by a kill
    else:
        whole = {key: value for key, value in ledger.get("identity").items() if key != "shard"}
        meta = _run_meta(ledger, software, whole)
        reference = journal_reference(journal, spec.output, shard.size(count))
        text, status = shard_receipt_text(
            meta, (shard.index, shard.count, count), statuses, threshold, reference
        )
    with atomic_output(spec.output) as handle:
        handle.write(text)
    return status, len(cells)
