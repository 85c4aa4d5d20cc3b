"""One list of rows, four formats."""

from __future__ import annotations

import csv
import io
import json

import pytest

from modebench.render import FORMATS, render_table

COLUMNS = ("name", "k", "value", "flag")
ROWS = [
    {"name": "a|b", "k": 1, "value": 0.1 + 0.2, "flag": True},
    {"name": "c", "k": None, "value": None, "flag": False},
]


def test_text_aligns_and_shortens() -> None:
    assert render_table(COLUMNS, ROWS, "text").splitlines() == [
        "name  k  value  flag",
        "a|b   1  0.3    true",
        "c     -  -      false",
    ]


def test_markdown_escapes_pipes() -> None:
    lines = render_table(COLUMNS, ROWS, "markdown").splitlines()
    assert lines[:2] == ["| name | k | value | flag |", "| --- | --- | --- | --- |"]
    assert lines[2] == "| a\\|b | 1 | 0.3 | true |"


def test_csv_keeps_full_precision_and_empty_nulls() -> None:
    parsed = list(csv.reader(io.StringIO(render_table(COLUMNS, ROWS, "csv"))))
    assert parsed == [list(COLUMNS), ["a|b", "1", "0.30000000000000004", "true"], ["c", "", "", "false"]]


def test_json_is_the_document_or_the_rows() -> None:
    assert json.loads(render_table(COLUMNS, ROWS, "json")) == ROWS
    document = {"schema": "x-v1", "rows": ROWS}
    assert json.loads(render_table(COLUMNS, ROWS, "json", document=document)) == document
    assert FORMATS == ("text", "json", "csv", "markdown")
    with pytest.raises(ValueError, match="unknown table format 'html'"):
        render_table(COLUMNS, ROWS, "html")
