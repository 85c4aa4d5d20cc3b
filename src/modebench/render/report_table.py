"""The ``report`` tables: the receipt's cell scores as text, JSON, CSV or Markdown.

Text is the 0.4.0 report, byte for byte (:func:`modebench.reporting.summarize`; several receipts
are separated by a blank line). The other formats lay the same cell numbers out with
:func:`modebench.render.tables.render_table`; a failed receipt contributes its cells with null
scores (the receipt holds none) and, in JSON, its failure detail.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from modebench._words import counted
from modebench.render.tables import FORMATS, render_table
from modebench.reporting import read_report, summarize
from modebench.validation import InputError

__all__ = ["REPORT_COLUMNS", "SCHEMA", "report_table"]

SCHEMA = "modebench-report-table-v1"
REPORT_COLUMNS = (
    "receipt", "status", "level", "domain", "k", "accuracy", "pass_at_k", "distinct_at_k", "pcmd",
    "reportable",
)  # fmt: skip


def _rows(path: str, payload: dict[str, Any]) -> list[dict[str, Any]]:
    status = payload["evaluation"]["status"]
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
        for cell in payload["cells"]
    ]


def _limit_note(payload: dict[str, Any]) -> str:
    """A line under a limited run's report (0.4.0 receipts never carry ``dataset.limit``)."""
    dataset = payload.get("dataset")
    if not isinstance(dataset, dict) or dataset.get("limit") is None:
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
    from modebench.suite.summary import is_summary

    summaries = [path for path in receipts if is_summary(path)]
    if summaries:
        if len(receipts) != 1:
            raise InputError(f"a suite summary is reported on its own: {os.fspath(summaries[0])}")
        from modebench.render.suite_table import suite_table

        return suite_table(receipts[0], fmt)
    if journal is not None and len(receipts) != 1:
        raise InputError("a journal path applies to one receipt: report the others separately")
    payloads = [(os.fspath(path), read_report(path, journal=journal)) for path in receipts]
    completed = all(p["evaluation"]["status"] == "completed" for _, p in payloads)
    if fmt == "text":
        return "\n\n".join(summarize(payload) + _limit_note(payload) for _, payload in payloads), completed
    rows = [row for path, payload in payloads for row in _rows(path, payload)]
    document = {
        "schema": SCHEMA,
        "receipts": [
            {
                "receipt": path,
                "status": p["evaluation"]["status"],
                **(
                    {}
                    if p["evaluation"]["status"] == "completed"
                    else {"failure": p.get("failure", p["evaluation"].get("status_counts", {}))}
                ),
            }
            for path, p in payloads
        ],  # fmt: skip
        "rows": rows,
    }
    return render_table(REPORT_COLUMNS, rows, fmt, document=document), completed
