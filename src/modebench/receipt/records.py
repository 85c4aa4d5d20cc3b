"""Typed records of the receipt format (``docs/receipts.md``), checked by mypy where they are built.

Field order here is documentation only: receipts and journal lines are written as canonical JSON
(sorted keys), except the header, whose order ``writer.receipt_text`` fixes.
"""

from __future__ import annotations

from typing import Any, TypedDict

__all__ = ["Execution", "JournalLine", "JournalReference", "ReceiptMeta", "Summary"]


class Execution(TypedDict):
    """How the run was executed: its checkpoint schema, bound identity and invocation history."""

    checkpoint_schema: str
    identity_sha256: str
    history: list[dict[str, Any]]


class JournalReference(TypedDict):
    """The receipt's ``prompt_results``: where its journal is and the hash that binds it."""

    format: str
    records: int
    path: str
    sha256: str


class ReceiptMeta(TypedDict):
    """The identity fields of a v4 (or shard) receipt, bound before grading."""

    created_at: str
    records_sha256: str
    input_sha256: str
    software: dict[str, Any]
    run: Any
    generation_metadata_status: str
    run_sha256: str | None
    dataset: dict[str, Any]
    execution: Execution


class _JournalLine(TypedDict):
    domain: str
    k: int
    level: int
    record_sha256: str
    result: dict[str, Any]
    schema: str
    sequence: int


class JournalLine(_JournalLine, total=False):
    """One line of the journal; ``plugin`` (the origin) only for a third-party domain's prompt."""

    plugin: dict[str, str]


class Summary(TypedDict):
    """What an evaluation returns (0.4.0's summary dict)."""

    output: str
    cells: int
    prompts: int
    dataset_kind: str
    status: str
    work_dir: str
