"""Issue #34 items 6, 7 and 10, and visible control characters: what a page does with hostile text.

Each test failed before its fix: a ``$…$`` model id raised matplotlib's mathtext ParseFatalException
(or was drawn as math); SVG compaction shortened numbers inside ``<text>`` (tick labels −0.010 →
−0.01, ``gpt-4.0125-preview`` → ``gpt-4.01-preview``) and prefixed ``url(#abc)`` inside text; every
mode of an example prompt was listed (a 4,096-mode prompt made a page of megabytes); U+202E
reached the page raw.
"""

from __future__ import annotations

import re

import pytest

pytest.importorskip("matplotlib", reason="figures need the 'plot' extra")

from modebench.render import figures  # noqa: E402
from modebench.render.digest import MODES_SHOWN, _example  # noqa: E402
from modebench.render.page import esc  # noqa: E402
from modebench.render.run_section import _prompt  # noqa: E402

_TEXT = re.compile(r"<text\b[^>]*>([^<]*)</text>")


def _texts(svg: str) -> list[str]:
    return _TEXT.findall(svg)


def test_model_ids_with_dollars_are_literal_text() -> None:
    rows = [("ckpt$step_1_final$", -0.004, -0.01, 0.0), ("model $x^2$", 0.002, -0.001, 0.004)]
    svg = figures.differences_svg(rows, "difference $B - A$", "runs $a$ and $b$", "alt")
    texts = _texts(svg)
    assert "ckpt$step_1_final$" in texts and "model $x^2$" in texts
    assert "difference $B - A$" in texts and "runs $a$ and $b$" in texts
    steps = figures.steps_svg(
        [("p", "y $u$", [figures.StepSeries("run $1$", 0, [0, 1], [0.1, 0.2])], 0.0)], "t", "a"
    )
    assert "y $u$" in _texts(steps)


def test_compaction_never_rewrites_text() -> None:
    rows = [("gpt-4.0125-preview", -0.004, -0.01, 0.0), ("label url(#abc) 3.14159", -0.002, -0.006, 0.001)]
    svg = figures.differences_svg(rows, "x", "t", "alt")
    texts = _texts(svg)
    assert "gpt-4.0125-preview" in texts and "label url(#abc) 3.14159" in texts
    ticks = [t for t in texts if re.fullmatch(r"[−-]?\d+\.\d+", t)]
    assert "−0.010" in ticks and "−0.005" in ticks or "−0.008" in ticks
    assert len(ticks) == len(set(ticks))  # no two tick labels read the same
    # geometry is still compacted (two decimals in path data) and ids are still page-unique
    assert not re.search(r'\sd="[^"]*\.\d{3}', svg)
    assert re.search(r'id="f\d+-', svg)


def test_example_prompts_list_the_top_modes_and_count_the_rest() -> None:
    modes = {f"mode-{i:05d}": (3 if i < 5 else 1) for i in range(4096)}
    attempts = [{"verified": True, "canonical_key": key, "graded_text": f"text {key}"} for key in modes]
    example = _example("p" * 100_000, attempts, modes)
    assert len(example.modes) == MODES_SHOWN and example.more == 4096 - MODES_SHOWN
    assert [m.key for m in example.modes[:5]] == [f"mode-{i:05d}" for i in range(5)]
    html = _prompt(example)
    assert f"{4096 - MODES_SHOWN:,} more modes" in html and "4,096 verified modes" in html
    assert "more characters]" in html  # the 100,000-character id is shortened visibly
    assert len(html) < 20_000


def test_control_and_bidi_characters_are_shown() -> None:
    shown = esc("abc\u202etxt.exe\x07\u200b")
    assert "\u202e" not in shown and "\x07" not in shown and "\u200b" not in shown
    assert shown == "abc&lt;U+202E&gt;txt.exe&lt;U+0007&gt;&lt;U+200B&gt;"
    assert esc("line\nnext\ttab") == "line\nnext\ttab"


@pytest.mark.slow  # renders every figure to SVG and PDF with matplotlib
def test_each_figure_exports_as_a_standalone_svg_and_pdf(tmp_path, report_receipts) -> None:  # type: ignore[no-untyped-def]
    import xml.etree.ElementTree as ElementTree

    from modebench import api

    out = tmp_path / "page.html"
    summary = api.render_html([report_receipts["walkthrough"], report_receipts["collapsed"]], out,
                              resamples=20, figures_dir=tmp_path / "figures")  # fmt: skip
    written = [path for path in summary["figures"] if path.endswith(".svg")]
    assert len(written) == out.read_text(encoding="utf-8").count("<svg")
    # beside each SVG, the same figure as a PDF (tests/render/test_run_inputs.py reads them back)
    assert sorted(summary["figures"]) == sorted([*written, *(p[: -len(".svg")] + ".pdf" for p in written)])
    for path in written:
        root = ElementTree.parse(path).getroot()  # well-formed XML on its own
        assert root.tag == "{http://www.w3.org/2000/svg}svg" and root.get("viewBox")
    with pytest.raises(Exception, match="never overwritten"):
        api.render_html([report_receipts["walkthrough"], report_receipts["collapsed"]], tmp_path / "again.html",
                        resamples=20, figures_dir=tmp_path / "figures")  # fmt: skip
