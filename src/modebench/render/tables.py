"""Render a list of row dicts that share one schema as text, JSON, CSV, Markdown or LaTeX.

Generic on purpose: callers pass the column order and, for JSON, the whole document the rows
belong to (so the schema id and metadata travel with them). Numbers stay numbers in JSON (full
precision); the Markdown table shows floats with six significant digits (like ``report``) and a
null as ``-``; the text table — for a terminal — shows the *display* columns only (``display``;
every column is in the other formats) with four significant digits; CSV writes floats with twelve
significant digits (the float noise of a difference, ``-0.1882812499999993``, is below any
statistical meaning) and a null as an empty field; ``latex`` writes a booktabs ``tabular`` of the
display columns (needs the booktabs package), text escaped, four significant digits, ``--``
for null.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["FORMATS", "render_table"]

FORMATS = ("text", "json", "csv", "markdown", "latex")
_NULL = "-"


def _short(value: Any, digits: int = 6) -> str:
    if value is None:
        return _NULL
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return format(value, f".{digits}g")
    return str(value)


def _exact(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return format(value, ".12g") if isinstance(value, float) else str(value)


_LATEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
          "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}  # fmt: skip


def _latex_text(text: str) -> str:
    return "".join(_LATEX.get(ch, ch) for ch in text)


def _latex(columns: Sequence[str], rows: Sequence[Mapping[str, Any]], titles: Sequence[str]) -> str:
    def is_number(value: Any) -> bool:
        return isinstance(value, int | float) and not isinstance(value, bool)

    present = [[r.get(c) for r in rows if r.get(c) is not None] for c in columns]
    numeric = [bool(values) and all(is_number(v) for v in values) for values in present]
    spec = "".join("r" if n else "l" for n in numeric)

    def cell(value: Any) -> str:
        return "--" if value is None else _latex_text(_short(value, 4))

    lines = [f"\\begin{{tabular}}{{{spec}}}", "\\toprule",
             " & ".join(_latex_text(c) for c in titles) + r" \\", "\\midrule"]  # fmt: skip
    lines += [" & ".join(cell(r.get(c)) for c in columns) + r" \\" for r in rows]
    lines += ["\\bottomrule", "\\end{tabular}"]
    return "\n".join(lines)


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
    display: Sequence[str] | None = None,
    headers: Mapping[str, str] | None = None,
) -> str:
    """The rows in ``fmt`` (one of :data:`FORMATS`), without a trailing newline.

    ``display``: the columns of the text and LaTeX tables (default: all). ``headers``: header
    text of some columns in the text, Markdown and LaTeX tables (CSV and JSON keep the names)."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown table format {fmt!r}; choose one of {', '.join(FORMATS)}")
    if fmt == "json":
        return json.dumps(document if document is not None else [dict(r) for r in rows], indent=2)
    if fmt == "csv":
        return _csv(columns, rows)
    shown = [c for c in display if c in columns] if display is not None else list(columns)
    named = dict(headers or {})
    if fmt == "latex":
        return _latex(shown, rows, [named.get(c, c) for c in shown])
    if fmt == "text":
        return _text(
            [named.get(c, c) for c in shown], [[_short(row.get(c), 4) for c in shown] for row in rows]
        )
    return _markdown(
        [named.get(c, c) for c in columns], [[_short(row.get(c)) for c in columns] for row in rows]
    )
