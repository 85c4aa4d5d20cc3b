"""Writing the format: journal lines, the v4 receipt, a shard receipt, and the v3 failure receipt.

Every byte here is pinned by ModeBench 0.4.0's receipts (``docs/receipts.md``): canonical JSON,
the header in a fixed order, the cells after it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from modebench import domains, metrics
from modebench.identity import canonical, file_sha256
from modebench.receipt.records import JournalReference, ReceiptMeta
from modebench.receipt.schema import FAILURE_SCHEMA, REPORT_SCHEMA, RESULT_FORMAT, SHARD_SCHEMA
from modebench.receipt.tallies import Cells, StatusTally, v4_cells

__all__ = [
    "failure_receipt_text",
    "journal_line",
    "journal_reference",
    "prompt_result",
    "receipt_text",
    "shard_receipt_text",
    "with_plugins",
]


def journal_line(seq: int, prepared: Mapping[str, Any], result_json: str) -> str:
    """One journal line of a bound record and its (already canonical) result text: the canonical
    JSON of a :class:`~modebench.receipt.records.JournalLine`, which the reader returns."""
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


def journal_reference(journal: Path, output: Path, records: int) -> JournalReference:
    """The receipt's ``prompt_results`` for ``journal`` (its path relative to the receipt)."""
    return {
        "format": RESULT_FORMAT,
        "records": records,
        "path": Path(os.path.relpath(journal, output.parent)).as_posix(),
        "sha256": file_sha256(journal),
    }


def receipt_text(
    meta: ReceiptMeta,
    statuses: StatusTally,
    cells: Cells,
    threshold: int,
    prompt_results: JournalReference,
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


def shard_receipt_text(
    meta: ReceiptMeta,
    shard: tuple[int, int, int],
    statuses: StatusTally,
    threshold: int,
    prompt_results: JournalReference,
) -> tuple[str, str]:
    """A shard receipt's bytes and status (``failed`` when any of its attempts is unscorable).

    ``shard``: ``(index, count, total_records)``.
    """
    index, count, total = shard
    status = "completed" if statuses.healthy else "failed"
    payload = {
        "schema": SHARD_SCHEMA,
        "shard": {"index": index, "count": count, "total_records": total},
        "status": status,
        "status_counts": dict(sorted(statuses.counts.items())),
        "min_defined_prompts": threshold,
        **meta,
        "prompt_results": prompt_results,
    }
    return canonical(payload) + "\n", status


def failure_receipt_text(software: dict[str, Any], failure: Any, input_sha256: str) -> str:
    """The v3 failure receipt of a run whose reference validation could not run (0.4.0's bytes)."""
    receipt = {
        "schema": FAILURE_SCHEMA,
        "software": software,
        "evaluation": {"status": "failed"},
        "failure": failure,
        "cells": [],
        "input_sha256": input_sha256,
    }
    return json.dumps(receipt, indent=2) + "\n"


def with_plugins(software: dict[str, Any], used: Iterable[str]) -> dict[str, Any]:
    """``software`` plus ``plugins`` (the origin of each third-party domain in ``used``).

    A run over the built-in domains only gets ``software`` back unchanged, so its receipt is
    byte-for-byte what it was before plug-ins existed (``docs/evaluation.md``).
    """
    found = domains.origins(used)
    return {**software, "plugins": found} if found else software


def prompt_result(prepared: Mapping[str, Any], attempts: list[dict[str, Any]]) -> dict[str, Any]:
    """The per-prompt result object shared by v3 receipts and the v4 journal."""
    binding = prepared["binding"]
    return {
        "id": prepared["id"],
        "reference_sha256": binding["reference_sha256"],
        "prompt_sha256": binding["prompt_sha256"],
        "prompt_profile": binding["prompt_profile"],
        "draws": [{"attempts": attempts}],
        **metrics.prompt_metrics(attempts),
    }
