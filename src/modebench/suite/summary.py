"""The suite summary: one small JSON file that gathers the receipts of a multi-configuration run.

Schema ``modebench-suite-v1`` (documented field by field in ``docs/suites.md``)::

    {"schema": "modebench-suite-v1", "status": "completed" | "failed", "split": "eval",
     "registry": null | "<as given>", "limit": null | N, "input_directory": "<as given>",
     "software": {"modebench_version": "…"},
     "configs": [{"config", "status", "receipt", "receipt_sha256", "input", "input_sha256",
                  "journal", "journal_sha256", "dataset_sha256", "prompts", "expected_prompts",
                  "complete", "cells": [{"level", "domain", "k", "accuracy", "pass_at_k",
                                         "distinct_at_k", "pcmd", "reportable"}]}]}

Paths (``receipt``, ``journal``) are relative to the summary's directory, so a suite directory
can be moved as a whole. Reading a summary re-verifies every receipt (its SHA-256, then the
receipt's own journal check) and that the receipt's cells are the headline numbers listed here.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from modebench.identity import file_sha256
from modebench.publish import atomic_output
from modebench.receipt.reader import read_report
from modebench.validation import InputError, loads

__all__ = ["SCHEMA", "SUMMARY_NAME", "config_entry", "is_summary", "read_summary", "write_summary"]

SCHEMA = "modebench-suite-v1"
#: The summary's file name inside the suite's output directory.
SUMMARY_NAME = "suite.json"


def _cells(receipt: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "level": cell["level"],
            "domain": cell["domain"],
            "k": cell["k"],
            "accuracy": cell["accuracy"],
            "pass_at_k": cell["pass_at_k"],
            "distinct_at_k": cell["distinct_at_k"],
            "pcmd": cell["pcmd"]["d_mode"],
            "reportable": bool(cell["pcmd"]["reportable"]),
        }
        for cell in receipt.get("cells", [])
    ]


def config_entry(config: str, receipt_path: Path, directory: Path, input_name: str) -> dict[str, Any]:
    """The summary's entry for one configuration, read from the receipt just published."""
    receipt: dict[str, Any] = loads(receipt_path.read_bytes())
    # a failure receipt has neither block
    dataset: dict[str, Any] = receipt.get("dataset") or {}
    results: dict[str, Any] = receipt.get("prompt_results") or {}
    journal = results.get("path")
    return {
        "config": config,
        "status": receipt["evaluation"]["status"],
        "receipt": receipt_path.relative_to(directory).as_posix(),
        "receipt_sha256": file_sha256(receipt_path),
        "input": input_name,
        "input_sha256": receipt.get("input_sha256"),
        # the receipt names its journal relative to its own directory, which is the summary's
        "journal": journal,
        "journal_sha256": results.get("sha256"),
        "dataset_sha256": dataset.get("split_record", {}).get("parquet_sha256"),
        "prompts": dataset.get("selected_prompts"),
        "expected_prompts": dataset.get("expected_prompts"),
        "complete": dataset.get("complete"),
        "cells": _cells(receipt),
    }


def write_summary(directory: Path, document: dict[str, Any]) -> Path:
    """Publish ``directory/suite.json`` atomically; never overwrite."""

    path = directory / SUMMARY_NAME
    with atomic_output(path) as handle:
        handle.write(json.dumps(document, indent=2) + "\n")
    return path


def is_summary(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` holds a suite summary (its schema only; no verification)."""
    try:
        if not Path(path).is_file():
            return False  # a device or pipe is never read here (``report /dev/zero``)
        document = loads(Path(path).read_bytes())
    except (OSError, ValueError):
        return False  # whoever reads it as a receipt reports the error
    return isinstance(document, dict) and document.get("schema") == SCHEMA


def read_summary(path: str | os.PathLike[str]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The verified summary and, per configuration, its validated receipt payload.

    Refuses a receipt whose bytes changed since the summary was written, or whose cells are not
    the numbers the summary lists (the receipt's own journal check runs as for ``report``).
    """

    source = Path(path)
    document = loads(source.read_bytes())
    if not isinstance(document, dict) or document.get("schema") != SCHEMA:
        raise InputError(f"{path}: not a suite summary ({SCHEMA})")
    entries = document.get("configs")
    if not isinstance(entries, list) or not all(isinstance(entry, dict) for entry in entries):
        raise InputError(f"{path}: suite summary requires a list of configuration entries")
    payloads = []
    for entry in entries:
        receipt = source.parent / str(entry.get("receipt"))
        if file_sha256(receipt) != entry.get("receipt_sha256"):
            raise InputError(f"{path}: receipt {entry.get('receipt')} changed since the summary was written")
        payload = read_report(receipt).payload
        if _cells(payload) != entry.get("cells"):
            raise InputError(f"{path}: receipt {entry.get('receipt')} disagrees with the summary's cells")
        payloads.append(payload)
    return document, payloads
