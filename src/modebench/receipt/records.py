"""Typed records of the receipt format (``docs/receipts.md``), one model for writer and reader.

The writer builds :class:`ReceiptMeta`, :class:`JournalReference` and :class:`JournalLine` (mypy
checks them where they are built); the reader returns a :class:`Receipt`, the checked receipt
with typed fields, and reads each journal line as a :class:`JournalLine`. Older receipt shapes
(v3, and v4 receipts written before an optional field existed) are read through
:class:`Receipt`'s fields, which supply what an older shape lacks, so no consumer repeats a default.
Field order here is documentation only: receipts and journal lines are written as canonical JSON
(sorted keys), except the header, whose order ``writer.receipt_text`` fixes.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, TypedDict, cast

from modebench.failures.policy import FAIL_RUN
from modebench.receipt.schema import V3

__all__ = ["ExecutionBlock", "JournalLine", "JournalReference", "Receipt", "ReceiptMeta", "Summary"]


class ExecutionBlock(TypedDict):
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
    execution: ExecutionBlock


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


@dataclass(frozen=True)
class Receipt:
    """A receipt that passed the reader's checks (``modebench.receipt.reader.read_report``).

    ``payload`` is the document as read: the 0.4.0 dictionary that ``modebench.reporting``
    returns at its public edge. Every other field is typed, and is where an older shape is
    upgraded: a v3 receipt has no journal, input hash or unscorable policy; a receipt written
    before plug-ins, id lists or policies existed has none of their fields.
    """

    path: str
    payload: dict[str, Any]

    @classmethod
    def at(cls, path: str | os.PathLike[str], payload: dict[str, Any]) -> Receipt:
        return cls(os.fspath(path), payload)

    @property
    def schema(self) -> str:
        return str(self.payload["schema"])

    @property
    def is_v3(self) -> bool:
        return self.schema == V3

    @property
    def evaluation(self) -> dict[str, Any]:
        return cast(dict[str, Any], self.payload["evaluation"])

    @property
    def status(self) -> str:
        return str(self.evaluation["status"])

    @property
    def completed(self) -> bool:
        return self.status == "completed"

    @property
    def cells(self) -> list[dict[str, Any]]:
        return cast(list[dict[str, Any]], self.payload["cells"])

    @property
    def input_sha256(self) -> str | None:
        """The input's hash (v4); ``None`` for a v3 receipt, which has none."""
        return cast(str | None, self.payload.get("input_sha256"))

    @property
    def dataset(self) -> dict[str, Any] | None:
        dataset = self.payload.get("dataset")
        return dataset if isinstance(dataset, dict) else None

    @property
    def execution(self) -> ExecutionBlock | None:
        execution = self.payload.get("execution")
        return cast(ExecutionBlock, execution) if isinstance(execution, dict) else None

    @property
    def prompt_results(self) -> JournalReference | None:
        """Where the journal is and its hash (v4); ``None`` for a v3 receipt (results inline)."""
        reference = self.payload.get("prompt_results")
        return cast(JournalReference, reference) if isinstance(reference, dict) else None

    @property
    def unscorable(self) -> str:
        """The unscorable policy; absent (ModeBench 0.4.0 and v3 receipts): ``fail-run``."""
        return str(self.evaluation.get("unscorable", FAIL_RUN))

    @property
    def plugins(self) -> frozenset[str]:
        """The third-party domains the receipt records in ``software.plugins`` (none before plug-ins)."""
        software = self.payload.get("software")
        plugins = software.get("plugins") if isinstance(software, dict) else None
        return frozenset(plugins) if isinstance(plugins, dict) else frozenset()

    @property
    def failure(self) -> Any:
        """What a failed receipt says went wrong (its ``failure`` block, else its status counts)."""
        return self.payload.get("failure", self.evaluation.get("status_counts", {}))
