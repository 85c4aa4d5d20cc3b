"""Shards of one evaluation and their merge into the receipt an unsharded run would write.

Shard I of N grades the prompts at input positions p with p mod N = I − 1 (round robin keeps
every cell spread over all shards). Each shard validates the whole input, so every shard binds
the same input, records, run and dataset hashes as the unsharded run; ``merge`` checks that the
shards agree on all of them and cover every position exactly once, interleaves their journals by
position into the unsharded journal, and recomputes the cells from it.
"""

from __future__ import annotations

import heapq
import os
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, cast

from modebench._words import counted
from modebench.diagnostics import VerifierExecutionError
from modebench.guard import bounded_lines, open_regular, read_capped, sibling_journal
from modebench.identity import file_sha256
from modebench.intake.shards import WHOLE, Shard, parse_shard
from modebench.publish import atomic_output, destination
from modebench.receipt.reader import incomplete_entry
from modebench.receipt.records import ExecutionBlock, ReceiptMeta
from modebench.receipt.schema import JOURNAL_NAME, MAX_RESULT_LINE_BYTES, RESULT_FORMAT, SHARD_SCHEMA
from modebench.receipt.tallies import tally_results
from modebench.receipt.writer import journal_reference, receipt_text, shard_receipt_text
from modebench.validation import InputError, loads, output_exists

#: Receipt fields every shard of one run must share (created_at and history may differ).
_SHARED = ("records_sha256", "input_sha256", "software", "run", "generation_metadata_status", "run_sha256")

__all__ = ["SHARD_SCHEMA", "WHOLE", "Shard", "merge", "parse_shard", "shard_receipt_text"]


def _read_shard(path: Path) -> dict[str, Any]:
    try:
        payload = loads(read_capped(path, "receipt"))
    except OSError as exc:
        raise InputError(f"{path}: cannot read shard receipt: {exc.strerror or exc}") from None
    except InputError as exc:
        if str(exc).startswith(f"{path}:"):
            raise
        raise InputError(f"{path}: {exc}") from None
    if not isinstance(payload, dict) or payload.get("schema") != SHARD_SCHEMA:
        raise InputError(f"{path}: not a shard receipt (schema {SHARD_SCHEMA})")
    try:
        shard = Shard(int(payload["shard"]["index"]), int(payload["shard"]["count"]))
        int(payload["shard"]["total_records"])
        reference = payload["prompt_results"]
        journal = path.resolve().parent / sibling_journal(path, reference["path"])
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(f"{path}: incomplete shard receipt: {exc}") from None
    if not journal.is_file() or file_sha256(journal) != reference["sha256"]:
        raise InputError(f"{path}: shard journal {journal} is missing or does not match its hash")
    payload["_shard"], payload["_journal"] = shard, journal
    return payload


def _journal_lines(
    path: Path, shard: Shard, records: int, source: Path
) -> Iterator[tuple[int, str, str, dict[str, Any]]]:
    """``(sequence, line, where, entry)`` per line of a shard journal, each line's structure checked.

    The journal's hash matched its receipt, but the receipt is the user's file too: every line is
    checked here, before the tally reads it, so a crafted line is an error naming file and line.
    """
    position = 0
    with open_regular(path, "journal") as handle:
        for number, raw in enumerate(bounded_lines(handle, path, MAX_RESULT_LINE_BYTES), start=1):
            where = f"{source}: shard journal {path} line {number}"
            try:
                entry = loads(raw)
                line = raw.decode("utf-8")
            except (InputError, UnicodeDecodeError) as exc:
                raise InputError(f"{where}: {exc}") from None
            if not isinstance(entry, dict) or entry.get("schema") != RESULT_FORMAT:
                raise InputError(f"{where}: not a detailed-result entry ({RESULT_FORMAT})")
            seq = entry.get("sequence")
            if seq != shard.seq_at(position) or isinstance(seq, bool):
                raise InputError(f"{where}: holds position {seq!r}, expected {shard.seq_at(position)}")
            for field, kind in (("level", int), ("domain", str), ("k", int), ("result", dict)):
                if not isinstance(entry.get(field), kind) or isinstance(entry.get(field), bool):
                    raise InputError(f"{where}: detailed-result entry has no valid {field}")
            position += 1
            yield seq, line, where, entry
    if position != records:
        raise InputError(
            f"{source}: shard journal holds {counted(position, 'prompt')}, its receipt says {records}"
        )


def _check_family(shards: list[tuple[Path, dict[str, Any]]]) -> tuple[int, int]:
    first_path, first = shards[0]
    count, total = first["_shard"].count, first["shard"]["total_records"]
    for path, payload in shards[1:]:
        for field in (*_SHARED, "dataset", "min_defined_prompts"):
            if payload.get(field) != first.get(field):
                raise InputError(f"{path} and {first_path} come from different runs: {field} differs")
        if payload["execution"]["identity_sha256"] != first["execution"]["identity_sha256"]:
            raise InputError(f"{path} and {first_path} come from different runs: evaluation identity differs")
        if (payload["_shard"].count, payload["shard"]["total_records"]) != (count, total):
            raise InputError(f"{path} and {first_path} split the input differently")
    seen: dict[int, Path] = {}
    for path, payload in shards:
        index = payload["_shard"].index
        if index in seen:
            raise InputError(f"shard {index}/{count} given twice: {seen[index]} and {path}")
        seen[index] = path
    missing = [f"{index}/{count}" for index in range(1, count + 1) if index not in seen]
    if missing:
        raise InputError(f"missing shard(s): {', '.join(missing)}")
    return count, total


def merge(
    shard_paths: Sequence[str | os.PathLike[str]], output_path: str | os.PathLike[str]
) -> dict[str, Any]:
    """Merge shard receipts into the v4 receipt and journal of the unsharded run; a summary."""
    if not shard_paths:
        raise InputError("merge needs at least one shard receipt")
    output = destination(output_path)  # a link there is refused, never followed
    if output.exists():
        raise output_exists(output)
    directory = output.with_name(output.name + ".work")
    if directory.exists():
        raise InputError(f"work directory already exists: {directory}")
    shards = [(Path(path), _read_shard(Path(path))) for path in shard_paths]
    shards.sort(key=lambda item: item[1]["_shard"].index)
    _count, total = _check_family(shards)
    streams = [
        _journal_lines(payload["_journal"], payload["_shard"], payload["prompt_results"]["records"], path)
        for path, payload in shards
    ]
    directory.mkdir(parents=True)
    journal = directory / JOURNAL_NAME

    at = [""]  # the line the tally is reading, for its errors

    def entries(handle: Any) -> Iterator[tuple[int, str, int, dict[str, Any]]]:
        expected = 0
        for seq, line, where, entry in heapq.merge(*streams, key=lambda item: item[0]):
            if seq != expected:
                raise InputError(f"shards do not cover input position {expected}")
            handle.write(line)
            at[0] = where
            yield entry["level"], entry["domain"], entry["k"], entry["result"]
            expected += 1
        if expected != total:
            raise InputError(f"shards cover {expected} of {total} input positions")

    try:
        with atomic_output(journal) as handle:
            try:
                statuses, cells = tally_results(entries(handle))
            except (
                KeyError,
                TypeError,
                IndexError,
                AttributeError,
                ValueError,
                VerifierExecutionError,
            ) as exc:
                if isinstance(exc, InputError):
                    raise
                raise InputError(f"{at[0]}: {incomplete_entry(exc)}") from None
        first = shards[0][1]
        meta = cast(ReceiptMeta, {key: first[key] for key in (*_SHARED, "dataset")})
        meta["created_at"] = min(payload["created_at"] for _, payload in shards)
        history = [entry for _, payload in shards for entry in payload["execution"]["history"]]
        meta["execution"] = cast(ExecutionBlock, {**first["execution"], "history": history})
        text, status = receipt_text(
            meta, statuses, cells, first["min_defined_prompts"], journal_reference(journal, output, total)
        )
        with atomic_output(output) as handle:
            handle.write(text)
    except BaseException:
        shutil.rmtree(directory, ignore_errors=True)
        raise
    return {
        "output": str(output),
        "cells": len(cells),
        "prompts": total,
        "shards": len(shards),
        "status": status,
    }
