"""``render_html``: one self-contained HTML page for one receipt or a comparison of several.

One pass over each receipt's journal feeds everything about that run
(:class:`modebench.render.digest.DigestBuilder`); a comparison of a later completed run with the
first completed one is that same pass (:func:`modebench.stats.compare` with the digests as its
observers), so with two runs each journal is read exactly once. The page is written atomically and never overwrites a file.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from modebench.publish import atomic_output
from modebench.render import figures
from modebench.render.compare_section import compare_section, overlay_section
from modebench.render.digest import DigestBuilder, RunDigest
from modebench.render.page import encodable, page
from modebench.render.run_section import RowIndex, run_curves, run_section
from modebench.stats.bootstrap import Bootstrap
from modebench.stats.comparison import compare
from modebench.stats.journal import open_receipt
from modebench.stats.table import StatsTable
from modebench.validation import InputError

__all__ = ["export_figures", "html_report", "render_html"]

_FIGURE = re.compile(r'<figure data-figure="([a-z]+)">(<svg\b.*?</svg>)', re.S)


def _require_plot() -> None:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise InputError(figures.PLOT_EXTRA_MESSAGE) from None


def html_report(
    receipts: Sequence[str | os.PathLike[str]], settings: Bootstrap | None = None
) -> tuple[str, bool]:
    """(the page's HTML, whether every receipt completed); the first completed run is the baseline."""
    if not receipts:
        raise InputError("the HTML report needs at least one receipt")
    _require_plot()
    chosen = settings if settings is not None else Bootstrap()
    opened = [open_receipt(path) for path in receipts]
    builders = [DigestBuilder(receipt) for receipt in opened]
    done = [False] * len(opened)
    completed_runs = [i for i, receipt in enumerate(opened) if receipt.completed]
    results: dict[int, StatsTable] = {}
    if len(opened) > 1 and len(completed_runs) > 1:
        # Each comparison is one lockstep pass over both journals that also builds their digests,
        # so with two runs every journal is read once (with more, the baseline once per run).
        base = completed_runs[0]
        for other in completed_runs[1:]:
            # The page shows pass@k and E[distinct@k] differences at each cell's saved draws only:
            # asking for those k alone spares the bootstrap the other k points.
            ks = sorted({cell["k"] for i in (base, other) for cell in opened[i].payload["cells"]})
            first = builders[base] if not done[base] else None
            results[other] = compare(
                receipts[base], receipts[other], ks, chosen, digests=(first, builders[other])
            )
            done[base] = done[other] = True
    for i, builder in enumerate(builders):
        if not done[i]:
            builder.fill()
    runs: list[RunDigest] = [builder.build() for builder in builders]
    indexes: list[RowIndex | None] = [run_curves(run, chosen)[1] if run.completed else None for run in runs]
    completed = [(i, run, rows) for i, (run, rows) in enumerate(zip(runs, indexes)) if rows is not None]
    overlaid = len(runs) > 1 and len(completed) > 1  # then each run's curves are in the overlay only
    sections = [run_section(run, i, indexes[i], curves=not overlaid) for i, run in enumerate(runs)]
    if len(runs) > 1:
        if overlaid:
            sections.insert(0, overlay_section(completed))
            base_run = completed[0]
            for other_run in completed[1:]:
                result = results[other_run[0]]
                sections.insert(-len(runs), compare_section(base_run[:2], other_run[:2], result))
        else:
            sections.insert(0, '<p class="note">No comparison: fewer than two receipts completed.</p>')
    if len(runs) == 1:
        title = "ModeBench report" + ("" if runs[0].completed else ": evaluation FAILED")
    else:
        title = f"ModeBench comparison of {len(runs)} runs"
    return page(title, sections), all(run.completed for run in runs)


def export_figures(text: str, directory: str | os.PathLike[str]) -> list[str]:
    """Write every figure of a page as a standalone SVG file (``NN-kind.svg``, for a paper) into
    ``directory`` (created; an existing file is never overwritten). Returns the paths written."""
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for number, match in enumerate(_FIGURE.finditer(text), start=1):
        path = folder / f"{number:02d}-{match.group(1)}.svg"
        try:
            with open(path, "x", encoding="utf-8") as handle:  # exclusive: never overwrite
                handle.write('<?xml version="1.0" encoding="utf-8"?>\n' + match.group(2) + "\n")
        except FileExistsError:
            raise InputError(f"{path} exists; figures are never overwritten") from None
        written.append(os.fspath(path))
    return written


def render_html(
    receipts: Sequence[str | os.PathLike[str]],
    output: str | os.PathLike[str],
    settings: Bootstrap | None = None,
    figures_dir: str | os.PathLike[str] | None = None,
) -> dict[str, Any]:
    """Write the HTML report of ``receipts`` to ``output`` (never overwritten); returns a summary.
    ``figures_dir``: also write each figure as a standalone SVG there (:func:`export_figures`)."""
    text, completed = html_report(receipts, settings)
    text = encodable(text)
    data = text.encode("utf-8")
    with atomic_output(output) as handle:
        handle.write(text)
    summary: dict[str, Any] = {
        "output": os.fspath(output),
        "receipts": len(receipts),
        "bytes": len(data),
        "completed": completed,
    }
    if figures_dir is not None:
        summary["figures"] = export_figures(text, figures_dir)
    return summary
