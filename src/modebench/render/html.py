"""``render_html``: one self-contained HTML page for one receipt or a comparison of several.

One pass over each receipt's journal (:func:`modebench.render.digest.digest`) feeds everything
about that run; comparisons call :func:`modebench.stats.compare` for every later completed run
against the first completed one. The page is written atomically and never overwrites a file.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from modebench.publish import atomic_output
from modebench.render import figures
from modebench.render.compare_section import compare_section, overlay_section
from modebench.render.digest import RunDigest, digest
from modebench.render.page import page
from modebench.render.run_section import RowIndex, run_curves, run_section
from modebench.stats.bootstrap import Bootstrap
from modebench.stats.comparison import compare
from modebench.validation import InputError

__all__ = ["html_report", "render_html"]


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
    runs: list[RunDigest] = [digest(path) for path in receipts]
    indexes: list[RowIndex | None] = [run_curves(run, chosen)[1] if run.completed else None for run in runs]
    sections = [run_section(run, i, indexes[i]) for i, run in enumerate(runs)]
    completed = [(i, run, rows) for i, (run, rows) in enumerate(zip(runs, indexes)) if rows is not None]
    if len(runs) > 1:
        if len(completed) > 1:
            sections.insert(0, overlay_section(completed))
            base = completed[0]
            for other in completed[1:]:
                result = compare(receipts[base[0]], receipts[other[0]], None, chosen)
                sections.insert(-len(runs), compare_section(base[:2], other[:2], result))
        else:
            sections.insert(0, '<p class="note">No comparison: fewer than two receipts completed.</p>')
    if len(runs) == 1:
        title = "ModeBench report" + ("" if runs[0].completed else ": evaluation FAILED")
    else:
        title = f"ModeBench comparison of {len(runs)} runs"
    return page(title, sections), all(run.completed for run in runs)


def render_html(
    receipts: Sequence[str | os.PathLike[str]],
    output: str | os.PathLike[str],
    settings: Bootstrap | None = None,
) -> dict[str, Any]:
    """Write the HTML report of ``receipts`` to ``output`` (never overwritten); returns a summary."""
    text, completed = html_report(receipts, settings)
    data = text.encode("utf-8")
    with atomic_output(output) as handle:
        handle.write(text)
    return {
        "output": os.fspath(output),
        "receipts": len(receipts),
        "bytes": len(data),
        "completed": completed,
    }
