"""One list of rows, five formats."""

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


def test_csv_has_no_float_noise_and_empty_nulls() -> None:
    parsed = list(csv.reader(io.StringIO(render_table(COLUMNS, ROWS, "csv"))))
    assert parsed == [list(COLUMNS), ["a|b", "1", "0.3", "true"], ["c", "", "", "false"]]
    noisy = [{"name": "d", "k": 2, "value": -0.1882812499999993, "flag": None}]
    assert render_table(COLUMNS, noisy, "csv").splitlines()[1] == "d,2,-0.18828125,"
    # twelve significant digits are kept: real precision is not rounded away
    precise = [{"name": "e", "k": 1, "value": 0.123456789012, "flag": None}]
    assert render_table(COLUMNS, precise, "csv").splitlines()[1] == "e,1,0.123456789012,"


def test_latex_is_a_booktabs_tabular_with_escaped_text() -> None:
    rows = [{"name": "run_1 & 50% $x$", "k": 4, "value": 0.123456, "flag": None}]
    assert render_table(COLUMNS, rows, "latex").splitlines() == [
        r"\begin{tabular}{lrrl}",
        r"\toprule",
        r"name & k & value & flag \\",
        r"\midrule",
        r"run\_1 \& 50\% \$x\$ & 4 & 0.1235 & -- \\",
        r"\bottomrule",
        r"\end{tabular}",
    ]
    # the display columns choose what a paper table shows
    assert (
        render_table(COLUMNS, rows, "latex", display=("name", "value")).splitlines()[0]
        == r"\begin{tabular}{lr}"
    )


def test_json_is_the_document_or_the_rows() -> None:
    assert json.loads(render_table(COLUMNS, ROWS, "json")) == ROWS
    document = {"schema": "x-v1", "rows": ROWS}
    assert json.loads(render_table(COLUMNS, ROWS, "json", document=document)) == document
    assert FORMATS == ("text", "json", "csv", "markdown", "latex")
    with pytest.raises(ValueError, match="unknown table format 'html'"):
        render_table(COLUMNS, ROWS, "html")
