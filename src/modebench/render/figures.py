"""The report's figures: matplotlib drawings returned as inline SVG text.

Every figure is drawn on a bare :class:`matplotlib.figure.Figure` (no pyplot state), with the
Okabe–Ito palette (distinguishable under the common colour-vision deficiencies), labelled axes
with units, and a title saying what is compared. The SVG keeps text as text
(``svg.fonttype = 'none'``: small, searchable, no embedded fonts), has no external references,
carries a ``<title>`` as its text alternative, and gets a per-figure id salt so that several
figures on one page never share an element id.
"""

from __future__ import annotations

import html
import io
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from modebench.contracts import install_hint
from modebench.validation import InputError

__all__ = [
    "PALETTE",
    "STATUS_COLOURS",
    "Series",
    "StepSeries",
    "curves_svg",
    "differences_svg",
    "retention_svg",
    "status_svg",
    "steps_svg",
]

PLOT_EXTRA_MESSAGE = f"the HTML report needs the 'plot' extra: {install_hint('plot')}"
# Okabe & Ito (2008), "Color Universal Design": black first is left out (used for text).
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")
STATUS_COLOURS = {
    "correct": "#009E73",
    "incorrect": "#E69F00",
    "malformed": "#CC79A7",
    "unscorable": "#D55E00",
}
_STYLE = {
    "svg.fonttype": "none",
    "font.size": 9,
    "font.family": "sans-serif",
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
}
_HEADER = re.compile(r"\A.*?(?=<svg)", re.S)
_METADATA = re.compile(r"\s*<metadata>.*?</metadata>", re.S)  # RDF boilerplate: bytes, no information
_REFERENCE = re.compile(r'(\sid="|url\(#|href="#)')
# Size: matplotlib writes six decimals, indents every element, names every group and repeats its
# whole font fallback list on every text; none of it changes what the browser draws.
_DIGITS = re.compile(r"(\.\d\d)\d+")
_BETWEEN = re.compile(r">\s+<")
_NEWLINES = re.compile(r"\s*\n\s*")
_FONTS = re.compile(r"font-family: [^;\"]*")
_NO_ROTATION = re.compile(r' transform="rotate\(-0 [^"]*\)"')
_IDS = re.compile(r' id="([^"]+)"')
_USED = re.compile(r'(?:url\(#|href="#)([^")]+)')
_counter = [0]


@dataclass(frozen=True)
class Series:
    label: str
    colour: int  # index into PALETTE
    ks: Sequence[int]
    estimate: Sequence[float | None]
    low: Sequence[float | None]
    high: Sequence[float | None]


@dataclass(frozen=True)
class StepSeries:
    label: str
    colour: int  # index into PALETTE
    steps: Sequence[int]
    values: Sequence[float | None]


def _figure(width: float, height: float, columns: int = 1, *, fixed: bool = False) -> tuple[Any, Any]:
    """A bare figure; ``fixed`` margins skip constrained layout, which costs most of a draw."""
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise InputError(PLOT_EXTRA_MESSAGE) from None
    figure = Figure(figsize=(width, height), layout=None if fixed else "constrained")
    if fixed:
        figure.subplots_adjust(left=0.1, right=0.98, bottom=0.17, top=0.8, wspace=0.32)
    axes = figure.subplots(1, columns, squeeze=False)[0]
    return figure, axes


def _svg(figure: Any, alt: str) -> str:
    import matplotlib

    _counter[0] += 1
    buffer = io.StringIO()
    settings: Any = {**_STYLE, "svg.hashsalt": f"modebench-figure-{_counter[0]}"}
    with matplotlib.rc_context(settings):
        figure.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    text = _METADATA.sub("", _HEADER.sub("", buffer.getvalue(), count=1), count=1)
    text = _compact(text)
    # matplotlib numbers its groups per figure (figure_1, axes_1, …): make every id page-unique.
    prefix = f"f{_counter[0]}-"
    text = _REFERENCE.sub(lambda m: m.group(1) + prefix, text)
    ident = f"fig{_counter[0]}-title"
    opening = text.index(">") + 1
    return (
        text[: opening - 1]
        + f' role="img" aria-labelledby="{ident}">'
        + f'<title id="{ident}">{html.escape(alt)}</title>'
        + text[opening:]
    )


def _compact(text: str) -> str:
    """The same drawing in fewer bytes (see the patterns above); referenced ids are kept."""
    used = set(_USED.findall(text))
    text = _IDS.sub(lambda m: m.group(0) if m.group(1) in used else "", text)
    text = _FONTS.sub("font-family: 'DejaVu Sans', sans-serif", text)
    text = _NO_ROTATION.sub("", text)
    text = _DIGITS.sub(r"\1", text)
    return _NEWLINES.sub(" ", _BETWEEN.sub("><", text)).replace("<g></g>", "")


def _styled(draw: Any) -> Any:
    import matplotlib

    settings: Any = _STYLE
    with matplotlib.rc_context(settings):
        return draw()


def curves_svg(panels: Sequence[tuple[str, str, Sequence[Series]]], title: str, alt: str) -> str:
    """Side-by-side panels of estimates over k with shaded interval bands.

    ``panels``: (panel title, y-axis label, series); every series is one run of one cell.
    """

    def draw() -> str:
        # One per cell and run: fixed margins keep a 25-cell page fast.
        figure, axes = _figure(2.9 * len(panels), 2.5, len(panels), fixed=True)
        for ax, (name, ylabel, series) in zip(axes, panels):
            for one in series:
                points = [
                    (k, e, lo, hi)
                    for k, e, lo, hi in zip(one.ks, one.estimate, one.low, one.high)
                    if e is not None
                ]
                if not points:
                    continue
                ks = [p[0] for p in points]
                colour = PALETTE[one.colour % len(PALETTE)]
                # Line style and marker repeat the colour's message, so runs differ without colour too.
                style = ("-", "--", ":", "-.")[one.colour % 4]
                marker = ("o", "s", "^", "D")[one.colour % 4]
                ax.plot(ks, [p[1] for p in points], linestyle=style, marker=marker, markersize=3.5, color=colour,
                        label=one.label)  # fmt: skip
                bands = [(p[0], p[2], p[3]) for p in points if p[2] is not None and p[3] is not None]
                if bands:
                    ax.fill_between([b[0] for b in bands], [b[1] for b in bands], [b[2] for b in bands],
                                    color=colour, alpha=0.2, linewidth=0)  # fmt: skip
            ax.set_xscale("log", base=2)
            ax.set_xlabel("k (draws per prompt, log scale)")
            ax.set_ylabel(ylabel)
            ax.set_title(name)
            ax.xaxis.set_major_formatter("{x:g}")
            if len(series) > 1:
                ax.legend(frameon=False, fontsize=7, loc="best")
        figure.suptitle(title)
        return _svg(figure, alt)

    return str(_styled(draw))


def status_svg(rows: Sequence[tuple[str, Mapping[str, int]]], title: str, alt: str) -> str:
    """Horizontal stacked bars: the share of attempts per status, one bar per cell."""

    def draw() -> str:
        figure, axes = _figure(6.8, 0.5 + 0.32 * max(len(rows), 1))
        ax = axes[0]
        labels = [label for label, _ in rows]
        left = [0.0] * len(rows)
        for status, colour in STATUS_COLOURS.items():
            shares = []
            for _, counts in rows:
                total = sum(counts.values()) or 1
                shares.append(100.0 * counts.get(status, 0) / total)
            ax.barh(labels, shares, left=left, color=colour, label=status)
            left = [a + b for a, b in zip(left, shares)]
        ax.set_xlim(0, 100)
        ax.invert_yaxis()
        ax.set_xlabel("share of graded attempts (%)")
        ax.set_title(title)
        ax.legend(ncols=4, frameon=False, loc="lower center", bbox_to_anchor=(0.5, 1.08), fontsize=8)
        return _svg(figure, alt)

    return str(_styled(draw))


def differences_svg(
    rows: Sequence[tuple[str, float, float | None, float | None]], xlabel: str, title: str, alt: str
) -> str:
    """A forest plot: one paired difference B − A per row with its interval; zero marked."""

    def draw() -> str:
        figure, axes = _figure(6.8, 0.7 + 0.3 * max(len(rows), 1))
        ax = axes[0]
        for y, (_, estimate, low, high) in enumerate(rows):
            if low is not None and high is not None:
                ax.plot([low, high], [y, y], color=PALETTE[0], linewidth=2)
            ax.plot([estimate], [y], marker="D", color=PALETTE[5], markersize=4)
        ax.axvline(0.0, color="#000000", linewidth=0.8)
        ax.set_yticks(range(len(rows)), [label for label, *_ in rows])
        ax.invert_yaxis()
        ax.set_xlabel(xlabel)
        ax.set_title(title)
        return _svg(figure, alt)

    return str(_styled(draw))


def retention_svg(rows: Sequence[tuple[str, float, float, float]], title: str, alt: str) -> str:
    """Stacked bars per cell: mean modes per prompt B keeps, loses and gains relative to A."""

    def draw() -> str:
        figure, axes = _figure(6.8, 0.7 + 0.3 * max(len(rows), 1))
        ax = axes[0]
        labels = [label for label, *_ in rows]
        left = [0.0] * len(rows)
        parts = (("kept", 1, PALETTE[2]), ("lost", 2, PALETTE[5]), ("gained", 3, PALETTE[0]))
        for name, column, colour in parts:
            values = [float(row[column]) for row in rows]
            ax.barh(labels, values, left=left, color=colour, label=name)
            left = [a + b for a, b in zip(left, values)]
        ax.invert_yaxis()
        ax.set_xlabel("modes per prompt (mean count of canonical keys)")
        ax.set_title(title)
        ax.legend(ncols=3, frameon=False, loc="lower center", bbox_to_anchor=(0.5, 1.08), fontsize=8)
        return _svg(figure, alt)

    return str(_styled(draw))


def steps_svg(panels: Sequence[tuple[str, str, Sequence[StepSeries]]], title: str, alt: str) -> str:
    """Small multiples over training steps, three per row: (panel title, y-axis label, series)."""

    def draw() -> str:
        try:
            from matplotlib.figure import Figure
        except ImportError:
            raise InputError(PLOT_EXTRA_MESSAGE) from None
        rows = (len(panels) + 2) // 3
        figure = Figure(figsize=(9.6, 2.5 * rows + 0.5))
        figure.subplots_adjust(left=0.07, right=0.99, bottom=0.1, top=0.88, wspace=0.34, hspace=0.55)
        grid = figure.subplots(rows, 3, squeeze=False)
        axes = [ax for row in grid for ax in row]
        for ax, (name, ylabel, series) in zip(axes, panels):
            for one in series:
                points = [(s, v) for s, v in zip(one.steps, one.values) if v is not None]
                if not points:
                    continue
                style = ("-", "--", ":", "-.")[one.colour % 4]
                marker = ("o", "s", "^", "D")[one.colour % 4]
                ax.plot([p[0] for p in points], [p[1] for p in points], linestyle=style, marker=marker,
                        markersize=3.5, color=PALETTE[one.colour % len(PALETTE)], label=one.label)  # fmt: skip
            every = sorted({step for one in series for step in one.steps})
            if len(every) > 1:  # the same step axis on every panel, even where a value is undefined
                pad = (every[-1] - every[0]) * 0.05
                ax.set_xlim(every[0] - pad, every[-1] + pad)
            ax.set_title(name)
            ax.set_xlabel("training step")
            ax.set_ylabel(ylabel)
            if len(series) > 1:
                ax.legend(frameon=False, fontsize=7, loc="best")
        for ax in axes[len(panels) :]:
            ax.set_visible(False)
        figure.suptitle(title)
        return _svg(figure, alt)

    return str(_styled(draw))
