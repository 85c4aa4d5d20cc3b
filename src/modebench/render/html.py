"""``render_html``: one self-contained HTML page for one run or a comparison of several.

A run is a receipt, a ``suite.json`` or a directory of receipts (``stats.sources``). A run of
several receipts shows a section per receipt; compared, it is paired with the baseline part by
part and pooled exactly as ``compare`` pairs suites (each journal is then read twice: once for the
page's digest, once for the comparison).

One pass over each receipt's journal feeds everything about that run
(:class:`modebench.render.digest.DigestBuilder`); a comparison of a later completed run with the
first completed one is that same pass (:func:`modebench.stats.compare` with the digests as its
observers), so with two runs each journal is read exactly once. The page is written atomically and never overwrites a file.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from modebench.publish import atomic_output
from modebench.receipt.records import Receipt
from modebench.render import figures
from modebench.render.compare_section import compare_section, overlay_section
from modebench.render.digest import DigestBuilder, RunDigest
from modebench.render.page import encodable, page
from modebench.render.run_section import RowIndex, run_curves, run_section
from modebench.stats.bootstrap import Bootstrap
from modebench.stats.comparison import (
    COMPARE_COLUMNS,
    SCHEMA,
    budget_notes,
    compare,
    compare_pairs,
    coverage,
)
from modebench.stats.journal import open_receipt
from modebench.stats.many import holm, pair_runs
from modebench.stats.sources import Filters, Run, reportable_threshold, resolve_run
from modebench.stats.table import StatsTable
from modebench.validation import InputError

__all__ = ["export_figures", "html_report", "render_html"]

_FIGURE = re.compile(r'<figure data-figure="([a-z]+)">(<svg\b.*?</svg>)', re.S)
_TITLE_ID = re.compile(r'<title id="([^"]+)">')


def _require_plot() -> None:
    try:
        import matplotlib  # noqa: F401, PLC0415 - optional extra: plot (matplotlib)
    except ImportError:
        raise InputError(figures.PLOT_EXTRA_MESSAGE) from None


def _digest(path: str, label: str | None) -> RunDigest:
    builder = DigestBuilder(open_receipt(path))
    builder.fill()
    return dataclasses.replace(builder.build(), label=label)


def _merged(run: Run, parts: Sequence[RunDigest], label: str | None) -> RunDigest:
    """One digest of a run made of several receipts (a suite): its parts' cells side by side (a
    cell two parts share is pooled), for the overlaid curves; each part keeps its own section."""
    merged = DigestBuilder(open_receipt(run.receipts[0]))
    for part in parts:
        merged.merge((copy.deepcopy(part.cells), list(part.diagnostics)))
    first = parts[0].payload
    status = "completed" if all(part.completed for part in parts) else "failed"
    payload = {**first, "evaluation": {**first["evaluation"], "status": status},
               "cells": [cell for part in parts for cell in part.payload["cells"]]}  # fmt: skip
    return RunDigest(run.path, payload, merged.cells, merged.diagnostics, label)


def _selected(digest: RunDigest, filters: Filters | None) -> RunDigest:
    """The digest of the selected cells only (its identity and status blocks stay the receipt's)."""
    if not filters:
        return digest
    cells = {key: cell for key, cell in digest.cells.items() if filters.keep(key[0], key[1])}
    kept = [c for c in digest.payload["cells"] if filters.keep(int(c["level"]), str(c["domain"]))]
    return dataclasses.replace(digest, payload={**digest.payload, "cells": kept}, cells=cells)


def _require_selected(runs: Sequence[Run], per_run: Sequence[Sequence[RunDigest]]) -> None:
    """Every run keeps a receipt with a selected cell (else there is nothing of it to show)."""
    for run, parts in zip(runs, per_run):
        if not parts:
            raise InputError(f"{run.path} has no cell among the selected cells")


def _draws(receipt: Receipt) -> set[int]:
    return {int(cell["k"]) for cell in receipt.payload["cells"]}


def _one_receipt_each(
    runs: Sequence[Run],
    labels: Sequence[str | None],
    chosen: Bootstrap,
    allow_unequal_draws: bool,
    filters: Filters | None = None,
) -> tuple[list[RunDigest], dict[int, StatsTable]]:
    """Runs of one receipt each: each comparison is one lockstep pass over both journals that also
    builds their digests, so with two runs every journal is read once (with more, the baseline
    once per run)."""
    receipts = [run.receipts[0] for run in runs]
    opened = [open_receipt(path) for path in receipts]
    builders = [DigestBuilder(receipt) for receipt in opened]
    done = [False] * len(opened)
    completed_runs = [i for i, receipt in enumerate(opened) if receipt.completed]
    results: dict[int, StatsTable] = {}
    if len(opened) > 1 and len(completed_runs) > 1:
        base = completed_runs[0]
        for other in completed_runs[1:]:
            # The page shows pass@k and E[distinct@k] differences at each cell's saved draws only:
            # asking for those k alone spares the bootstrap the other k points.
            ks = sorted(_draws(opened[base]) | _draws(opened[other]))
            first = builders[base] if not done[base] else None
            # its errors as read_report words them (a journal's) or as compare refuses (budgets)
            results[other] = compare(
                receipts[base], receipts[other], ks, chosen, digests=(first, builders[other]),
                allow_unequal_draws=allow_unequal_draws, filters=filters,
            )  # fmt: skip
            done[base] = done[other] = True
    for i, builder in enumerate(builders):
        if not done[i]:
            builder.fill()
    digests = [
        _selected(dataclasses.replace(builder.build(), label=label), filters)
        for builder, label in zip(builders, labels)
    ]
    if filters:
        _require_selected(runs, [[digest] if digest.payload["cells"] else [] for digest in digests])
    return digests, results


def _suites(
    runs: Sequence[Run],
    chosen: Bootstrap,
    allow_unequal_draws: bool,
    completed_runs: Sequence[int],
    filters: Filters | None = None,
) -> dict[int, StatsTable]:
    """Runs of several receipts: each later completed run against the first, paired part by part
    and pooled exactly as ``compare`` pairs suites (cell, domain and all-cells rows)."""
    results: dict[int, StatsTable] = {}
    if len(completed_runs) < 2:
        return results
    base = completed_runs[0]
    for other in completed_runs[1:]:
        groups, counts, _ = pair_runs(runs[base], runs[other])
        if filters:
            groups = filters.apply(groups)
        if not groups:
            what = "in the selected cells" if filters else "in common"
            raise InputError(f"{runs[base].path} and {runs[other].path} have no prompt {what}")
        ks = sorted({profile.n for part in groups.values() for pair in part for profile in pair[:2]})
        try:
            rows = compare_pairs(groups, ks, chosen, allow_unequal_draws=allow_unequal_draws)
        except InputError as exc:
            raise InputError(f"{runs[base].path} vs {runs[other].path}: {exc}") from None
        notes = [*budget_notes(groups), *runs[base].notes(), *runs[other].notes()]
        meta = {"coverage": coverage(groups, counts), "notes": notes}
        results[other] = StatsTable(SCHEMA, COMPARE_COLUMNS, tuple(rows), meta)
    return results


def _adjusted(results: dict[int, StatsTable], threshold: int) -> dict[int, StatsTable]:
    """Every comparison of the page with ``p_holm``: the Holm–Bonferroni adjustment over all the
    page's tests (every compared run, cell, domain and tested metric, as ``compare A B C`` adjusts
    them), and PCMD's reporting threshold (``compare``'s rows carry no reportable flag)."""
    tested = [
        (i, j) for i in sorted(results) for j, row in enumerate(results[i].rows) if row["p_value"] is not None
    ]
    adjusted = dict(zip(tested, holm([results[i].rows[j]["p_value"] for i, j in tested])))
    return {
        i: dataclasses.replace(
            found,
            rows=tuple({**row, "p_holm": adjusted.get((i, j))} for j, row in enumerate(found.rows)),
            meta={**found.meta, "pcmd_min_defined_prompts": threshold, "holm_tests": len(tested)},
        )
        for i, found in results.items()
    }


def _several_receipts(
    runs: Sequence[Run],
    names: Sequence[str | None],
    chosen: Bootstrap,
    allow_unequal_draws: bool,
    filters: Filters | None = None,
) -> tuple[list[list[RunDigest]], list[RunDigest], dict[int, StatsTable]]:
    """(each run's receipts' digests, one digest per run, the comparisons) for runs of several
    receipts: a digest per receipt (named "run · part"), merged per run for the overlay, and each
    later completed run compared with the first as ``compare`` compares suites."""
    per_run = [
        [_selected(_digest(path, f"{_shown(name, run, index)} · {part}" if len(run.parts) + len(run.failed) > 1
                           else name), filters)
         for part, path in run.parts]
        for index, (run, name) in enumerate(zip(runs, names))
    ]  # fmt: skip
    if filters:  # a receipt with none of the selected cells has no section on this page
        per_run = [[part for part in parts if part.payload["cells"]] for parts in per_run]
        _require_selected(runs, per_run)
    digests = [
        parts[0] if len(parts) == 1 and not run.failed else _merged(run, parts, name)
        for run, parts, name in zip(runs, per_run, names)
    ]
    ready = [i for i, digest in enumerate(digests) if digest.completed]
    results = _suites(runs, chosen, allow_unequal_draws, ready, filters)
    for index, (run, name) in enumerate(zip(runs, names)):
        # a suite's configurations that did not complete: their failure sections, no statistics
        per_run[index] += [
            _digest(path, f"{_shown(name, run, index)} · {part}") for part, path, _ in run.failed
        ]
    return per_run, digests, results


def html_report(
    runs: Sequence[str | os.PathLike[str] | Run],
    settings: Bootstrap | None = None,
    *,
    labels: Sequence[str | None] | None = None,
    allow_unequal_draws: bool = False,
    filters: Filters | None = None,
) -> tuple[str, bool]:
    """(the page's HTML, whether every receipt completed); the first completed run is the baseline.

    ``filters``: only these cells in the cell tables, curves, examples and comparisons (as
    ``compare``'s ``--cells/--domains/--levels``); a run's identity and status stay whole.

    Each run is a receipt, a ``suite.json`` or a directory of receipts (:func:`resolve_run`), or a
    resolved :class:`Run`. ``labels`` names the runs (None: the run metadata's ``label``, else
    "run A (model id)"). Runs with different draws per prompt are refused with the reason unless
    ``allow_unequal_draws`` (as ``compare``).
    """
    if not runs:
        raise InputError("the HTML report needs at least one receipt")
    _require_plot()
    chosen = settings if settings is not None else Bootstrap()
    resolved = [run if isinstance(run, Run) else resolve_run(run) for run in runs]
    names = list(labels) if labels is not None else [run.label for run in resolved]
    if len(names) != len(resolved):
        raise ValueError("one label (or None) per run")
    names = _unique([name or run.label for name, run in zip(names, resolved)], resolved)
    if all(len(run.parts) == 1 and not run.failed for run in resolved):
        digests, results = _one_receipt_each(resolved, names, chosen, allow_unequal_draws, filters)
        per_run = [[digest] for digest in digests]
    else:
        per_run, digests, results = _several_receipts(resolved, names, chosen, allow_unequal_draws, filters)
    results = _adjusted(results, reportable_threshold([r for run in resolved for r in run.receipts]))
    indexes: list[RowIndex | None] = [
        run_curves(digest, chosen)[1] if digest.completed else None for digest in digests
    ]
    completed = [(i, d, rows) for i, (d, rows) in enumerate(zip(digests, indexes)) if rows is not None]
    overlaid = len(digests) > 1 and len(completed) > 1  # then each run's curves are in the overlay only
    sections = []
    for i, parts in enumerate(per_run):
        for part in parts:
            rows = (
                indexes[i] if len(parts) == 1 else (run_curves(part, chosen)[1] if part.completed else None)
            )
            sections.append(run_section(part, i, rows, curves=not overlaid))
    head = []
    if len(digests) > 1:
        if overlaid:
            head.append(overlay_section(completed))
            base_run = completed[0]
            for other_run in completed[1:]:
                head.append(compare_section(base_run[:2], other_run[:2], results[other_run[0]]))
        else:
            head.append('<p class="note">No comparison: fewer than two runs completed.</p>')
    every = all(part.completed for parts in per_run for part in parts)
    if len(digests) == 1:
        title = "ModeBench report" + ("" if every else ": evaluation FAILED")
    else:
        title = f"ModeBench comparison of {len(digests)} runs"
    return page(title, head + sections), every


def _unique(names: list[str | None], runs: Sequence[Run]) -> list[str | None]:
    """Labels that repeat (two runs whose run.json says the same) get their path appended, then a
    number, as ``compare`` makes them unique; runs without a label are "run A", "run B", …"""
    found = list(names)
    for index, name in enumerate(names):
        if name is not None and names.count(name) > 1:
            found[index] = f"{name} [{Path(runs[index].path.rstrip('/')).name or runs[index].path}]"
    seen: dict[str, int] = {}
    for index, name in enumerate(list(found)):
        if name is not None and found.count(name) > 1:
            seen[name] = seen.get(name, 0) + 1
            found[index] = f"{name} #{seen[name]}"
    return found


def _shown(name: str | None, run: Run, index: int) -> str:
    """A run's name before its parts' names (as ``run_label`` names a run of one receipt)."""
    if name:
        return name
    return f"run {chr(ord('A') + index)}" + (f" ({run.model})" if run.model else "")


def export_figures(
    text: str, directory: str | os.PathLike[str], pdfs: Mapping[str, bytes] | None = None
) -> list[str]:
    """Write every figure of a page as a standalone file for a paper into ``directory`` (created;
    an existing file is never overwritten): ``NN-kind.svg``, and ``NN-kind.pdf`` for each figure
    whose PDF ``pdfs`` holds (keyed by the id of the SVG's ``<title>``, as
    :func:`modebench.render.figures.collect_pdfs` collects them). Returns the paths written."""
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for number, match in enumerate(_FIGURE.finditer(text), start=1):
        svg = match.group(2)
        files = [
            (
                f"{number:02d}-{match.group(1)}.svg",
                ('<?xml version="1.0" encoding="utf-8"?>\n' + svg + "\n").encode(),
            )
        ]
        ident = _TITLE_ID.search(svg)
        if pdfs is not None and ident is not None and ident.group(1) in pdfs:
            files.append((f"{number:02d}-{match.group(1)}.pdf", pdfs[ident.group(1)]))
        for name, data in files:
            path = folder / name
            try:
                with open(path, "xb") as handle:  # exclusive: never overwrite
                    handle.write(data)
            except FileExistsError:
                raise InputError(f"{path} exists; figures are never overwritten") from None
            written.append(os.fspath(path))
    return written


def render_html(
    runs: Sequence[str | os.PathLike[str] | Run],
    output: str | os.PathLike[str],
    settings: Bootstrap | None = None,
    figures_dir: str | os.PathLike[str] | None = None,
    *,
    labels: Sequence[str | None] | None = None,
    allow_unequal_draws: bool = False,
    filters: Filters | None = None,
) -> dict[str, Any]:
    """Write the HTML report of ``runs`` to ``output`` (never overwritten); returns a summary.
    ``figures_dir``: also write each figure as a standalone SVG and PDF there (:func:`export_figures`).
    ``filters``: only these cells (:func:`html_report`)."""
    resolved = [run if isinstance(run, Run) else resolve_run(run) for run in runs]
    with contextlib.ExitStack() as stack:
        pdfs = stack.enter_context(figures.collect_pdfs()) if figures_dir is not None else None
        text, completed = html_report(
            resolved, settings, labels=labels, allow_unequal_draws=allow_unequal_draws, filters=filters
        )
    text = encodable(text)
    data = text.encode("utf-8")
    with atomic_output(output) as handle:
        handle.write(text)
    summary: dict[str, Any] = {
        "output": os.fspath(output),
        "runs": len(resolved),
        "receipts": sum(len(run.parts) for run in resolved),
        "bytes": len(data),
        "completed": completed,
    }
    if figures_dir is not None:
        summary["figures"] = export_figures(text, figures_dir, pdfs)
    return summary
