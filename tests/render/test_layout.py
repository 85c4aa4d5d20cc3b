"""Figures that fit: in real headless Chromium, every text of every figure lies inside its SVG's
viewBox and no two texts overlap, on the one-, two- and three-run pages, two suites (directories
of two receipts each) compared, and the trajectory page, with 60-character run labels (issue #31)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from modebench.cli import main
from tests.stats.conftest import walkthrough_records

pytestmark = pytest.mark.skipif(
    not os.path.exists("/usr/bin/chromium"), reason="needs Debian's chromium at /usr/bin/chromium"
)

# Every <text> of every figure SVG, as rectangles in the SVG's own user units (viewBox), from the
# browser's layout of the real fonts: getBBox in the text's coordinates mapped through getCTM.
MEASURE = """[...document.querySelectorAll('figure[data-figure] svg')].map((svg, index) => {
  const vb = svg.viewBox.baseVal;
  const root = svg.getScreenCTM().inverse();
  const texts = [...svg.querySelectorAll('text')].filter(t => t.textContent.trim()).map(t => {
    const b = t.getBBox(); const m = root.multiply(t.getScreenCTM());
    const corners = [[b.x, b.y], [b.x + b.width, b.y], [b.x, b.y + b.height], [b.x + b.width, b.y + b.height]]
      .map(([x, y]) => [m.a * x + m.c * y + m.e, m.b * x + m.d * y + m.f]);
    const xs = corners.map(c => c[0]), ys = corners.map(c => c[1]);
    return {text: t.textContent.trim(), x0: Math.min(...xs), y0: Math.min(...ys), x1: Math.max(...xs), y1: Math.max(...ys)};
  });
  return {index, kind: svg.closest('figure').dataset.figure,
          box: {x0: vb.x, y0: vb.y, x1: vb.x + vb.width, y1: vb.y + vb.height}, texts};
})"""
LABELS = (
    "baseline checkpoint " + "a" * 40,
    "independent re-sample " + "b" * 38,
    "collapsed policy " + "c" * 43,
)


def _problems(figures: list[dict[str, Any]]) -> list[str]:
    found = []
    for figure in figures:
        box = figure["box"]
        texts = figure["texts"]
        for t in texts:
            if (
                t["x0"] < box["x0"] - 0.5
                or t["y0"] < box["y0"] - 0.5
                or t["x1"] > box["x1"] + 0.5
                or t["y1"] > box["y1"] + 0.5
            ):
                found.append(
                    f"{figure['kind']} #{figure['index']}: {t['text']!r} outside the viewBox {t} {box}"
                )
        for i, a in enumerate(texts):
            for b in texts[i + 1 :]:
                width = min(a["x1"], b["x1"]) - max(a["x0"], b["x0"])
                height = min(a["y1"], b["y1"]) - max(a["y0"], b["y0"])
                if width > 0.5 and height > 0.5:
                    found.append(f"{figure['kind']} #{figure['index']}: {a['text']!r} overlaps {b['text']!r}")
    return found


@pytest.fixture(scope="module")
def labelled(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The walkthrough as three runs whose run.json labels are 60 characters long."""
    from modebench.streaming import evaluate_file

    root = tmp_path_factory.mktemp("labelled")
    records = walkthrough_records()
    collapsed = []
    for record in records:
        first, _, wrong, malformed = record["responses"]
        collapsed.append({**record, "responses": [first, first, wrong, malformed]})
    found = {}
    for name, label, rows in zip(("a", "a2", "b"), LABELS, (records, records, collapsed)):
        assert len(label) == 60
        source = root / f"{name}.jsonl"
        source.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        run = {"model": {"id": "m" * 60, "revision": "0"}, "generation": {"temperature": 1.0},
               "prompt_condition": "registered_hints_v1", "label": label}  # fmt: skip
        assert evaluate_file(source, root / f"{name}.json", run=run)["status"] == "completed"
        found[name] = root / f"{name}.json"
    for name, label, rows in (("a", LABELS[0], records), ("b", LABELS[2], collapsed)):
        # the same runs as directories of two receipts each (a suite's layout: a section per part)
        folder = root / f"suite-{name}"
        folder.mkdir()
        for part, chosen in (("first", rows[:2]), ("rest", rows[2:])):
            source = root / f"{name}-{part}.jsonl"
            source.write_text("".join(json.dumps(r) + "\n" for r in chosen), encoding="utf-8")
            run = {"model": {"id": "m" * 60, "revision": "0"}, "generation": {"temperature": 1.0},
                   "prompt_condition": "registered_hints_v1", "label": label}  # fmt: skip
            assert evaluate_file(source, folder / f"{part}.json", run=run)["status"] == "completed"
        found[f"suite-{name}"] = folder
    pages = {}
    for name, runs in (("one", ["a"]), ("two", ["a", "b"]), ("three", ["a", "a2", "b"]),
                       ("suites", ["suite-a", "suite-b"])):  # fmt: skip
        output = root / f"{name}.html"
        assert (
            main(["report", *(str(found[r]) for r in runs), "--html", str(output), "--resamples", "50"]) == 0
        )
        pages[name] = output
    output = root / "trajectory.html"
    assert (
        main(
            [
                "trajectory",
                f"0={found['a']}",
                f"100={found['b']}",
                f"200={found['a2']}",
                "--html",
                str(output),
            ]
        )
        == 0
    )
    pages["trajectory"] = output
    return pages


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from tests.render.chromium import Browser

    with Browser() as opened:
        yield opened


@pytest.mark.parametrize("name", ["one", "two", "three", "suites", "trajectory"])
def test_no_text_clipped_or_overlapping(browser: Any, labelled: dict[str, Path], name: str) -> None:
    page = browser.open(labelled[name])
    assert page.console_errors() == [] and page.requests() == []
    figures = page.evaluate(MEASURE)
    assert figures and all(f["texts"] for f in figures)
    shown = {"two": (LABELS[0], LABELS[2]), "three": LABELS, "suites": (LABELS[0], LABELS[2])}.get(name, ())
    joined = " ".join(t["text"] for f in figures for t in f["texts"])
    for label in shown:  # each run's label is on the figures (possibly wrapped over lines)
        assert label.split()[0] in joined and label[-12:] in joined.replace(" ", ""), label
    problems = _problems(figures)
    assert problems == [], "\n".join(problems[:40])
