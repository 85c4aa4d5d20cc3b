"""The report's figures: matplotlib drawings returned as inline SVG text.

Every figure is drawn on a bare :class:`matplotlib.figure.Figure` (no pyplot state), with the
Okabe–Ito palette (distinguishable under the common colour-vision deficiencies), labelled axes
with units, and a title saying what is compared. The SVG keeps text as text
(``svg.fonttype = 'none'``: small, searchable, no embedded fonts), has no external references,
carries a ``<title>`` as its text alternative, and gets a per-figure id salt so that several
figures on one page never share an element id.

Speed (a page draws tens of panels): every figure has fixed geometry (no layout engine, which
draws a figure twice), fixed tick positions, and no tick marks (the grid carries the reference);
curves over k are drawn as small multiples, one figure per metric with a panel per cell whose
axes are drawn once and reused for every metric (only the data and the y scale change).
"""

from __future__ import annotations

import contextlib
import html
import io
import math
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from modebench.contracts import install_hint
from modebench.validation import InputError

__all__ = [
    "PALETTE",
    "STATUS_COLOURS",
    "Grid",
    "Series",
    "StepSeries",
    "collect_pdfs",
    "grids_svg",
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
    # Every text of a figure is the user's (model ids, labels) or ours, never TeX: a "$" is a dollar.
    "text.parse_math": False,
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
# While a collection is open (:func:`collect_pdfs`), every figure is also saved as a PDF, keyed by
# the id of its SVG <title> (``fig<N>-title``), so a page's figures can be exported for a paper.
_pdfs: list[dict[str, bytes]] = []


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
    low: Sequence[float | None] = ()  # bootstrap interval per step (empty: no band)
    high: Sequence[float | None] = ()

    def lows(self) -> Sequence[float | None]:
        return self.low or [None] * len(self.steps)

    def highs(self) -> Sequence[float | None]:
        return self.high or [None] * len(self.steps)


@dataclass(frozen=True)
class Grid:
    """One small-multiples figure: a panel per cell (``panels`` follows the panel titles)."""

    title: str
    ylabel: str
    alt: str
    panels: Sequence[Sequence[Series]]
    probability: bool  # the y axis spans 0 to 1; otherwise 0 to the largest value shown


def _text_width(text: str, size: float) -> float:
    """Width in inches of one line of ``text`` at ``size`` points in the figures' font (measured
    by matplotlib, plus a margin for the browser's own text layout)."""
    from matplotlib.font_manager import FontProperties  # noqa: PLC0415 - optional extra: plot (matplotlib)
    from matplotlib.textpath import TextToPath  # noqa: PLC0415 - optional extra: plot (matplotlib)

    width, _, _ = TextToPath().get_text_width_height_descent(
        text, FontProperties(family="DejaVu Sans", size=size), ismath=False
    )
    return float(width) / 72 * 1.08


def _wrap(text: str, inches: float, size: float) -> str:
    """``text`` broken into lines no wider than ``inches`` (words kept whole where they fit)."""
    lines: list[str] = []
    for paragraph in text.split("\n"):
        line = ""
        for word in paragraph.split(" "):
            candidate = f"{line} {word}" if line else word
            if _text_width(candidate, size) <= inches:
                line = candidate
                continue
            if line:
                lines.append(line)
            line = ""
            while _text_width(word, size) > inches and len(word) > 1:  # a word wider than a line
                cut = len(word)
                while cut > 1 and _text_width(word[:cut], size) > inches:
                    cut -= 1
                lines.append(word[:cut])
                word = word[cut:]
            line = word
        lines.append(line)
    return "\n".join(lines)


def _lines(text: str) -> int:
    return text.count("\n") + 1


def _figure_class() -> Any:
    try:
        from matplotlib.figure import Figure  # noqa: PLC0415 - optional extra: plot (matplotlib)
    except ImportError:
        raise InputError(PLOT_EXTRA_MESSAGE) from None
    return Figure


_BARS_WIDTH = 6.8
_LABELS_WIDTH = 3.0  # inches at most for the row labels left of the bars (wrapped beyond)


def _bars_figure(
    labels: Sequence[str], rows: int, top: float, title: str = "", xlabel: str = ""
) -> tuple[Any, Any, list[str], str, str]:
    """One horizontal-bar axes with fixed margins: the left one fits the longest row label.

    ``top`` inches hold the title (one line) and a legend; labels wider than the label column and
    titles wider than the figure are wrapped, and the figure grows to hold the extra lines.
    Returns (figure, axes, wrapped labels, wrapped title, x label wrapped to the axes' width).
    """
    width = _BARS_WIDTH
    wrapped = [_wrap(label, _LABELS_WIDTH, 9) for label in labels]
    heading = _wrap(title, width - 0.3, 10) if title else ""
    top += 0.19 * (_lines(heading) - 1)
    per_row = 0.3 * max((_lines(w) for w in wrapped), default=1)
    left = 0.25 + max((_text_width(line, 9) for w in wrapped for line in w.split("\n")), default=0.3)
    xlabel = _wrap(xlabel, width - left - 0.35, 9) if xlabel else ""
    bottom = 0.5 + 0.17 * (_lines(xlabel) - 1)
    height = top + bottom + 0.05 + per_row * max(rows, 1)
    figure = _figure_class()(figsize=(width, height))
    figure.subplots_adjust(
        left=left / width, right=1 - 0.25 / width, top=1 - top / height, bottom=bottom / height
    )
    return figure, figure.subplots(1, 1, squeeze=False)[0][0], wrapped, heading, xlabel


def _row_labels(ax: Any, labels: Sequence[str]) -> None:
    """One row per label, top to bottom, labelled by plain text left of the axes.

    Not y ticks: a tick is five artists, a tick per row costs far more than the row's bars. The
    rows need no horizontal grid line either.
    """
    ax.set_ylim(len(labels) - 0.5, -0.5)
    ax.set_yticks([])
    ax.grid(False, axis="y")
    place = ax.get_yaxis_transform()  # x in axes fractions, y in rows
    for row, label in enumerate(labels):
        ax.text(-0.015, row, label, transform=place, ha="right", va="center")


def _svg(figure: Any, alt: str) -> str:
    _counter[0] += 1
    buffer = io.StringIO()
    # Called inside _styled's rc_context: the salt is undone with the rest of the style.
    import matplotlib  # noqa: PLC0415 - optional extra: plot (matplotlib)

    matplotlib.rcParams["svg.hashsalt"] = f"modebench-figure-{_counter[0]}"
    figure.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    text = _METADATA.sub("", _HEADER.sub("", buffer.getvalue(), count=1), count=1)
    text = _compact(text)
    # matplotlib numbers its groups per figure (figure_1, axes_1, …): make every id page-unique.
    prefix = f"f{_counter[0]}-"
    text = _geometry_only(text, lambda markup: _REFERENCE.sub(lambda m: m.group(1) + prefix, markup))
    ident = f"fig{_counter[0]}-title"
    if _pdfs:
        _pdfs[-1][ident] = _pdf(figure)
    opening = text.index(">") + 1
    return (
        text[: opening - 1]
        + f' role="img" aria-labelledby="{ident}">'
        + f'<title id="{ident}">{html.escape(alt)}</title>'
        + text[opening:]
    )


def _pdf(figure: Any) -> bytes:
    """The figure as a standalone PDF: fonts embedded as TrueType (Type 42, which publishers
    accept, unlike Type 3), no creation date (the same figure gives the same bytes)."""
    import matplotlib  # noqa: PLC0415 - optional extra: plot (matplotlib)

    buffer = io.BytesIO()
    with matplotlib.rc_context({"pdf.fonttype": 42}):
        figure.savefig(
            buffer, format="pdf", metadata={"CreationDate": None, "Creator": None, "Producer": None}
        )
    return buffer.getvalue()


@contextlib.contextmanager
def collect_pdfs() -> Iterator[dict[str, bytes]]:
    """Inside the block, every figure drawn is also kept as a PDF: ``{svg title id: PDF bytes}``."""
    found: dict[str, bytes] = {}
    _pdfs.append(found)
    try:
        yield found
    finally:
        _pdfs.remove(found)


# The content of a <text> element (or <title>): what the figure says, which no rewrite may touch.
_TEXT_CONTENT = re.compile(r"(<(?:text|title)\b[^>]*>)(.*?)(</(?:text|title)>)", re.S)


def _geometry_only(text: str, rewrite: Any) -> str:
    """``rewrite`` applied to everything but the contents of text elements (kept byte for byte)."""
    parts = []
    kept: list[str] = []
    last = 0
    for match in _TEXT_CONTENT.finditer(text):
        parts.append(text[last : match.start(2)])
        kept.append(match.group(2))
        last = match.end(2)
    parts.append(text[last:])
    marker = "\x00"  # never in SVG text (XML forbids it), so it cannot collide with content
    joined = rewrite(marker.join(parts)).split(marker)
    return "".join(piece + (kept[i] if i < len(kept) else "") for i, piece in enumerate(joined))


def _compact(text: str) -> str:
    """The same drawing in fewer bytes (see the patterns above); referenced ids are kept.

    Only geometry and attributes are rewritten: text contents (tick labels such as ``−0.005``,
    model ids such as ``gpt-4.0125-preview``, a label reading ``url(#abc)``) stay as written."""

    def rewrite(markup: str) -> str:
        used = set(_USED.findall(markup))
        markup = _IDS.sub(lambda m: m.group(0) if m.group(1) in used else "", markup)
        markup = _FONTS.sub("font-family: 'DejaVu Sans', sans-serif", markup)
        markup = _NO_ROTATION.sub("", markup)
        markup = _DIGITS.sub(r"\1", markup)
        return _NEWLINES.sub(" ", _BETWEEN.sub("><", markup)).replace("<g></g>", "")

    return _geometry_only(text, rewrite)


def _styled(draw: Any) -> Any:
    import matplotlib  # noqa: PLC0415 - optional extra: plot (matplotlib)

    settings: Any = _STYLE
    with matplotlib.rc_context(settings):
        return draw()


# Small multiples, in inches: panel size, gaps (the vertical one holds a panel title) and margins.
_COLUMNS = 5
_PANEL = (1.75, 1.3)
_GAP = (0.22, 0.42)
_MARGIN = {"left": 0.75, "right": 0.15, "top": 0.95, "bottom": 0.55}
_STYLES = ("-", "--", ":", "-.")
_MARKERS = ("o", "s", "^", "D")


def _k_ticks(largest: int) -> list[int]:
    ticks = [k for k in (2**e for e in range(largest.bit_length())) if k <= largest]
    return ticks + ([largest] if ticks[-1] != largest else [])


def _y_ticks(probability: bool, top: float) -> tuple[tuple[float, float], list[float]]:
    if probability:
        return (-0.03, 1.03), [0.0, 0.5, 1.0]
    from matplotlib.ticker import MaxNLocator  # noqa: PLC0415 - optional extra: plot (matplotlib)

    ticks = [float(t) for t in MaxNLocator(nbins=4, steps=[1, 2, 2.5, 5, 10]).tick_values(0.0, top)]
    ticks = [t for t in ticks if t <= top * 1.0001 + 1e-12] or [0.0]
    return (-0.03 * top, top * 1.05), ticks


def grids_svg(titles: Sequence[str], grids: Sequence[Grid]) -> list[str]:
    """Estimates over k with shaded interval bands: one SVG per grid, a panel per title.

    Every panel of a grid has the same scales (x: k on a log-2 axis up to the largest k shown;
    y: 0 to 1 for a probability, else 0 to the largest value), so panels compare at a glance.
    Each series is one run of one cell: colour, line style and marker all say which run.

    Because the scales are shared, the panels are drawn as regions of ONE matplotlib axes
    (coordinates in inches): a run's curves in every panel are one line, its bands one
    collection, all frames and grid lines one collection each, the tick labels only on the outer
    panels. A matplotlib axes per panel would cost tens of milliseconds each, for the same picture.
    """

    def draw() -> list[str]:
        from matplotlib.collections import LineCollection, PolyCollection  # noqa: PLC0415 - optional extra: plot (matplotlib)

        count = max(len(titles), 1)
        columns = min(_COLUMNS, count)
        rows = math.ceil(count / columns)
        (pw, ph), (gx, gy), m = _PANEL, _GAP, _MARGIN
        every = [one for grid in grids for panel in grid.panels for one in panel]
        names = list(dict.fromkeys(one.label for one in every))
        area = (columns * pw + (columns - 1) * gx, rows * ph + (rows - 1) * gy)
        width = m["left"] + area[0] + m["right"]
        # Titles and the legend of the runs are wrapped to the figure's width; the top margin
        # grows with their lines (one geometry for every grid of the figure).
        headings = [_wrap(grid.title, width - 0.3, 10.5) for grid in grids]
        title_lines = max((_lines(h) for h in headings), default=1)
        legend_rows, legend_labels, legend_columns = 0, names, 1
        if len(names) > 1:
            legend_labels = [_wrap(name, width - 0.9, 8) for name in names]
            entry = max(_text_width(line, 8) for name in legend_labels for line in name.split("\n")) + 0.6
            legend_columns = max(1, min(len(names), int((width - 0.3) // entry)))
            per_row = max(_lines(name) for name in legend_labels)
            legend_rows = math.ceil(len(names) / legend_columns) * per_row
        top = 0.2 + 0.2 * title_lines + 0.17 * legend_rows + (0.1 if legend_rows else 0) + 0.3
        height = top + area[1] + m["bottom"]
        figure = _figure_class()(figsize=(width, height))
        ax = figure.add_axes((m["left"] / width, m["bottom"] / height, area[0] / width, area[1] / height))
        ax.set_axis_off()
        ax.set_autoscale_on(False)
        ax.set_xlim(0, area[0])
        ax.set_ylim(-area[1], 0)
        largest = max((k for one in every for k in one.ks), default=1)
        ticks = _k_ticks(largest)
        xlim = (-0.25, math.log2(largest) + 0.25)
        # The lower-left corner of each panel, in inches from the area's top left.
        corners = [((i % columns) * (pw + gx), -(i // columns) * (ph + gy) - ph) for i in range(len(titles))]

        def at_x(corner: tuple[float, float], x: float) -> float:
            return corner[0] + (x - xlim[0]) / (xlim[1] - xlim[0]) * pw

        frames = []
        for i, (title, corner) in enumerate(zip(titles, corners)):
            x0, y0 = corner
            frames.append([(x0, y0 + ph), (x0, y0), (x0 + pw, y0)])  # left and bottom spines
            ax.text(x0 + pw / 2, y0 + ph + 0.05, title, fontsize=8, ha="center", va="bottom")
            if i + columns >= len(titles):  # the bottom panel of its column: k labels
                for k in ticks:
                    ax.text(at_x(corner, math.log2(k)), y0 - 0.05, str(k), fontsize=7, ha="center", va="top")
        ax.add_collection(LineCollection(frames, colors="#000000", linewidths=0.8), autolim=False)
        figure.supxlabel("k (draws per prompt, log scale)", y=0.12 / height, va="bottom", fontsize=9)
        ylabel = figure.supylabel("", x=0.12 / width, ha="left", fontsize=9)
        heading = figure.suptitle("", y=1 - 0.12 / height, va="top", fontsize=10.5)
        legend_top = 1 - (0.12 + 0.2 * title_lines + 0.08) / height
        drawn = []
        data: list[Any] = []
        for grid in grids:
            for artist in data:  # the frames, titles and k labels stay; the previous grid's data goes
                artist.remove()
            data.clear()
            for old in list(figure.legends):
                old.remove()
            values = [v for panel in grid.panels for one in panel for v in (*one.estimate, *one.high)
                      if v is not None]  # fmt: skip
            ylim, yticks = _y_ticks(grid.probability, max(max(values, default=1.0), 1.0))

            def at_y(corner: tuple[float, float], y: float) -> float:
                return corner[1] + (y - ylim[0]) / (ylim[1] - ylim[0]) * ph  # noqa: B023

            lines = []
            for i, corner in enumerate(corners):
                x0, x1 = corner[0], corner[0] + pw
                lines += [[(at_x(corner, math.log2(k)), corner[1]), (at_x(corner, math.log2(k)), corner[1] + ph)]
                          for k in ticks] + [[(x0, at_y(corner, y)), (x1, at_y(corner, y))] for y in yticks]  # fmt: skip
                if i % columns == 0:  # the left panel of its row: value labels
                    data += [ax.text(x0 - 0.05, at_y(corner, y), format(y, "g"), fontsize=7, ha="right",
                                     va="center") for y in yticks]  # fmt: skip
            data.append(ax.add_collection(LineCollection(lines, colors="#000000", alpha=0.12, linewidths=0.8,
                                                         zorder=0.5), autolim=False))  # fmt: skip
            # Per run: all its panels' points in one line (NaN breaks it between panels), all its
            # bands in one collection.
            curves: dict[int, tuple[str, list[float], list[float], list[list[tuple[float, float]]]]] = {}
            for corner, panel in zip(corners, grid.panels):
                for one in panel:
                    points = [(at_x(corner, math.log2(k)), e, lo, hi) for k, e, lo, hi
                              in zip(one.ks, one.estimate, one.low, one.high) if e is not None]  # fmt: skip
                    if not points:
                        continue
                    _, xs, ys, bands = curves.setdefault(one.colour, (one.label, [], [], []))
                    xs += [p[0] for p in points] + [math.nan]
                    ys += [at_y(corner, p[1]) for p in points] + [math.nan]
                    band = [(p[0], p[2], p[3]) for p in points if p[2] is not None and p[3] is not None]
                    if band:
                        bands.append([(x, at_y(corner, lo)) for x, lo, _ in band]
                                     + [(x, at_y(corner, hi)) for x, _, hi in reversed(band)])  # fmt: skip
            handles = []
            for colour, (label, xs, ys, bands) in sorted(curves.items()):
                shade = PALETTE[colour % len(PALETTE)]
                if bands:
                    data.append(ax.add_collection(PolyCollection(bands, facecolors=shade, alpha=0.2, linewidths=0),
                                                  autolim=False))  # fmt: skip
                (line,) = ax.plot(xs, ys, linestyle=_STYLES[colour % 4], marker=_MARKERS[colour % 4], markersize=3,
                                  linewidth=1.2, color=shade, label=label)  # fmt: skip
                data.append(line)
                handles.append(line)
            ylabel.set_text(_wrap(grid.ylabel, height - 0.3, 9))
            heading.set_text(headings[grids.index(grid)])
            if len(handles) > 1:
                wrapped = dict(zip(names, legend_labels))
                figure.legend(handles, [wrapped.get(h.get_label(), h.get_label()) for h in handles],
                              loc="upper center", ncols=legend_columns, frameon=False, fontsize=8,
                              bbox_to_anchor=(0.5, legend_top))  # fmt: skip
            drawn.append(_svg(figure, grid.alt))
        return drawn

    found: list[str] = _styled(draw)
    return found


def status_svg(rows: Sequence[tuple[str, Mapping[str, int]]], title: str, alt: str) -> str:
    """Horizontal stacked bars: the share of attempts per status, one bar per cell."""

    def draw() -> str:
        figure, ax, labels, heading, xlabel = _bars_figure(
            [label for label, _ in rows], len(rows), 0.75, title, "share of graded attempts (%)"
        )
        left = [0.0] * len(rows)
        for status, colour in STATUS_COLOURS.items():
            shares = []
            for _, counts in rows:
                total = sum(counts.values()) or 1
                shares.append(100.0 * counts.get(status, 0) / total)
            ax.barh(range(len(rows)), shares, left=left, color=colour, label=status)
            left = [a + b for a, b in zip(left, shares)]
        ax.set_xlim(0, 100)
        _row_labels(ax, labels)
        ax.set_xlabel(xlabel)
        figure.suptitle(heading, y=1 - 0.08 / figure.get_figheight(), va="top")
        ax.legend(ncols=4, frameon=False, loc="lower center", bbox_to_anchor=(0.5, 1.0), fontsize=8)
        return _svg(figure, alt)

    return str(_styled(draw))


def differences_svg(
    rows: Sequence[tuple[str, float, float | None, float | None]],
    xlabel: str,
    title: str,
    alt: str,
    reference: tuple[float, str] | None = None,
) -> str:
    """A forest plot: one paired difference B − A per row with its interval; zero marked (and
    ``reference``, a labelled dashed line, when given)."""

    described = xlabel if reference is None else f"{xlabel}; dashed: {reference[1]}"

    def draw() -> str:
        figure, ax, labels, heading, wrapped = _bars_figure(
            [label for label, *_ in rows], len(rows), 0.45, title, described
        )
        # One artist for all intervals and one for all estimates (an artist per row costs tens of ms).
        spans = [
            (y, low, high) for y, (_, _, low, high) in enumerate(rows) if low is not None and high is not None
        ]
        ax.hlines([y for y, _, _ in spans], [lo for _, lo, _ in spans], [hi for _, _, hi in spans],
                  color=PALETTE[0], linewidth=2)  # fmt: skip
        ax.plot([row[1] for row in rows], range(len(rows)), linestyle="none", marker="D", color=PALETTE[5],
                markersize=4)  # fmt: skip
        ax.axvline(0.0, color="#000000", linewidth=0.8)
        if reference is not None:  # a second reference line, e.g. the within-run baseline
            ax.axvline(reference[0], color=PALETTE[2], linewidth=1.0, linestyle="--")
        _row_labels(ax, labels)
        ax.set_xlabel(wrapped)
        figure.suptitle(heading, y=1 - 0.08 / figure.get_figheight(), va="top")
        return _svg(figure, alt)

    return str(_styled(draw))


def retention_svg(rows: Sequence[tuple[str, float, float, float]], title: str, alt: str) -> str:
    """Stacked bars per cell: mean modes per prompt B keeps, loses and gains relative to A."""

    def draw() -> str:
        figure, ax, labels, heading, xlabel = _bars_figure(
            [label for label, *_ in rows],
            len(rows),
            0.75,
            title,
            "modes per prompt (mean count of canonical keys)",
        )
        left = [0.0] * len(rows)
        parts = (("kept", 1, PALETTE[2]), ("lost", 2, PALETTE[5]), ("gained", 3, PALETTE[0]))
        for name, column, colour in parts:
            values = [float(row[column]) for row in rows]
            ax.barh(range(len(rows)), values, left=left, color=colour, label=name)
            left = [a + b for a, b in zip(left, values)]
        _row_labels(ax, labels)
        ax.set_xlabel(xlabel)
        figure.suptitle(heading, y=1 - 0.08 / figure.get_figheight(), va="top")
        ax.legend(ncols=3, frameon=False, loc="lower center", bbox_to_anchor=(0.5, 1.0), fontsize=8)
        return _svg(figure, alt)

    return str(_styled(draw))


def steps_svg(panels: Sequence[tuple[str, str, Sequence[StepSeries], float]], title: str, alt: str) -> str:
    """Small multiples over training steps, three per row: (panel title, y-axis label, series,
    natural floor of the y axis). Each series is a line with its bootstrap band (when it has one);
    series differ in colour, line style and marker; every legend sits below its panel.

    The y axis runs from the metric's natural floor (0 for shares and counts, 1 for effective
    modes) to just above its largest value (1 for a share), never zoomed."""

    def draw() -> str:
        columns = 3
        width, margin, gap = 9.6, (0.75, 0.25), 0.65
        pw = (width - margin[0] - margin[1] - gap * (columns - 1)) / columns
        ph = 1.8
        heading = _wrap(title, width - 0.3, 11)
        layout = []  # per panel: wrapped title, legend labels
        for name, ylabel, series, _ in panels:
            labels = [_wrap(one.label, pw, 7) for one in series if any(v is not None for v in one.values)]
            layout.append((_wrap(name, pw, 9), labels, _wrap(ylabel, ph, 8)))
        rows = math.ceil(len(panels) / columns)
        row_heights = []
        for r in range(rows):
            chunk = layout[r * columns : (r + 1) * columns]
            above = 0.12 + 0.17 * max(_lines(t) for t, _, _ in chunk)
            below = (
                0.5 + 0.14 * max((sum(_lines(x) for x in labels) for _, labels, _ in chunk), default=0) + 0.15
            )
            row_heights.append((above, below))
        top = 0.2 + 0.2 * _lines(heading)
        height = top + sum(a + ph + b for a, b in row_heights) + 0.1
        figure = _figure_class()(figsize=(width, height))
        figure.suptitle(heading, y=1 - 0.1 / height, va="top", fontsize=11)
        y = height - top
        for r in range(rows):
            above, below = row_heights[r]
            y -= above + ph
            for c in range(columns):
                index = r * columns + c
                if index >= len(panels):
                    break
                name, _, series, floor = panels[index]
                wrapped, labels, ylabel = layout[index]
                x = margin[0] + c * (pw + gap)
                ax = figure.add_axes((x / width, y / height, pw / width, ph / height))
                values = []
                for one in series:
                    points = [(s, v, lo, hi) for s, v, lo, hi in zip(one.steps, one.values, one.lows(), one.highs())
                              if v is not None]  # fmt: skip
                    if not points:
                        continue
                    shade = PALETTE[one.colour % len(PALETTE)]
                    band = [(s, lo, hi) for s, _, lo, hi in points if lo is not None and hi is not None]
                    if len(band) > 1:
                        ax.fill_between([b[0] for b in band], [b[1] for b in band], [b[2] for b in band],
                                        color=shade, alpha=0.18, linewidth=0)  # fmt: skip
                    values += [v for _, v, _, hi in points] + [hi for *_, hi in points if hi is not None]
                    ax.plot([p[0] for p in points], [p[1] for p in points], linestyle=_STYLES[one.colour % 4],
                            marker=_MARKERS[one.colour % 4], markersize=3.5, linewidth=1.3, color=shade,
                            label=_wrap(one.label, pw, 7))  # fmt: skip
                every = sorted({step for one in series for step in one.steps})
                if len(every) > 1:  # the same step axis on every panel, even where a value is undefined
                    pad = (every[-1] - every[0]) * 0.05
                    ax.set_xlim(every[0] - pad, every[-1] + pad)
                highest = max(values, default=floor + 1.0)
                share = floor == 0.0 and highest <= 1.0 and name != "modes per prompt"
                ax.set_ylim(
                    floor - 0.02 * max(highest - floor, 0.05),
                    1.03 if share else floor + 1.08 * max(highest - floor, 0.05),
                )
                ax.set_title(wrapped, fontsize=9)
                ax.set_xlabel("training step", fontsize=8)
                ax.set_ylabel(ylabel, fontsize=8)
                ax.tick_params(labelsize=7)
                if ax.get_legend_handles_labels()[0]:
                    ax.legend(frameon=False, fontsize=7, loc="upper center", ncols=1,
                              bbox_to_anchor=(0.5, -0.5 / ph * 1.0 - 0.02))  # fmt: skip
            y -= below
        return _svg(figure, alt)

    return str(_styled(draw))
