"""``modebench report``: the text stays 0.4.0's byte for byte; tables; the HTML page's contract."""

from __future__ import annotations

import csv
import io
import json
import re
import sys
from pathlib import Path

import pytest

from modebench import api
from modebench.cli import main
from modebench.reporting import read_report
from tests.render.conftest import HOSTILE_ID

# Printed by ModeBench 0.4.0 (`/work/ref040/bin/modebench report`) for the same receipts.
GOLDEN = {
    "walkthrough": """Evaluation completed
level domain k accuracy pass@k distinct@k PCMD reportable
1 countdown 4 0.5 1 2 1 false
1 graph_coloring 4 0.5 1 2 1 false
1 mathir 4 0.5 1 2 1 false
1 pantry_plan 4 0.5 1 2 1 false
1 python_factors 4 0.5 1 2 1 false
PCMD uses only verified answers; reportable=false means insufficient eligible prompts.
""",
    "collapsed": """Evaluation completed
level domain k accuracy pass@k distinct@k PCMD reportable
1 countdown 4 0.5 1 1 0 false
1 graph_coloring 4 0.5 1 1 0 false
1 mathir 4 0.5 1 1 0 false
1 pantry_plan 4 0.5 1 1 0 false
1 python_factors 4 0.5 1 1 0 false
PCMD uses only verified answers; reportable=false means insufficient eligible prompts.
""",
    "failed": """Evaluation FAILED: scores are unavailable. Inspect failure and attempt diagnostics in the JSON receipt.
{"correct": 9, "incorrect": 5, "malformed": 5, "resource_limit": 1}
""",
}


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_text_report_is_unchanged(
    name: str, report_receipts: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["report", str(report_receipts[name])])
    assert capsys.readouterr().out == GOLDEN[name]
    assert code == (3 if name == "failed" else 0)
    assert main(["report", str(report_receipts[name]), "--format", "text"]) == code
    assert capsys.readouterr().out == GOLDEN[name]


def test_table_formats(report_receipts: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    receipt = report_receipts["walkthrough"]
    cells = read_report(receipt)["cells"]
    assert main(["report", str(receipt), "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["schema"] == "modebench-report-table-v1"
    assert [
        (r["domain"], r["accuracy"], r["pass_at_k"], r["distinct_at_k"], r["pcmd"]) for r in document["rows"]
    ] == [
        (c["domain"], c["accuracy"], c["pass_at_k"], c["distinct_at_k"], c["pcmd"]["d_mode"]) for c in cells
    ]
    assert main(["report", str(receipt), "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [float(r["distinct_at_k"]) for r in rows] == [c["distinct_at_k"] for c in cells]
    assert main(["report", str(receipt), "--format", "markdown"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("| receipt | status | level") and lines[1].startswith("| --- |")
    assert len(lines) == 2 + len(cells)
    text, completed = api.report_table([report_receipts["failed"]], "json")
    failed = json.loads(text)
    assert not completed and failed["receipts"][0]["failure"]["resource_limit"] == 1
    assert all(r["accuracy"] is None for r in failed["rows"])


def test_page_is_self_contained(pages: dict[str, Path]) -> None:
    for path in pages.values():
        text = path.read_text(encoding="utf-8")
        assert text.startswith("<!DOCTYPE html>") and "default-src 'none'" in text
        assert "<script" not in text.lower() and "<link" not in text.lower() and "@import" not in text
        assert re.findall(r"url\((?!#)", text) == []  # no external fonts or images; SVG clip paths are local
        for attribute in re.findall(r'(?:src|href)\s*=\s*"([^"]*)"', text):
            assert attribute.startswith("#"), attribute  # only references inside the page
        # The only URLs are the SVG and XLink namespace names (identifiers, never fetched).
        assert set(re.findall(r"https?://[^\s\"'<>]+", text)) <= {
            "http://www.w3.org/2000/svg",
            "http://www.w3.org/1999/xlink",
        }
        ids = re.findall(r'\sid="([^"]+)"', text)
        assert len(ids) == len(set(ids)), "element ids repeat across figures"


def test_receipt_text_is_escaped(report_receipts: dict[str, Path], tmp_path: Path) -> None:
    output = tmp_path / "hostile.html"
    api.render_html([report_receipts["hostile"]], output, resamples=50)
    text = output.read_text(encoding="utf-8")
    assert HOSTILE_ID not in text and "<script" not in text
    assert "&lt;script&gt;alert(&quot;id&quot;)&lt;/script&gt;&amp;" in text


def test_html_refusals(
    report_receipts: dict[str, Path], pages: dict[str, Path], tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    before = pages["walkthrough"].read_bytes()
    with pytest.raises(SystemExit) as exit_info:
        main(["report", str(report_receipts["walkthrough"]), "--html", str(pages["walkthrough"])])
    assert exit_info.value.code == 2 and "output already exists" in capsys.readouterr().err
    assert pages["walkthrough"].read_bytes() == before
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    output = tmp_path / "none.html"
    with pytest.raises(SystemExit) as exit_info:
        main(["report", str(report_receipts["walkthrough"]), "--html", str(output)])
    err = capsys.readouterr().err
    assert (
        exit_info.value.code == 2
        and "pip install -e '.[plot]' in the modebench checkout" in err
        and "Traceback" not in err
    )
    assert not output.exists() and list(tmp_path.iterdir()) == []


def test_trajectory_html_refusals(
    report_receipts: dict[str, Path], pages: dict[str, Path], tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    from tests.render.conftest import trajectory_runs

    runs = trajectory_runs(report_receipts)
    before = pages["trajectory"].read_bytes()
    with pytest.raises(SystemExit) as exit_info:
        main(["trajectory", *runs, "--html", str(pages["trajectory"])])
    assert exit_info.value.code == 2 and "output already exists" in capsys.readouterr().err
    assert pages["trajectory"].read_bytes() == before
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    output = tmp_path / "none.html"
    with pytest.raises(SystemExit) as exit_info:
        main(["trajectory", *runs, "--html", str(output)])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and "pip install -e '.[plot]'" in err and "Traceback" not in err
    assert not output.exists() and list(tmp_path.iterdir()) == []
