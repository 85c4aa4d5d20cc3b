"""``report --html`` and ``trajectory`` take what ``stats`` and ``compare`` take (issue #31): a
receipt, a ``suite.json`` or a directory of receipts; ``--label`` names runs; unequal draw budgets
are refused with the reason or compared at the common k with ``--allow-unequal-draws``; every
figure exports as a standalone SVG and PDF."""

from __future__ import annotations

import html
import json
import re
import zlib
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("matplotlib", reason="the HTML page needs the 'plot' extra")

from modebench import api  # noqa: E402
from modebench.cli import main  # noqa: E402
from tests.stats.conftest import evaluate_records  # noqa: E402
from tests.stats.test_many import _rows, _sample  # noqa: E402

DIFFERENCE = re.compile(
    r'<span data-level="([^"]*)" data-domain="([^"]*)" data-metric="([^"]*)" data-difference="([^"]*)">'
)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Directories ``A``, ``A2`` (an independent re-sample of A) and ``B`` of two receipts each
    (countdown levels 1 and 2, graph colouring level 1; k = 8), B concentrated on one mode; ``eight`` and ``four``: one receipt each of the
    same prompts with 8 and 4 draws."""
    root = tmp_path_factory.mktemp("inputs")
    countdown = _rows("countdown", 1, 6, 300) + _rows("countdown", 2, 6, 400)
    graph = _rows("graph_coloring", 1, 6, 500)
    found = {}
    for name, seed, focus in (("A", 1, 0.0), ("A2", 2, 0.0), ("B", 3, 0.95)):
        folder = root / name
        evaluate_records(folder, "countdown", _sample(countdown, 8, seed, focus))
        evaluate_records(folder, "graph", _sample(graph, 8, seed + 10, focus))
        for extra in folder.glob("*.jsonl"):
            extra.unlink()
        found[name] = folder
    found["eight"] = evaluate_records(root / "8", "eight", _sample(countdown, 8, 1, 0.0))
    found["four"] = evaluate_records(root / "4", "four", _sample(countdown, 4, 2, 0.5))
    return found


def _differences(text: str) -> dict[tuple[str, str, str], float]:
    found = {}
    for level, domain, metric, value in DIFFERENCE.findall(text):
        found[(html.unescape(level), html.unescape(domain), html.unescape(metric))] = json.loads(
            html.unescape(value)
        )
    return found


def _expected(table: Any) -> dict[tuple[str, str, str], float]:
    """compare's rows keyed as the page keys them (level and domain as text, metric@k)."""
    return {
        (str(r["level"]), str(r["domain"]), r["metric"] + (f"@{r['k']}" if r["k"] is not None else "")): r[
            "estimate"
        ]
        for r in table.rows
    }


def test_report_html_of_two_directories_compares_part_by_part(runs: dict[str, Path], tmp_path: Path) -> None:
    a, b = str(runs["A"]), str(runs["B"])
    output, folder = tmp_path / "page.html", tmp_path / "figures"
    code = main(["report", a, b, "--html", str(output), "--label", f"baseline={a}", "--label", f"tuned={b}",
                 "--resamples", "30", "--figures", str(folder)])  # fmt: skip
    assert code == 0
    text = output.read_text(encoding="utf-8")
    assert "tuned compared with baseline" in text
    for label in ("baseline", "tuned"):  # a section per receipt of each run, named run · part
        for part in ("countdown", "graph"):
            assert f"{label} · {part}" in text
    shown = _differences(text)
    expected = _expected(api.compare(a, b, resamples=30))
    # per cell, per domain of several levels and over all cells, exactly compare's estimates
    assert {key[:2] for key in shown} == {("1", "countdown"), ("2", "countdown"), ("1", "graph_coloring"),
                                          ("None", "countdown"), ("None", "None")}  # fmt: skip
    assert shown and all(shown[key] == pytest.approx(expected[key], abs=1e-15) for key in shown)
    # each figure of the page: a standalone SVG and a PDF of it
    svgs = sorted(folder.glob("*.svg"))
    assert len(svgs) == len(re.findall(r'<figure data-figure="[a-z]+"><svg\b', text)) and svgs
    assert sorted(p.stem for p in folder.glob("*.pdf")) == [p.stem for p in svgs]


def test_three_runs_on_one_page_carry_compare_s_holm_adjustment(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    """The page adjusts over all its tests as `compare A A2 B` does: the same p-values, the same
    Holm-adjusted ones (the family is every tested row of both comparisons)."""
    paths = [runs["A"], runs["A2"], runs["B"]]
    api.render_html(paths, tmp_path / "three.html", resamples=20)
    text = (tmp_path / "three.html").read_text(encoding="utf-8")
    shown = sorted(json.loads(html.unescape(v)) for v in re.findall(r'data-p-holm="([^"]*)"', text))
    table = api.compare_runs(paths, resamples=20)
    expected = sorted(r["p_holm"] for r in table.rows if r["p_holm"] is not None)
    assert len(shown) == len(expected) == table.meta["multiple_comparisons"]["tests"] > 10
    assert shown == pytest.approx(expected, abs=1e-12)
    assert f"Holm–Bonferroni over all {len(expected)} tests of this page" in text


def test_one_suite_summary_is_one_run_page(runs: dict[str, Path], tmp_path: Path) -> None:
    """A directory of receipts alone renders as one run with a section per receipt (no comparison)."""
    summary = api.render_html([runs["A"]], tmp_path / "one.html", resamples=20)
    assert summary["runs"] == 1 and summary["receipts"] == 2 and summary["completed"] is True
    text = (tmp_path / "one.html").read_text(encoding="utf-8")
    assert "Curves overlaid" not in text and text.count('<section data-run="0">') == 2


def test_report_label_names_and_errors(runs: dict[str, Path], tmp_path: Path, capsys: Any) -> None:
    a = str(runs["eight"])
    with pytest.raises(SystemExit) as refused:
        main(["report", a, "--label", f"x={a}"])
    assert refused.value.code == 2 and "--label applies to --html only" in capsys.readouterr().err
    with pytest.raises(SystemExit) as refused:
        main(["report", a, "--html", str(tmp_path / "x.html"), "--label", "x=elsewhere.json"])
    assert refused.value.code == 2 and "not reported: elsewhere.json" in capsys.readouterr().err
    assert main(["report", a, "--html", str(tmp_path / "one.html"), "--label", f"my checkpoint={a}",
                 "--resamples", "20"]) == 0  # fmt: skip
    assert "<h2>my checkpoint: " in (tmp_path / "one.html").read_text(encoding="utf-8")
    # two runs given the same label are told apart by their file names, as compare tells them apart
    b = str(runs["four"])
    page = tmp_path / "same.html"
    code = main(["report", a, b, "--html", str(page), "--label", f"ckpt={a}", "--label", f"ckpt={b}",
                 "--allow-unequal-draws", "--resamples", "20"])  # fmt: skip
    assert code == 0
    assert "ckpt [four.json] compared with ckpt [eight.json]" in page.read_text(encoding="utf-8")


def test_report_html_unequal_draws_refused_or_compared_at_the_common_k(
    runs: dict[str, Path], tmp_path: Path, capsys: Any
) -> None:
    eight, four = str(runs["eight"]), str(runs["four"])
    with pytest.raises(SystemExit) as refused:
        main(["report", eight, four, "--html", str(tmp_path / "refused.html")])
    err = capsys.readouterr().err
    assert refused.value.code == 2 and "different draws per prompt (8 and 4)" in err
    assert "--allow-unequal-draws" in err and "Traceback" not in err
    assert not (tmp_path / "refused.html").exists()
    output = tmp_path / "unequal.html"
    assert (
        main(["report", eight, four, "--html", str(output), "--allow-unequal-draws", "--resamples", "20"])
        == 0
    )
    text = output.read_text(encoding="utf-8")
    assert "compared at k &lt;= 4 by exact unbiased estimators" in text
    shown = _differences(text)
    expected = _expected(api.compare(eight, four, allow_unequal_draws=True, resamples=20))
    assert shown and all(shown[key] == pytest.approx(expected[key], abs=1e-15) for key in shown)
    assert {key[2] for key in shown if "@" in key[2] and key[2].startswith(("pass_at_k", "distinct"))} == {
        "pass_at_k@4",
        "distinct_at_k@4",
    }


def test_trajectory_of_directories(runs: dict[str, Path], tmp_path: Path, capsys: Any) -> None:
    a, b = str(runs["A"]), str(runs["B"])
    table = api.trajectory([f"0={a}", f"10={b}"])
    # a step of several receipts: their cells read together, each exactly as stats reads them
    own = {(r["level"], r["domain"], r["metric"], r["k"]): r["estimate"] for r in api.curves(b).rows
           if r["level"] is not None}  # fmt: skip
    later = {(r["level"], r["domain"], r["metric"], r["k"]): r["estimate"] for r in table.rows
             if r["step"] == 10 and (r["level"], r["domain"], r["metric"], r["k"]) in own}  # fmt: skip
    assert later and all(later[key] == own[key] for key in later)
    assert {(r["level"], r["domain"]) for r in table.rows if r["metric"] == "retention_share"} == {
        (1, "countdown"), (2, "countdown"), (1, "graph_coloring")}  # fmt: skip
    listed = table.meta["runs"][1]
    assert listed["step"] == 10 and [p["part"] for p in listed["receipts"]] == ["countdown", "graph"]
    assert listed["label"] == "stats-test"  # no run.json label: the model id
    output, folder = tmp_path / "trajectory.html", tmp_path / "figures"
    assert main(["trajectory", f"0={a}", f"10={b}", "--html", str(output), "--figures", str(folder)]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert len(summary["figures"]) == 2 * 3  # an SVG and a PDF per cell's figure
    with pytest.raises(SystemExit) as refused:
        main(["trajectory", a, "--figures", str(folder)])
    assert refused.value.code == 2 and "--figures applies to --html only" in capsys.readouterr().err


_OBJECT = re.compile(rb"(\d+) 0 obj(.*?)endobj", re.S)
_STREAM = re.compile(rb"stream\r?\n(.*?)\r?\nendstream", re.S)
_ESCAPES = {
    b"n": b"\n",
    b"r": b"\r",
    b"t": b"\t",
    b"b": b"\b",
    b"f": b"\f",
    b"(": b"(",
    b")": b")",
    b"\\": b"\\",
}


def _objects(data: bytes) -> tuple[dict[int, bytes], dict[int, bytes]]:
    """A PDF's objects and their (inflated) streams, by object number."""
    bodies, streams = {}, {}
    for number, body in _OBJECT.findall(data):
        bodies[int(number)] = body
        found = _STREAM.search(body)
        if found:
            raw = found.group(1)
            streams[int(number)] = zlib.decompress(raw) if b"/FlateDecode" in body else raw
    return bodies, streams


def _cmap(text: bytes) -> dict[int, str]:
    """A ToUnicode CMap: bfchar pairs and bfrange entries (consecutive or as an array)."""
    mapping: dict[int, str] = {}
    for block in re.findall(rb"beginbfchar(.*?)endbfchar", text, re.S):
        for src, dst in re.findall(rb"<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>", block):
            mapping[int(src, 16)] = bytes.fromhex(dst.decode()).decode("utf-16-be")
    for block in re.findall(rb"beginbfrange(.*?)endbfrange", text, re.S):
        for lo, hi, dst in re.findall(
            rb"<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>\s*(<[0-9A-Fa-f]+>|\[[^\]]*\])", block
        ):
            codes = range(int(lo, 16), int(hi, 16) + 1)
            if dst.startswith(b"["):
                for code, each in zip(codes, re.findall(rb"<([0-9A-Fa-f]+)>", dst)):
                    mapping[code] = bytes.fromhex(each.decode()).decode("utf-16-be")
            else:
                start = int(dst[1:-1], 16)
                for offset, code in enumerate(codes):
                    mapping[code] = chr(start + offset)
    return mapping


def _literal(token: bytes) -> bytes:
    """A PDF literal string's bytes (between its parentheses), its escapes resolved."""
    out, i = bytearray(), 0
    while i < len(token):
        if token[i : i + 1] == b"\\":
            following = token[i + 1 : i + 2]
            octal = re.match(rb"[0-7]{1,3}", token[i + 1 : i + 4])
            if octal:
                out.append(int(octal.group(0), 8))
                i += 1 + len(octal.group(0))
                continue
            out += _ESCAPES.get(following, following)
            i += 2
            continue
        out += token[i : i + 1]
        i += 1
    return bytes(out)


_TOKENS = re.compile(rb"/(\w+)\s+[\d.]+\s+Tf|\((?:\\.|[^\\)])*\)|<[0-9A-Fa-f]*>|\bTJ\b|\bTj\b", re.S)


def _pdf_text(data: bytes) -> str:
    """The text a PDF draws, decoded through each font's ToUnicode map (matplotlib's Type 42 fonts
    write two-byte codes): a reader independent of the code that wrote the PDF."""
    bodies, streams = _objects(data)
    maps: dict[bytes, dict[int, str]] = {}
    for body in bodies.values():
        for name, number in re.findall(rb"/(F\d+) (\d+) 0 R", body):
            unicode = re.search(rb"/ToUnicode (\d+) 0 R", bodies[int(number)])
            if unicode:
                maps[name] = _cmap(streams[int(unicode.group(1))])
    contents = {int(n) for body in bodies.values() for n in re.findall(rb"/Contents (\d+) 0 R", body)}
    shown, font = [], b""
    for number in sorted(contents):
        for match in _TOKENS.finditer(streams[number]):
            token = match.group(0)
            if match.group(1):
                font = match.group(1)
            elif token in (b"TJ", b"Tj"):
                shown.append(" ")
            else:
                raw = bytes.fromhex(token[1:-1].decode()) if token.startswith(b"<") else _literal(token[1:-1])
                table = maps.get(font, {})
                shown.append("".join(table.get(int.from_bytes(raw[i : i + 2], "big"), "\ufffd")
                                     for i in range(0, len(raw), 2)))  # fmt: skip
    return "".join(shown)


def test_pdf_is_the_figure(runs: dict[str, Path], tmp_path: Path) -> None:
    """Each PDF is one page of the SVG's size with embedded TrueType fonts and the same texts."""
    folder = tmp_path / "figures"
    api.render_html([runs["eight"]], tmp_path / "page.html", resamples=20, figures_dir=folder)
    svgs = sorted(folder.glob("*.svg"))
    assert svgs
    for svg in svgs:
        data = svg.with_suffix(".pdf").read_bytes()
        assert data.startswith(b"%PDF-") and data.rstrip().endswith(b"%%EOF")
        assert len(re.findall(rb"/Type\s*/Page\b", data)) == 1
        assert b"/FontFile2" in data and b"/Type3" not in data  # TrueType, no Type 3 fonts
        assert b"CreationDate" not in data
        text = svg.read_text(encoding="utf-8")
        width, height = (
            float(v) for v in re.search(r'width="([\d.]+)pt" height="([\d.]+)pt"', text).groups()
        )
        box = [float(v) for v in re.search(rb"/MediaBox\s*\[([^\]]*)\]", data).group(1).split()]
        assert box[2] - box[0] == pytest.approx(width, abs=0.5) and box[3] - box[1] == pytest.approx(
            height, abs=0.5
        )
        shown = _pdf_text(data).replace(" ", "")
        labels = [html.unescape(t) for t in re.findall(r"<text\b[^>]*>([^<]+)</text>", text)]
        assert labels and all(label.replace(" ", "") in shown for label in labels), (svg.name, labels[:5])


@pytest.mark.parametrize(
    ("flags", "kept"),
    [
        (["--domains", "countdown"], {("1", "countdown"), ("2", "countdown"), ("None", "None")}),
        (["--levels", "2"], {("2", "countdown")}),
        (["--cells", "1:graph_coloring"], {("1", "graph_coloring")}),
    ],
)
def test_report_html_selects_cells_as_compare_does(
    runs: dict[str, Path], tmp_path: Path, flags: list[str], kept: set[tuple[str, str]]
) -> None:
    """``report A B --html --cells/--domains/--levels``: the page's differences are exactly
    ``compare A B`` with the same selection (its per-domain and all-cells rows pooled over the
    selected cells only), and its Holm family is that selection's."""
    a, b = str(runs["A"]), str(runs["B"])
    output = tmp_path / "selected.html"
    assert main(["report", a, b, "--html", str(output), "--resamples", "20", *flags]) == 0
    text = output.read_text(encoding="utf-8")
    shown = _differences(text)
    selection = {"--domains": "domains", "--levels": "levels", "--cells": "cells"}[flags[0]]
    value: Any = {"domains": ["countdown"], "levels": [2], "cells": [(1, "graph_coloring")]}[selection]
    table = api.compare_runs([a, b], resamples=20, **{selection: value})
    expected = _expected(table)
    assert {key[:2] for key in shown} == kept
    assert all(shown[key] == pytest.approx(expected[key], abs=1e-15) for key in shown)
    holm_shown = sorted(json.loads(html.unescape(v)) for v in re.findall(r'data-p-holm="([^"]*)"', text))
    assert holm_shown == pytest.approx(sorted(r["p_holm"] for r in table.rows if r["p_holm"] is not None))


def test_report_selection_flags_need_html_and_a_selected_cell(
    runs: dict[str, Path], tmp_path: Path, capsys: Any
) -> None:
    a, b = str(runs["A"]), str(runs["B"])
    with pytest.raises(SystemExit) as refused:
        main(["report", str(next(runs["A"].glob("*.json"))), "--domains", "countdown"])
    assert refused.value.code == 2 and "--domains applies to --html only" in capsys.readouterr().err
    with pytest.raises(SystemExit) as refused:
        main(["report", a, b, "--html", str(tmp_path / "none.html"), "--domains", "mathir"])
    assert refused.value.code == 2 and f"{a} has no cell among the selected cells" in capsys.readouterr().err
