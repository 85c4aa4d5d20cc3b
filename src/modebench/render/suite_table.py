"""``report SUITE.json``: the verified receipts of a suite as one table, one row per cell.

Text starts with a headline (how many configurations completed, the split, any limit), then the
table, then the 0.4.0 footer; failed configurations are listed with the command that shows their
diagnostics. JSON, CSV and Markdown lay out the same rows (JSON as ``modebench-suite-table-v1``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from modebench._words import counted
from modebench.receipt.text import FOOTER
from modebench.render.tables import render_table
from modebench.suite.summary import read_summary

__all__ = ["SCHEMA", "SUITE_COLUMNS", "suite_table"]

SCHEMA = "modebench-suite-table-v1"
SUITE_COLUMNS = (
    "config", "status", "prompts", "level", "domain", "k", "accuracy", "pass_at_k", "distinct_at_k",
    "pcmd", "reportable",
)  # fmt: skip


def _rows(document: dict[str, Any]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for entry in document["configs"]:
        base = {"config": entry["config"], "status": entry["status"], "prompts": entry["prompts"]}
        cells = entry["cells"] or [{}]  # a failed configuration still gets its row, without scores
        rows.extend({**base, **{column: cell.get(column) for column in SUITE_COLUMNS[3:]}} for cell in cells)
    return rows


def _headline(document: dict[str, Any]) -> list[str]:
    entries = document["configs"]
    done = sum(1 for entry in entries if entry["status"] == "completed")
    lines = [
        f"Suite {document['status']}: {done} of {counted(len(entries), 'configuration')} completed "
        f"(split {document['split']})"
    ]
    if document.get("limit") is not None:
        lines.append(
            f"Limited to the first {counted(document['limit'], 'prompt')} of each configuration: not full-split results."
        )
    return lines


def suite_table(path: str | os.PathLike[str], fmt: str = "text") -> tuple[str, bool]:
    """(the rendered suite report, whether every configuration completed)."""
    document, _ = read_summary(path)  # verifies every receipt and journal first
    rows = _rows(document)
    completed = document["status"] == "completed"
    if fmt == "json":
        meta = {key: document[key] for key in ("status", "split", "registry", "limit")}
        return render_table(
            SUITE_COLUMNS, rows, fmt, document={"schema": SCHEMA, **meta, "rows": rows}
        ), completed
    table = render_table(SUITE_COLUMNS, rows, fmt)
    if fmt != "text":
        return table, completed
    lines = [*_headline(document), table, FOOTER]
    directory = Path(path).parent
    for entry in document["configs"]:
        if entry["status"] != "completed":
            lines.append(f"{entry['config']} FAILED: see modebench report {directory / entry['receipt']}")
    return "\n".join(lines), completed
