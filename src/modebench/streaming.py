"""Streaming, checkpointed evaluation of a JSONL file into a hash-bound v4 receipt.

Phases: preflight (validate every record into the ledger), ledger check, journal repair,
grading (grouped commits, journal appended after each commit), finalization (integrity checks,
atomic publication). A run killed at any moment resumes to the same receipt cells and journal.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import stat
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any

from modebench import _ledger, _prepare, domains, metrics
from modebench._ledger import checkpoint
from modebench.backends import Grader, make_grader
from modebench.backends.shard import WHOLE, Shard, shard_receipt_text
from modebench.diagnostics import VerifierExecutionError
from modebench.evaluation import (
    Options,
    Preflight,
    StatusTally,
    now_iso,
    prompt_result,
    tally_result,
    tally_results,
    v4_cells,
)
from modebench.failures import policy
from modebench.identity import (
    canonical,
    digest_json,
    file_sha256,
    sha256_text,
    software_identity,
    with_plugins,
)
from modebench.metrics import CellAccumulator
from modebench.parallel import MAX_WORKERS
from modebench.publish import atomic_output
from modebench.suite.ids import PromptIds
from modebench.validation import InputError, OptionError, loads, positive_integer

MAX_RESPONSES_PER_PROMPT = 4096
MAX_INPUT_LINE_BYTES = 16_777_216
CHECKPOINT_SCHEMA = "modebench-checkpoint-v1"
REPORT_SCHEMA = "modebench-saved-responses-v4"
RESULT_FORMAT = "modebench-prompt-result-v1"
JOURNAL_NAME = "results.jsonl"
#: Ledger info key of the origins of the third-party plug-ins a run uses (absent for built-ins).
PLUGINS_KEY = "plugins"
#: Ledger info written at the end of preflight and bound by ``preflight_sha256``.
PREFLIGHT_KEYS = ("records_sha256", "run", "generation_metadata_status", "run_sha256", "dataset", "count")
#: Grading commits at most this many prompts, or this many seconds of work, per transaction.
COMMIT_PROMPTS = 128
COMMIT_SECONDS = 0.5

Progress = Callable[[dict[str, Any]], None]

__all__ = [
    "CHECKPOINT_SCHEMA",
    "CellAccumulator",
    "atomic_output",
    "checkpoint",
    "MAX_INPUT_LINE_BYTES",
    "MAX_RESPONSES_PER_PROMPT",
    "REPORT_SCHEMA",
    "canonical",
    "checkpoint_identity",
    "evaluate_file",
    "file_sha256",
    "iter_jsonl",
    "software_identity",
    "work_directory",
]


def iter_jsonl(path: str | os.PathLike[str], digest: Any = None) -> Iterator[tuple[int, Any]]:
    """Yield ``(line_number, parsed)`` for non-blank lines; feed every raw byte to ``digest``."""
    for number, line in _raw_lines(path, digest):
        yield number, _decoded(number, line)


def _raw_lines(path: str | os.PathLike[str], digest: Any = None) -> Iterator[tuple[int, bytes]]:
    """``(line_number, bytes)`` of the non-blank lines; an over-long line ends the stream (as a
    prefix of one byte more than the limit, which :func:`_decoded` refuses)."""
    with open(path, "rb") as handle:
        number = 0
        while True:
            line = handle.readline(MAX_INPUT_LINE_BYTES + 1)
            if not line:
                return
            number += 1
            if digest is not None:
                digest.update(line)
            if len(line) > MAX_INPUT_LINE_BYTES:
                yield number, line
                return
            if line.strip():
                yield number, line


def _decoded(number: int, line: bytes) -> Any:
    """One input line's record, with the input-level checks (size, strict JSON, responses)."""
    if len(line) > MAX_INPUT_LINE_BYTES:
        raise InputError(f"line {number}: exceeds {MAX_INPUT_LINE_BYTES} byte input limit")
    try:
        value = loads(line)
    except InputError as exc:
        raise InputError(f"line {number}: {exc}") from None
    if (
        isinstance(value, dict)
        and isinstance(value.get("responses"), list)
        and len(value["responses"]) > MAX_RESPONSES_PER_PROMPT
    ):
        raise InputError(f"line {number}: exceeds {MAX_RESPONSES_PER_PROMPT} responses per prompt")
    return value


def _record_id(record: Any) -> str | None:
    """A record's prompt id as the evaluator names it, or ``None`` if it has no valid one."""
    ident = record.get("id") if isinstance(record, dict) else None
    if isinstance(ident, bool) or not isinstance(ident, (str, int)):
        return None
    return str(ident)


def _event(progress: Progress | None, phase: str, done: int, total: int | None) -> None:
    if progress is not None:
        progress({"phase": phase, "completed_prompts": done, "total_prompts": total})


def checkpoint_identity(
    input_sha: str, options: dict[str, Any], frozen: Any, software: dict[str, Any], shard: Shard | None = None
) -> dict[str, Any]:
    identity = {
        "schema": CHECKPOINT_SCHEMA,
        "input_sha256": input_sha,
        "options": options,
        "frozen_split": frozen.record if frozen is not None else None,
        "manifest_sha256": frozen.manifest_sha256 if frozen is not None else None,
        "software": {key: value for key, value in software.items() if key != "git"},
        "input_line_limit": MAX_INPUT_LINE_BYTES,
        "responses_per_prompt_limit": MAX_RESPONSES_PER_PROMPT,
    }
    if shard is not None:
        # A shard's checkpoint resumes only as the same shard; the merged receipt names the
        # identity without this key, which is the unsharded run's.
        identity["shard"] = [shard.index, shard.count]
    return identity


def input_file(path: str | os.PathLike[str]) -> Path:
    """The absolute path of an input that must be a readable regular file.

    Checked before anything is created, so a bad path leaves nothing behind; a FIFO or device
    would be read twice (hash, then validation) and may never end, so it is refused by name.
    """
    given = Path(path)
    try:
        source = given.resolve()
    except RuntimeError:  # Python < 3.13 reports a symlink loop this way
        raise InputError(f"[Errno 40] Too many levels of symbolic links: {str(given.absolute())!r}") from None
    info = os.stat(source)  # a missing file or dangling symlink: the OS error names the path
    if stat.S_ISDIR(info.st_mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(source))
    if not stat.S_ISREG(info.st_mode):
        raise InputError(f"input must be a regular file: {source}")
    with open(source, "rb"):  # unreadable: the OS error names the path
        pass
    return source


def work_directory(output: Path, work_dir: str | os.PathLike[str] | None) -> Path:
    """The checkpoint directory: ``work_dir``, else ``<output>.work`` beside the (resolved) output."""
    return Path(work_dir).resolve() if work_dir is not None else output.with_name(output.name + ".work")


def evaluate_file(
    input_path: str | os.PathLike[str],
    output_path: str | os.PathLike[str],
    *,
    min_defined_prompts: Any = metrics.DEFAULT_MIN_DEFINED_PROMPTS,
    run: Any = None,
    data_root: Any = None,
    config: Any = None,
    split: Any = "eval",
    allow_partial: Any = False,
    registry: Any = None,
    work_dir: str | os.PathLike[str] | None = None,
    resume: bool = False,
    progress: Progress | None = None,
    workers: int = 1,
    keep_checkpoint: bool = False,
    backend: str = "local",
    cluster_address: str | None = None,
    shard: Shard | None = None,
    limit: int | None = None,
    spooled: bool = False,
    prompt_ids: PromptIds | None = None,
    unscorable: str = policy.FAIL_RUN,
    grader: Grader | None = None,
) -> dict[str, Any]:
    """Evaluate a JSONL file of saved responses; publish a v4 receipt; return a summary.

    ``limit`` (frozen mode only) admits the first ``limit`` prompts of the split and records the
    limit in the receipt's dataset block (``docs/suites.md``).
    ``spooled``: the input is standard input copied into the work directory (``work_directory``)
    before this call; it is the one file a checkpoint may contain, and goes with the ledger.
    With ``prompt_ids`` only the records it lists are graded (the rest are skipped); the list
    enters the run's identity and the receipt's ``dataset.prompt_ids``.

    ``backend`` picks where grading runs (``local`` worker pool or ``ray`` actors at
    ``cluster_address``); the receipt and journal do not depend on it. With ``shard`` only that
    shard's prompts are graded, into a shard receipt for ``backends.shard.merge``.

    ``grader`` replaces the back end's grader (the caller starts and closes it): ``generate``
    passes one that takes results graded while draws arrived from a memo
    (``modebench.backends.memo``); everything else about the evaluation is unchanged.

    After a completed run the ledger is removed (the journal the receipt names stays) unless
    ``keep_checkpoint``. Resuming a run whose receipt is already published returns its summary.
    """
    positive_integer(workers, "workers")
    if backend == "local" and workers > MAX_WORKERS:
        raise InputError(f"workers must be between 1 and {MAX_WORKERS}")
    source = input_file(input_path)
    output = Path(output_path).resolve()
    directory = work_directory(output, work_dir)
    if output.exists() and not resume:
        raise InputError(f"output already exists: {output}")
    if spooled and source != directory / _ledger.SPOOL_NAME:
        raise InputError("a spooled input must be the checkpoint's own copy")
    if directory in (output, source) or (directory in source.parents and not spooled):
        raise InputError("checkpoint must not contain the input file or occupy an output path")
    software = software_identity()
    raw_options = {
        "min_defined_prompts": min_defined_prompts,
        "run": run,
        "config": config,
        "split": split,
        "allow_partial": allow_partial,
    }
    if prompt_ids is not None:  # absent otherwise: the identity of every other run is unchanged
        raw_options["prompt_ids"] = prompt_ids.ordered()
    # Everything that can fail on bad input before grading is checked before the checkpoint
    # exists, and hashing the input happens here too: a failure leaves nothing behind, and a
    # kill before the first commit has little to interrupt.
    options = Options.build(data_root=data_root, **{**raw_options, "prompt_ids": prompt_ids})
    if limit is not None:  # only then: an unlimited run keeps its 0.4.0 checkpoint identity
        positive_integer(limit, "limit", option=True)
        if options.config is None:
            raise OptionError("limit_requires_config", "limit requires a frozen config")
        raw_options["limit"] = limit
    if policy.check(unscorable) != policy.FAIL_RUN:
        if shard is not None:
            raise OptionError(
                "unscorable_shard", "the unscorable policy of a sharded run is not supported; use fail-run"
            )
        # Only a non-default policy enters the identity, so a default run's checkpoint identity
        # (and the receipt's execution.identity_sha256) stays what 0.4.0 computes.
        raw_options["unscorable"] = unscorable
    if registry is not None and options.config is None:
        raise InputError("registry requires a frozen config")
    frozen = None
    if options.config is not None:
        from modebench.data import open_frozen

        root = options.data_root if options.data_root is not None else "data"
        # A custom registry enters the resume identity through the split record and the
        # manifest hash of its data root (the cache manifest holds the registry's bytes).
        frozen = open_frozen(root, options.config, options.split, options.allow_partial, registry, limit)
        if prompt_ids is not None:
            prompt_ids.require_within(set(frozen.expected_ids), f"{options.config}/{options.split}")
    identity = loads(
        canonical(checkpoint_identity(file_sha256(source), raw_options, frozen, software, shard))
    )
    if output.exists():
        summary = _finished(directory, output, identity, frozen is not None, keep_checkpoint)
        if summary is None:
            raise InputError(f"output already exists: {output}")
        return summary
    context: AbstractContextManager[Grader] = (
        make_grader(backend, workers, cluster_address) if grader is None else nullcontext(grader)
    )
    with context as active:
        active.prestart()  # worker warm-up (SymPy import) overlaps the checkpoint's start
        with _ledger.checkpoint(directory, resume, spooled=spooled) as ledger:
            try:
                summary = _run(
                    ledger,
                    source,
                    output,
                    software,
                    options,
                    frozen,
                    identity,
                    resume,
                    progress,
                    active,
                    shard,
                )
            except Exception:
                # A checkpoint whose preflight failed holds nothing graded: remove it so that a
                # corrected input can simply be run again (the reference leaves it behind).
                if not (ledger.has("phase") and ledger.get("phase") != "preflight"):
                    ledger.db.close()
                    _ledger.discard(directory)
                raise
    if not keep_checkpoint:
        _ledger.drop_ledger(directory)
    return summary


def _summary(
    output: Path, cells: int, count: int, frozen: bool, status: str, directory: Path
) -> dict[str, Any]:
    return {
        "output": str(output),
        "cells": cells,
        "prompts": count,
        "dataset_kind": "frozen" if frozen else "custom",
        "status": status,
        "work_dir": str(directory),
    }


def _finished(
    directory: Path, output: Path, identity: dict[str, Any], frozen: bool, keep_checkpoint: bool
) -> dict[str, Any] | None:
    """The summary of a run already published at ``output`` under this identity, else None.

    A kill after publication leaves the receipt and maybe the ledger; the receipt (with its
    journal verified) proves the run complete, so resuming it only tidies up.
    """
    from modebench.reporting import read_report

    try:
        receipt = read_report(output)
    except (ValueError, OSError):
        return None
    execution = receipt.get("execution")
    if (
        receipt["schema"] != REPORT_SCHEMA
        or not isinstance(execution, dict)
        or execution.get("identity_sha256") != digest_json(identity)
        or (output.parent / receipt["prompt_results"]["path"]).resolve() != directory / JOURNAL_NAME
    ):
        return None
    if (directory / _ledger.LEDGER_NAME).is_file():
        with _ledger.checkpoint(directory, True) as ledger:
            ours = ledger.has("identity") and ledger.get("identity") == identity
            if ours:
                ledger.put("phase", "complete")
                ledger.put("output_sha256", file_sha256(output))
                ledger.commit()
        if ours and not keep_checkpoint:
            _ledger.drop_ledger(directory)
    return _summary(
        output,
        len(receipt["cells"]),
        receipt["prompt_results"]["records"],
        frozen,
        receipt["evaluation"]["status"],
        directory,
    )


def _run(
    ledger: _ledger.Ledger,
    source: Path,
    output: Path,
    software: dict[str, Any],
    options: Options,
    frozen: Any,
    identity: dict[str, Any],
    resume: bool,
    progress: Progress | None,
    grader: Grader,
    shard: Shard | None = None,
) -> dict[str, Any]:
    selection = shard or WHOLE
    if resume and ledger.has("identity"):
        if ledger.get("identity") != identity:
            raise InputError("resume identity mismatch: input, configuration, dataset, or evaluator changed")
        if ledger.get("output") != str(output):
            raise InputError("resume output destination differs from checkpoint")
    else:
        # A fresh run, or a checkpoint killed before its first commit (identity, output, phase,
        # created_at and history are committed together): start from the beginning.
        ledger.put("identity", identity)
        ledger.put("output", str(output))
        ledger.put("phase", "preflight")
        ledger.put("created_at", now_iso())
        ledger.put("history", [])
        ledger.commit()
    if ledger.get("phase") == "preflight":
        _preflight(ledger, source, options, frozen, identity["input_sha256"], progress, grader)
        count = int(ledger.get("count"))  # written moments ago by this invocation
    else:
        count = _check_ledger(ledger, selection)  # an earlier invocation's checkpoint is verified first
        _check_plugins(ledger)
        _rederive_pending(ledger, options, frozen, grader, selection)
    done = ledger.completed()
    journal = ledger.directory / JOURNAL_NAME
    journal_digest, link = _repair_journal(ledger, journal)
    history = ledger.get("history")
    history.append({"started_at": now_iso(), "workers": grader.workers, "resumed_prompts": done})
    ledger.put("history", history)
    ledger.commit()
    # Results committed by an earlier invocation are tallied from the ledger; the rest as graded.
    statuses, cells = tally(_graded_rows(ledger) if done else iter(()), _policy(identity))
    _grade(
        ledger,
        journal,
        journal_digest,
        link,
        done,
        selection.size(count),
        grader,
        progress,
        selection,
        _policy(identity),
        (statuses, cells),
    )
    _event(progress, "finalizing", count, count)
    if file_sha256(source) != identity["input_sha256"]:
        raise InputError("input changed during evaluation; no final output published")
    if file_sha256(journal) != journal_digest.hexdigest():
        raise InputError("result journal changed during evaluation; no final output published")
    software = with_plugins(software, _plugins_of(ledger))
    if shard is not None:
        status, published = _publish_shard(
            ledger, output, journal, software, options, shard, count, statuses, cells
        )
    else:
        status, published = _publish(ledger, output, journal, software, options, count, statuses, cells)
    ledger.put("phase", "complete")
    ledger.put("output_sha256", file_sha256(output))
    ledger.commit()
    _event(progress, "complete", count, count)
    return _summary(output, published, count, frozen is not None, status, ledger.directory)


def _graded_rows(ledger: _ledger.Ledger) -> Iterator[tuple[int, str, int, dict[str, Any]]]:
    """``(level, domain, k, result)`` of every committed result, in input order."""
    for _seq, level, domain, k, result_json in ledger.rows("level, domain, k, result", "result IS NOT NULL"):
        yield level, domain, k, json.loads(result_json)


def _preflight(
    ledger: _ledger.Ledger,
    source: Path,
    options: Options,
    frozen: Any,
    input_sha: str,
    progress: Progress | None,
    grader: Grader,
) -> None:
    _event(progress, "validating", 0, None)
    ledger.reset_prompts()
    # References are validated on the pool's first worker: no extra process to start.
    preflight = Preflight(options, frozen, validate=grader.reference_check, seen=_ledger.SeenSet(ledger.db))
    input_digest = hashlib.sha256()
    records_digest = hashlib.sha256(b"[")
    seq = 0
    # Phase C (prompt binding) runs as each record is accepted, in one pass, but its first error is
    # raised only after Phases A and B passed for the whole input — the same error, in the same
    # order, as three separate passes: if Phase B passes, every record saw the same run.
    binding_error: InputError | None = None
    ledger.staging = True  # progress commits pack their records on the ledger's helper thread
    wanted = options.prompt_ids
    found: set[str] = set()

    def record(number: int, record: Any) -> None:
        """Validate, bind and store one record in process (the reference path)."""
        nonlocal seq, binding_error
        if wanted is not None:
            ident = _record_id(record)
            if ident is not None and ident not in wanted:
                return  # not selected: neither validated nor graded
            if ident is not None:
                found.add(ident)
        try:
            prepared = preflight.accept(record, f"line {number}")
            raw_text = canonical(record)
        except RecursionError:
            raise InputError(f"line {number}: record is nested too deeply") from None
        records_digest.update((b"," if seq else b"") + raw_text.encode("utf-8"))
        try:
            bound = preflight.bind(prepared)
        except InputError as exc:
            binding_error = binding_error or exc  # the run fails with it: nothing to store
        else:
            bound["record_sha256"] = sha256_text(raw_text)
            plugin_origin = domains.origin(bound["domain"])
            if plugin_origin is not None:  # a third-party domain: its journal lines name the plug-in
                bound["plugin"] = plugin_origin
            ledger.insert(
                seq, bound["level"], bound["domain"], len(record["responses"]), prepared_text(bound, raw_text)
            )
        stored()

    def stored() -> None:
        nonlocal seq
        seq += 1
        if seq % 100 == 0:
            ledger.commit()
            _event(progress, "validating", seq, None)

    prepared_lines = getattr(grader, "prepared_lines", None)
    if prepared_lines is None or frozen is not None or wanted is not None:
        for number, value in iter_jsonl(source, input_digest):
            record(number, value)
    else:
        # Workers preflight the lines (``modebench._prepare``); what needs the whole input's
        # state stays here, in input order. A line a worker did not prepare, or prepared under
        # a run this preflight no longer has, takes the in-process path above.
        assumed = _prepare.assumed_run_digest(options.run)
        seen = preflight.seen
        for number, line, reply in prepared_lines(options.run, _raw_lines(source, input_digest)):
            if reply is not None and preflight.run_digest == assumed:
                level, domain, rid, k, text, start, end = reply
                if seen.claim((level, domain, rid)):
                    # What ``Preflight.accept`` records for a record without inline run.
                    preflight.count += 1
                    preflight.undeclared += 1
                    records_digest.update((b"," if seq else b"") + text[start:end].encode("utf-8"))
                    ledger.insert(seq, level, domain, k, text)
                    stored()
                    continue
            record(number, _decoded(number, line))
    ledger.staging = False
    records_digest.update(b"]")
    if input_digest.hexdigest() != input_sha:
        raise InputError("input changed while validation was running; use a fresh checkpoint")
    if wanted is not None:
        wanted.require_within(found, "the input")
    preflight.finish()
    if binding_error is not None:
        raise binding_error
    meta = {
        "records_sha256": records_digest.hexdigest(),
        **preflight.run_block(),
        "dataset": preflight.dataset_block(),
        "count": seq,
    }
    used = domains.origins(_domains_of(ledger))
    if used:  # kept out of built-in-only checkpoints, so theirs stay as they were
        meta[PLUGINS_KEY] = used
    for key, value in meta.items():
        ledger.put(key, value)
    ledger.put("preflight_sha256", digest_json(meta))
    ledger.put("phase", "grading")
    ledger.commit()
    _event(progress, "validated", seq, seq)


def prepared_text(prepared: Mapping[str, Any], raw_text: str) -> str:
    """``canonical(prepared)``, splicing in ``raw_text`` (``canonical(prepared["raw"])``, already
    made for the records digest) instead of encoding the record, responses and all, again."""
    before = {key: value for key, value in prepared.items() if key < "raw"}
    after = {key: value for key, value in prepared.items() if key > "raw"}
    head = canonical(before)[:-1] + ("," if before else "")
    tail = ("," if after else "") + canonical(after)[1:]
    return f'{head}"raw":{raw_text}{tail}'


def _check_ledger(ledger: _ledger.Ledger, selection: Shard) -> int:
    """Verify the checkpoint before trusting it; return the number of prompts.

    Committed results are verified against the digest chain of their journal lines, so an
    edited result is refused by its sequence number even when its other hashes were recomputed.
    """
    if ledger.db.execute("PRAGMA quick_check").fetchone()[0] != "ok":
        raise InputError("checkpoint integrity check failed")
    meta = {key: ledger.get(key) for key in PREFLIGHT_KEYS}
    if ledger.has(PLUGINS_KEY):
        meta[PLUGINS_KEY] = ledger.get(PLUGINS_KEY)
    if digest_json(meta) != ledger.get("preflight_sha256"):
        raise InputError("checkpoint preflight metadata identity mismatch")
    records = hashlib.sha256(b"[")
    position = 0
    pending_seen = False
    link = _ledger.CHAIN_START
    for seq, level, domain, k, prepared_json, prepared_sha, result_json, stored_link in ledger.rows(
        "level, domain, k, prepared, prepared_sha, result, chain"
    ):
        if seq != position or prepared_sha != _ledger.text_sha(prepared_json):
            raise InputError("checkpoint prepared-record identity mismatch")
        prepared = json.loads(prepared_json)
        if (level, domain, k) != (prepared["level"], prepared["domain"], len(prepared["raw"]["responses"])):
            raise InputError("checkpoint cell identity mismatch")
        raw_text = canonical(prepared["raw"])
        if sha256_text(raw_text) != prepared["record_sha256"]:
            raise InputError("checkpoint input snapshot mismatch")
        records.update((b"," if position else b"") + raw_text.encode("utf-8"))
        if result_json is None:
            if stored_link is not None:
                raise InputError("checkpoint incomplete result identity")
            pending_seen = pending_seen or selection.contains(seq)
        elif pending_seen or not selection.contains(seq):
            raise InputError("checkpoint result identity or ordering mismatch")
        else:
            link = _ledger.chain_link(link, _journal_line(seq, prepared, result_json))
            if stored_link != link:
                raise InputError(
                    f"checkpoint result identity or ordering mismatch: sequence {seq} does not match its digest chain"
                )
        position += 1
    records.update(b"]")
    if position != meta["count"] or records.hexdigest() != meta["records_sha256"]:
        raise InputError("checkpoint input record digest mismatch")
    return position


def _domains_of(ledger: _ledger.Ledger) -> list[str]:
    ledger.flush()
    return [row[0] for row in ledger.db.execute("SELECT DISTINCT domain FROM prompts")]


def _plugins_of(ledger: _ledger.Ledger) -> list[str]:
    """The third-party domains this checkpoint graded (recorded at the end of preflight)."""
    return sorted(ledger.get(PLUGINS_KEY)) if ledger.has(PLUGINS_KEY) else []


def _check_plugins(ledger: _ledger.Ledger) -> None:
    """A resumed run must grade with the very plug-ins its first invocation validated with."""
    if ledger.has(PLUGINS_KEY) and domains.origins(_plugins_of(ledger)) != ledger.get(PLUGINS_KEY):
        raise InputError("resume identity mismatch: input, configuration, dataset, or evaluator changed")


class _NoDuplicates:
    """The seen-set of a re-derivation: duplicates were refused when the records were first read."""

    def __contains__(self, key: object) -> bool:
        return False

    def add(self, key: object) -> None:
        pass


def _rederive_pending(
    ledger: _ledger.Ledger, options: Options, frozen: Any, grader: Grader, selection: Shard
) -> None:
    """Re-derive every prompt still to grade from its raw record and compare with the stored one.

    What grading reads (parsed reference, binding) must follow from the raw record, whatever the
    checkpoint says; a prepared record that does not is refused by its sequence number.
    """
    preflight = Preflight(options, frozen, validate=grader.reference_check, seen=_NoDuplicates())
    preflight.run, preflight.run_digest = ledger.get("run"), ledger.get("run_sha256")
    for seq, prepared_json in ledger.rows("prepared", f"result IS NULL AND {selection.where()}"):
        stored = json.loads(prepared_json)
        try:
            derived = preflight.bind(preflight.accept(stored["raw"], "checkpoint"))
        except (InputError, VerifierExecutionError, KeyError, TypeError):
            derived = None
        if derived is not None:
            derived["label"] = stored.get("label")  # where the record was read: messages only
            derived["record_sha256"] = sha256_text(canonical(stored["raw"]))
        if derived is None or canonical(derived) != prepared_json:
            raise InputError(
                f"checkpoint prepared-record identity mismatch: sequence {seq} does not follow from its raw record"
            )


def _journal_line(seq: int, prepared: dict[str, Any], result_json: str) -> str:
    # The entry is canonical JSON with sorted keys; the stored result text is already canonical.
    # Only prompts of a third-party domain carry ``plugin`` (its origin), between level and
    # record_sha256 in key order.
    plugin_origin = prepared.get("plugin")
    plugin = f'"plugin":{canonical(plugin_origin)},' if plugin_origin is not None else ""
    return (
        f'{{"domain":{canonical(prepared["domain"])},"k":{len(prepared["raw"]["responses"])},'
        f'"level":{prepared["level"]},{plugin}"record_sha256":"{prepared["record_sha256"]}",'
        f'"result":{result_json},"schema":"{RESULT_FORMAT}","sequence":{seq}}}\n'
    )


def _existing_lines(journal: Path) -> Iterator[bytes]:
    """Complete lines of an existing journal (bounded reads; anything but a regular file is ignored)."""
    try:
        handle = open(journal, "rb")  # noqa: SIM115 - closed below
    except FileNotFoundError:
        return
    with handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            return
        while True:
            line = handle.readline(MAX_INPUT_LINE_BYTES * 4)
            if not line.endswith(b"\n"):
                return  # end of file, or a partial line cut by a kill: rebuilt from the ledger
            yield line


def _repair_journal(ledger: _ledger.Ledger, journal: Path) -> tuple[Any, bytes]:
    """Rewrite the journal from committed ledger rows (the ledger is authoritative).

    Every complete line the old journal already holds must equal the line rebuilt from the
    ledger: the journal is a second copy of the committed results, so a result edited in one
    copy only is refused by its sequence number. A missing or cut tail is normal after a kill.
    Returns the running journal digest and the last chain link.
    """
    _ledger.sweep_temporaries(journal)  # a rewrite cut short by a kill
    digest = hashlib.sha256()
    link = _ledger.CHAIN_START
    old = _existing_lines(journal)
    with atomic_output(journal, replace=True) as handle:
        for seq, prepared_json, result_json in ledger.rows("prepared, result", "result IS NOT NULL"):
            line = _journal_line(seq, json.loads(prepared_json), result_json)
            data = line.encode("utf-8")
            previous = next(old, None)
            if previous is not None and previous != data:
                raise InputError(
                    f"checkpoint result identity or ordering mismatch: sequence {seq} disagrees with the result journal"
                )
            handle.write(line)
            digest.update(data)
            link = _ledger.chain_link(link, line)
    return digest, link


def _grade(
    ledger: _ledger.Ledger,
    journal: Path,
    journal_digest: Any,
    link: bytes,
    done: int,
    count: int,
    grader: Grader,
    progress: Progress | None,
    selection: Shard,
    unscorable: str,
    tallied: tuple[StatusTally, dict[CellKey, metrics.CellAccumulator]],
) -> None:
    _event(progress, "grading", done, count)
    if done == count:
        return
    # Ledger rows were written by this module as canonical JSON: the plain decoder suffices.
    # Results are a prefix of the selected prompts, so the next pending one is the done-th.
    where = f"result IS NULL AND {selection.where()}"
    pending = (
        (seq, json.loads(text)) for seq, text in ledger.rows("prepared", where, selection.seq_at(done))
    )
    with open(journal, "a", encoding="utf-8", newline="") as handle:
        group: list[str] = []
        started = time.monotonic()

        def flush() -> None:
            nonlocal done, started
            if not group:
                return
            ledger.commit()  # commit before journal: the journal never runs ahead of the ledger
            handle.write("".join(group))
            handle.flush()
            for line in group:
                journal_digest.update(line.encode("utf-8"))
            finished = len(group)
            group.clear()
            for _ in range(finished):
                done += 1
                _event(progress, "grading", done, count)
            started = time.monotonic()

        statuses, cells = tallied
        for seq, prepared, attempts in grader.results(pending):
            result = prompt_result(prepared, policy.apply(unscorable, attempts))
            result_json = canonical(result)
            # The receipt's cells are tallied as results are made, not read back at publication.
            k = len(prepared["raw"]["responses"])
            tally_result(statuses, cells, (prepared["level"], prepared["domain"], k), result)
            line = _journal_line(seq, prepared, result_json)
            link = _ledger.chain_link(link, line)
            ledger.set_result(seq, result_json, link)
            group.append(line)
            if len(group) >= COMMIT_PROMPTS or time.monotonic() - started >= COMMIT_SECONDS:
                flush()
        flush()
        os.fsync(handle.fileno())


CellKey = tuple[int, str, int]


def tally(
    results: Iterator[tuple[int, str, int, dict[str, Any]]],
    unscorable: str = policy.FAIL_RUN,
) -> tuple[StatusTally, dict[CellKey, metrics.CellAccumulator]]:
    """Attempt statuses and cell accumulators of ``(level, domain, k, prompt result)`` in input order."""
    return tally_results(results, unscorable)  # the same code ``report`` recomputes receipts with


def _policy(identity: dict[str, Any]) -> str:
    """The run's unscorable policy, as its identity binds it (absent: the 0.4.0 default)."""
    return str(identity["options"].get("unscorable", policy.FAIL_RUN))


def receipt_text(
    meta: dict[str, Any],
    statuses: StatusTally,
    cells: dict[CellKey, metrics.CellAccumulator],
    threshold: int,
    prompt_results: dict[str, Any],
) -> tuple[str, str]:
    """The v4 receipt's bytes and status; ``meta`` holds the run's bound identity fields."""
    healthy = statuses.healthy
    header = {
        "schema": REPORT_SCHEMA,
        "created_at": meta["created_at"],
        "records_sha256": meta["records_sha256"],
        "input_sha256": meta["input_sha256"],
        "software": meta["software"],
        "run": meta["run"],
        "generation_metadata_status": meta["generation_metadata_status"],
        "run_sha256": meta["run_sha256"],
        "dataset": meta["dataset"],
        "evaluation": statuses.block(threshold),
        "execution": meta["execution"],
        "prompt_results": prompt_results,
    }
    cell_texts = [canonical(cell) for cell in v4_cells(cells, threshold, healthy)]
    text = canonical(header)[:-1] + ',"cells":[' + ",".join(cell_texts) + "]}\n"
    return text, header["evaluation"]["status"]


def _run_meta(ledger: _ledger.Ledger, software: dict[str, Any], identity: dict[str, Any]) -> dict[str, Any]:
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
            "identity_sha256": digest_json(identity),
            "history": ledger.get("history"),
        },
    }


def journal_reference(journal: Path, output: Path, records: int) -> dict[str, Any]:
    return {
        "format": RESULT_FORMAT,
        "records": records,
        "path": Path(os.path.relpath(journal, output.parent)).as_posix(),
        "sha256": file_sha256(journal),
    }


def _publish(
    ledger: _ledger.Ledger,
    output: Path,
    journal: Path,
    software: dict[str, Any],
    options: Options,
    count: int,
    statuses: StatusTally,
    cells: dict[CellKey, metrics.CellAccumulator],
) -> tuple[str, int]:
    meta = _run_meta(ledger, software, ledger.get("identity"))
    text, status = receipt_text(
        meta, statuses, cells, options.min_defined_prompts, journal_reference(journal, output, count)
    )
    _ledger.sweep_temporaries(output, older_than=60.0)  # a publication cut short by a kill
    with atomic_output(output) as handle:
        handle.write(text)
    return status, len(cells)


def _publish_shard(
    ledger: _ledger.Ledger,
    output: Path,
    journal: Path,
    software: dict[str, Any],
    options: Options,
    shard: Shard,
    count: int,
    statuses: StatusTally,
    cells: dict[CellKey, metrics.CellAccumulator],
) -> tuple[str, int]:
    """A shard receipt: the run's identity as an unsharded run would bind it, and this shard's journal."""
    whole = {key: value for key, value in ledger.get("identity").items() if key != "shard"}
    meta = _run_meta(ledger, software, whole)
    reference = journal_reference(journal, output, shard.size(count))
    text, status = shard_receipt_text(meta, shard, count, statuses, options.min_defined_prompts, reference)
    with atomic_output(output) as handle:
        handle.write(text)
    return status, len(cells)


# ModeBench 0.4.0 surface names (docs/compatibility.md).
from modebench import evaluation  # noqa: E402
from modebench._ledger import SeenSet as DiskSeen  # noqa: E402
from modebench.diagnostics import UNSCORABLE  # noqa: E402
from modebench.metrics import POOLED, effective_modes, prompt_mode_diversity  # noqa: E402

__all__ += ["DiskSeen", "POOLED", "UNSCORABLE", "effective_modes", "evaluation", "prompt_mode_diversity"]
