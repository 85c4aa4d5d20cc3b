"""The HTML reports opened in headless Chromium: no console error, no request, every figure drawn,
and the numbers on the page equal the receipt's."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from modebench.reporting import FAILED_HEADLINE, read_report
from modebench.stats import compare

pytestmark = pytest.mark.skipif(
    not os.path.exists("/usr/bin/chromium"), reason="needs Debian's chromium at /usr/bin/chromium"
)

FIGURES = """[...document.querySelectorAll('figure[data-figure]')].map(f => {
  const r = f.getBoundingClientRect(); const svg = f.querySelector('svg');
  const box = svg ? svg.getBoundingClientRect() : null;
  return {kind: f.dataset.figure, width: r.width, height: r.height,
          svgWidth: box ? box.width : 0, svgHeight: box ? box.height : 0,
          shapes: svg ? svg.querySelectorAll('path, rect, text, use').length : 0,
          markers: svg ? svg.querySelectorAll('use').length : 0,
          title: svg ? (svg.querySelector('title') || {}).textContent || '' : '',
          texts: svg ? [...svg.querySelectorAll('text')].map(t => t.textContent.trim()) : [],
          rows: f.querySelectorAll('tbody tr').length,
          caption: (f.querySelector('figcaption') || {}).textContent || ''};
})"""
VALUES = """[...document.querySelectorAll('span.value[data-value]')].map(s => ({
  receipt: s.dataset.receipt, level: s.dataset.level, domain: s.dataset.domain,
  metric: s.dataset.metric, value: s.dataset.value, text: s.textContent}))"""


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from tests.render.chromium import Browser

    with Browser() as opened:
        yield opened


def _shown(value: Any) -> str:
    if value is None:
        return "–"
    return format(value, "g") if isinstance(value, float) else str(value)


def _open(browser: Any, path: Path) -> Any:
    page = browser.open(path)
    assert page.console_errors() == []
    assert page.requests() == []
    figures = page.evaluate(FIGURES)
    assert figures, "the page has no figure"
    for found in figures:
        assert found["width"] > 100 and found["height"] > 20, found
        assert found["caption"].strip(), found
        if found["kind"] == "modes":
            assert found["rows"] >= 1, found  # a histogram with at least one mode
        else:
            assert found["svgWidth"] > 100 and found["svgHeight"] > 50, found
            assert found["shapes"] > 20 and found["title"].strip(), found
    return page, figures


def _check_cells(page: Any, receipts: list[Path]) -> None:
    shown = page.evaluate(VALUES)
    expected = []
    for index, path in enumerate(receipts):
        for cell in read_report(path)["cells"]:
            for metric in ("accuracy", "pass_at_k", "distinct_at_k", "pcmd"):
                value = cell["pcmd"]["d_mode"] if metric == "pcmd" else cell[metric]
                expected.append(
                    (str(index), str(cell["level"]), cell["domain"], metric, value, _shown(value))
                )
    assert [(s["receipt"], s["level"], s["domain"], s["metric"], json.loads(s["value"]), s["text"])
            for s in shown] == expected  # fmt: skip


def _check_panels(found: list[dict[str, Any]], cells: list[dict[str, Any]], metrics: list[str],
                  runs: tuple[str, ...] = ()) -> None:  # fmt: skip
    """Each curves figure draws its metric, a titled panel for every cell, and a legend entry per run."""
    labels = {f"level {c['level']} {c['domain']}" for c in cells}
    assert len(found) == len(metrics)
    for figure, metric in zip(found, metrics):
        assert figure["title"].startswith(metric) and metric in figure["caption"], figure["title"]
        assert labels <= set(figure["texts"]), labels - set(figure["texts"])
        assert "k (draws per prompt, log scale)" in figure["texts"]
        assert any(t.startswith(metric + " (") for t in figure["texts"])  # the y axis label, with its unit
        for label in labels:
            assert f"{label}: " in figure["caption"]  # the text alternative covers every panel
        for run in runs:
            assert any(t.startswith(run) for t in figure["texts"]), run  # the legend names each run
        # A marker per point: k = 1 to the cell's draws, every panel, every run (bands and lines are
        # one artist per run, so the markers are what counts the curves).
        assert figure["markers"] >= sum(c["k"] for c in cells) * max(len(runs), 1), figure["markers"]


def test_walkthrough_page(browser: Any, pages: dict[str, Path], report_receipts: dict[str, Path]) -> None:
    page, figures = _open(browser, pages["walkthrough"])
    cells = read_report(report_receipts["walkthrough"])["cells"]
    kinds = [f["kind"] for f in figures]
    # Small multiples: one curves figure per metric (pass@k, E[distinct@k]), a panel per cell.
    assert kinds.count("curves") == 2 and kinds.count("status") == 1
    _check_panels([f for f in figures if f["kind"] == "curves"], cells, ["pass@k", "E[distinct@k]"])
    assert kinds.count("modes") >= len(cells)  # most and fewest modes per cell
    _check_cells(page, [report_receipts["walkthrough"]])
    assert page.evaluate("document.querySelector('[data-failed]') === null")


def test_failed_page_shows_diagnostics_and_no_score(
    browser: Any, pages: dict[str, Path], report_receipts: dict[str, Path]
) -> None:
    page, figures = _open(browser, pages["failed"])
    assert [f["kind"] for f in figures] == ["status"]
    alert = page.evaluate("document.querySelector('[data-failed][role=alert]').innerText")
    assert FAILED_HEADLINE in alert and "resource_limit" in alert
    assert page.evaluate("document.querySelectorAll('[data-metric], [data-figure=curves]').length") == 0
    text = page.evaluate("document.body.innerText")
    for word in ("accuracy", "pass@k", "PCMD"):
        assert word not in text


def test_comparison_page(browser: Any, pages: dict[str, Path], report_receipts: dict[str, Path]) -> None:
    a, b = report_receipts["walkthrough"], report_receipts["collapsed"]
    page, figures = _open(browser, pages["comparison"])
    kinds = [f["kind"] for f in figures]
    assert {"overlay", "differences", "retention", "status", "modes"} <= set(kinds)
    # Each run's curves are drawn once, overlaid with the other run's; the run sections say so.
    assert "curves" not in kinds and kinds.count("status") == 2
    cells = read_report(a)["cells"]
    _check_panels([f for f in figures if f["kind"] == "overlay"], cells, ["pass@k", "E[distinct@k]"],
                  ("run A", "run B"))  # fmt: skip
    assert page.evaluate("document.body.innerText").count("drawn with the other runs") == 2
    _check_cells(page, [a, b])
    differences = page.evaluate(
        "[...document.querySelectorAll('[data-difference]')]"
        ".map(s => [s.dataset.level, s.dataset.domain, s.dataset.metric, s.dataset.difference])"
    )
    rows = {(str(r["level"]), str(r["domain"]), r["metric"] + (f"@{r['k']}" if r["k"] else "")): r["estimate"]
            for r in compare(a, b).rows}  # fmt: skip
    assert len(differences) >= 6 * 6  # six metrics for five cells and overall
    for level, domain, metric, value in differences:
        assert json.loads(value) == rows[(level, domain, metric)]
    assert ("None", "None", "accuracy") in {tuple(d[:3]) for d in differences}
    retained = page.evaluate(
        "[...document.querySelectorAll('[data-metric=modes_lost]')].map(s => s.dataset.value)"
    )
    assert retained and all(float(v) >= 0 for v in retained)


def test_trajectory_page(browser: Any, pages: dict[str, Path], report_receipts: dict[str, Path]) -> None:
    from modebench.api import trajectory
    from modebench.render.trajectory_page import COLUMNS
    from tests.render.conftest import trajectory_runs

    page, figures = _open(browser, pages["trajectory"])
    table = trajectory(trajectory_runs(report_receipts))
    cells = {(r["level"], r["domain"]) for r in table.rows}
    assert [f["kind"] for f in figures] == ["trajectory"] * len(cells)
    for found in figures:
        assert found["shapes"] > 100  # six panels of lines and markers
    shown = page.evaluate(
        "[...document.querySelectorAll('span.value[data-step]')].map(s => [s.dataset.step, s.dataset.level,"
        " s.dataset.domain, s.dataset.metric, s.dataset.k, s.dataset.value, s.textContent])"
    )
    rows = {(str(r["step"]), str(r["level"]), r["domain"], r["metric"], json.dumps(r["k"])): r["estimate"]
            for r in table.rows}  # fmt: skip
    assert len(shown) == 3 * len(cells) * len(COLUMNS)
    for step, level, domain, metric, k, value, text in shown:
        # the first step has no retention against itself (value null, shown as a dash)
        expected = (
            rows[(step, level, domain, metric, k)]
            if step != "0" or metric in ("accuracy", "pass_at_k", "distinct_at_k", "pcmd", "effective_modes")
            else rows.get((step, level, domain, metric, k))
        )
        assert json.loads(value) == expected and text == _shown(expected)
    lost = {(s[0], s[2]): json.loads(s[5]) for s in shown if s[3] == "modes_lost"}
    assert any(v > 0 for (step, _), v in lost.items() if step == "100")  # the collapsed step lost modes
    assert all(v == 0 for (step, _), v in lost.items() if step == "200")
    assert all(v is None for (step, _), v in lost.items() if step == "0")
