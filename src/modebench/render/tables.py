"""Render a list of row dicts that share one schema as text, JSON, CSV or Markdown.

Generic on purpose: callers pass the column order and, for JSON, the whole document the rows
belong to (so the schema id and metadata travel with them). Numbers stay numbers in JSON; the
text and Markdown tables show floats with six significant digits (like ``report``) and a null as
``-``; CSV writes ``repr`` floats (shortest round-trip) and a null as an empty field.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["FORMATS", "render_table"]

FORMATS = ("text", "json", "csv", "markdown")
_NULL = "-"


def _short(value: Any) -> str:
    if value is None:
        return _NULL
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return format(value, "g")
    return str(value)


def _exact(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value) if isinstance(value, float) else str(value)


def _text(columns: Sequence[str], cells: list[list[str]]) -> str:
    widths = [max([len(c)] + [len(row[i]) for row in cells]) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths)).rstrip()]
    lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip() for row in cells]
    return "\n".join(lines)


def _markdown(columns: Sequence[str], cells: list[list[str]]) -> str:
    def line(values: Sequence[str]) -> str:
        return "| " + " | ".join(v.replace("|", "\\|") for v in values) + " |"

    return "\n".join([line(columns), line(["---"] * len(columns))] + [line(row) for row in cells])


def _csv(columns: Sequence[str], rows: Sequence[Mapping[str, Any]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow([_exact(row.get(c)) for c in columns])
    return buffer.getvalue().rstrip("\n")


def render_table(
    columns: Sequence[str],
    rows: Sequence[Mapping[str, Any]],
    fmt: str = "text",
    *,
    document: Mapping[str, Any] | None = None,
) -> str:
    """The rows in ``fmt`` (one of :data:`FORMATS`), without a trailing newline."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown table format {fmt!r}; choose one of {', '.join(FORMATS)}")
    if fmt == "json":
        return json.dumps(document if document is not None else [dict(r) for r in rows], indent=2)
    if fmt == "csv":
        return _csv(columns, rows)
    cells = [[_short(row.get(c)) for c in columns] for row in rows]
    return _text(columns, cells) if fmt == "text" else _markdown(columns, cells)
