"""The ``report`` tables: the receipt's cell scores as text, JSON, CSV or Markdown.

Text is the 0.4.0 report, byte for byte (:func:`modebench.receipt.text.summarize`; several receipts
are separated by a blank line). The other formats lay the same cell numbers out with
:func:`modebench.render.tables.render_table`; a failed receipt contributes its cells with null
scores (the receipt holds none) and, in JSON, its failure detail.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from modebench._words import counted
from modebench.receipt.reader import read_report
from modebench.receipt.records import Receipt
from modebench.receipt.text import summarize
from modebench.render.suite_table import suite_table
from modebench.render.tables import FORMATS, render_table
from modebench.suite.summary import is_summary
from modebench.validation import InputError

__all__ = ["REPORT_COLUMNS", "SCHEMA", "report_table"]

SCHEMA = "modebench-report-table-v1"
REPORT_COLUMNS = (
    "receipt", "status", "level", "domain", "k", "accuracy", "pass_at_k", "distinct_at_k", "pcmd",
    "reportable",
)  # fmt: skip


def _rows(path: str, receipt: Receipt) -> list[dict[str, Any]]:
    status = receipt.status
    return [
        {
            "receipt": path,
            "status": status,
            "level": cell["level"],
            "domain": cell["domain"],
            "k": cell["k"],
            "accuracy": cell["accuracy"],
            "pass_at_k": cell["pass_at_k"],
            "distinct_at_k": cell["distinct_at_k"],
            "pcmd": cell["pcmd"]["d_mode"],
            "reportable": bool(cell["pcmd"]["reportable"]),
        }  # fmt: skip
        for cell in receipt.cells
    ]


def _limit_note(receipt: Receipt) -> str:
    """A line under a limited run's report (0.4.0 receipts never carry ``dataset.limit``)."""
    dataset = receipt.dataset
    if dataset is None or dataset.get("limit") is None:
        return ""
    return (
        f"\nLimited run: only the first {counted(dataset['limit'], 'prompt')} of the split "
        f"({dataset.get('selected_prompts')} of {dataset.get('expected_prompts')}); not a full-split result."
    )


def report_table(
    receipts: Sequence[str | os.PathLike[str]],
    fmt: str = "text",
    journal: str | os.PathLike[str] | None = None,
) -> tuple[str, bool]:
    """(the rendered report, whether every receipt completed).

    ``journal``: the result journal of the one receipt given, where it is now (moved away from it).

    A suite summary (``suite.json`` of ``evaluate_suite``) given alone is reported as one table of
    its verified receipts (:mod:`modebench.render.suite_table`).
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown table format {fmt!r}; choose one of {', '.join(FORMATS)}")

    summaries = [path for path in receipts if is_summary(path)]
    if summaries:
        if len(receipts) != 1:
            raise InputError(f"a suite summary is reported on its own: {os.fspath(summaries[0])}")

        return suite_table(receipts[0], fmt)
    if journal is not None and len(receipts) != 1:
        raise InputError("a journal path applies to one receipt: report the others separately")
    read = [(os.fspath(path), read_report(path, journal=journal)) for path in receipts]
    completed = all(receipt.completed for _, receipt in read)
    if fmt == "text":
        return "\n\n".join(summarize(receipt) + _limit_note(receipt) for _, receipt in read), completed
    rows = [row for path, receipt in read for row in _rows(path, receipt)]
    document = {
        "schema": SCHEMA,
        "receipts": [
            {
                "receipt": path,
                "status": receipt.status,
                **({} if receipt.completed else {"failure": receipt.failure}),
            }
            for path, receipt in read
        ],  # fmt: skip
        "rows": rows,
    }
    return render_table(REPORT_COLUMNS, rows, fmt, document=document), completed
