"""The part of the page that describes one receipt.

A completed receipt: identity, the cell table (the receipt's own numbers, with the statistics
module's interval for each), curves over k per cell, the status breakdown and the example
prompts. A failed receipt: identity, the diagnostics and the status breakdown — no score, as the
text report refuses them.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from modebench._words import counted
from modebench.diagnostics import UNSCORABLE
from modebench.receipt.text import FAILED_HEADLINE
from modebench.render import figures
from modebench.render.digest import CellDigest, ExamplePrompt, RunDigest
from modebench.render.page import esc, figure, number, short, table, visible
from modebench.stats.bootstrap import Bootstrap
from modebench.stats.summary import curves_from_profiles
from modebench.stats.table import StatsTable

__all__ = [
    "RowIndex",
    "cell_label",
    "curve_figures",
    "ordered_cells",
    "run_curves",
    "run_section",
    "status_groups",
]

#: Up to this many draws every k is a curve point; beyond it, powers of two and the draws.
DENSE_K = 32
RowIndex = dict[tuple[int, str, int, str, int | None], dict[str, Any]]
_CELL_METRICS = (
    ("accuracy", "accuracy", None),
    ("pass_at_k", "pass@k", "k"),
    ("distinct_at_k", "distinct@k", "k"),
)


def cell_label(level: Any, domain: Any) -> str:
    return "all cells" if level is None else f"level {level} {domain}"


def _field(payload: Mapping[str, Any], *path: str) -> Any:
    """A nested receipt field, or None where any level is missing (run metadata is optional)."""
    value: Any = payload
    for name in path:
        value = value.get(name) if isinstance(value, Mapping) else None
    return value


def run_label(run: RunDigest, index: int) -> str:
    """A run's name on the page and in its figures: the label given (``--label``, or ``label`` in
    the run metadata), else "run A (model id)"; invisible characters shown, long names shortened."""
    given = getattr(run, "label", None) or _field(run.payload, "run", "label")
    if isinstance(given, str) and given.strip():
        return visible(short(given, 120))
    name = _field(run.payload, "run", "model", "id")
    named = f" ({short(name, 120)})" if isinstance(name, str) and name else ""
    return visible(f"run {chr(ord('A') + index)}" + named)


def run_curves(run: RunDigest, settings: Bootstrap) -> tuple[StatsTable, RowIndex]:
    """The ``stats`` table of a completed run, from the digest's profiles (no second pass)."""
    cells = {key: cell.profiles for key, cell in run.cells.items() if cell.profiles}
    largest = max((key[2] for key in cells), default=1)
    ks = list(range(1, largest + 1)) if largest <= DENSE_K else None
    found = curves_from_profiles(cells, ks, settings, {"receipt": run.path})
    index: RowIndex = {(r["level"], r["domain"], r["draws"], r["metric"], r["k"]): r for r in found.rows}
    return found, index


def status_groups(statuses: Mapping[str, int]) -> Counter[str]:
    grouped: Counter[str] = Counter()
    for status, count in statuses.items():
        grouped["unscorable" if status in UNSCORABLE else status] += count
    return grouped


def _interval(row: Mapping[str, Any] | None) -> str:
    if row is None or row.get("ci_low") is None or row.get("ci_high") is None:
        return ""
    return f'<br><span class="ci">[{number(row["ci_low"])}, {number(row["ci_high"])}]</span>'


def _value_cell(
    receipt: int, cell: Mapping[str, Any], metric: str, value: Any, row: Mapping[str, Any] | None
) -> str:
    # data-* attributes let the browser test compare the page with the receipt exactly.
    attributes = (
        f'data-receipt="{receipt}" data-level="{esc(cell["level"])}" data-domain="{esc(cell["domain"])}" '
        f'data-metric="{metric}" data-value="{esc(json.dumps(value))}"'
    )
    return f'<span class="value" {attributes}>{esc(number(value))}</span>{_interval(row)}'


def _identity(run: RunDigest) -> str:
    payload = run.payload
    found = payload.get("software")
    software: dict[str, Any] = found if isinstance(found, dict) else {}
    evaluation = payload["evaluation"]
    entries: list[tuple[str, Any]] = [
        ("receipt", run.path),
        ("status", evaluation["status"]),
        ("model", _field(payload, "run", "model")),
        ("generation", _field(payload, "run", "generation")),
        ("prompt condition", _field(payload, "run", "prompt_condition")),
        ("dataset", payload.get("dataset")),
        ("input sha256", payload.get("input_sha256")),
        ("records sha256", payload.get("records_sha256")),
        ("run sha256", payload.get("run_sha256")),
        ("journal sha256", _field(payload, "prompt_results", "sha256")),
        (
            "software",
            {k: software.get(k) for k in ("modebench_version", "python", "platform", "git", "dependencies")},
        ),
        ("status counts", evaluation.get("status_counts")),
        ("created", payload.get("created_at")),
    ]
    items = []
    for name, value in entries:
        if value is None:
            continue
        shown = short(value if isinstance(value, str) else json.dumps(value, sort_keys=True))
        items.append(f"<dt>{esc(name)}</dt><dd><code>{esc(shown)}</code></dd>")
    return f'<dl class="identity">{"".join(items)}</dl>'


def _cell_table(run: RunDigest, receipt: int, rows: RowIndex) -> str:
    body = []
    for cell in run.payload["cells"]:
        key = (cell["level"], cell["domain"], cell["k"])
        digest = run.cells.get(key)
        values = []
        for metric, _, k in _CELL_METRICS:
            row = rows.get((*key, metric, cell["k"] if k else None))
            values.append(_value_cell(receipt, cell, metric, cell[metric], row))
        pcmd = cell["pcmd"]
        values.append(_value_cell(receipt, cell, "pcmd", pcmd["d_mode"], rows.get((*key, "pcmd", None))))
        values.append(esc(number(bool(pcmd["reportable"]))))
        notes = "".join(f"<br><span class=note>Note: {esc(n)}</span>" for n in cell.get("protocol_notes", []))
        body.append([esc(cell["level"]), esc(cell["domain"]) + notes, esc(cell["k"]),
                     esc(digest.prompts if digest else ""), *values])  # fmt: skip
    headers = ["level", "domain", "k", "prompts", "accuracy", "pass@k", "distinct@k", "PCMD", "reportable"]
    return table(headers, body, numeric=(2, 3, 4, 5, 6, 7),
                 caption="Receipt scores per cell; below each, its bootstrap interval from the statistics module")  # fmt: skip


def ordered_cells(run: RunDigest) -> list[CellDigest]:
    """The run's cells in the receipt's order (the journal's order is the input's)."""
    order = {(c["level"], c["domain"], c["k"]): i for i, c in enumerate(run.payload["cells"])}
    return sorted(run.cells.values(), key=lambda c: order.get((c.level, c.domain, c.draws), len(order)))


#: The curve figures: (row metric, a probability?, y-axis label, name in titles, name at one k).
_CURVES = (
    ("pass_at_k", True, "pass@k (probability)", "pass@k", "pass@{k}"),
    ("distinct_at_k", False, "E[distinct@k] (verified modes)", "E[distinct@k]", "E[distinct@{k}]"),
)


def curve_figures(runs: Sequence[tuple[int, RunDigest, RowIndex]], kind: str) -> list[str]:
    """pass@k and E[distinct@k] over k: one small-multiples figure per metric, a panel per
    (level, domain) of any run, every run's curve and bootstrap band in each panel."""
    keys: dict[tuple[int, str], None] = {}
    for _, run, _ in runs:
        for cell in ordered_cells(run):
            keys.setdefault((cell.level, cell.domain), None)
    # Each row index grouped once: (level, domain, metric) -> draws -> [(k, row)].
    grouped: list[dict[tuple[Any, Any, str], dict[int, list[tuple[int, dict[str, Any]]]]]] = []
    for _, _, rows in runs:
        found: dict[tuple[Any, Any, str], dict[int, list[tuple[int, dict[str, Any]]]]] = {}
        for (level, domain, draws, metric, k), row in rows.items():
            if k is not None:
                found.setdefault((level, domain, metric), {}).setdefault(draws, []).append((k, row))
        grouped.append(found)
    names = " and ".join(run_label(run, index) for index, run, _ in runs)
    prompts: list[Counter[tuple[int, str]]] = []
    for _, run, _ in runs:
        prompts.append(Counter())
        for cell in run.cells.values():
            prompts[-1][(cell.level, cell.domain)] += cell.prompts
    grids = []
    for metric, probability, ylabel, name, at in _CURVES:
        panels, facts = [], []
        for level, domain in keys:
            series, said = [], []
            for (index, run, _), by_cell, counts in zip(runs, grouped, prompts):
                for _draws, points in sorted(by_cell.get((level, domain, metric), {}).items()):
                    points.sort(key=lambda item: item[0])
                    shown = [row for _, row in points]
                    series.append(figures.Series(run_label(run, index), index, [k for k, _ in points],
                                                 [r["estimate"] for r in shown], [r["ci_low"] for r in shown],
                                                 [r["ci_high"] for r in shown]))  # fmt: skip
                    last = shown[-1]
                    who = f"{run_label(run, index)} " if len(runs) > 1 else ""
                    said.append(f"{who}({counted(counts.get((level, domain), 0), 'prompt')}) "
                                f"{at.format(k=points[-1][0])} = {number(last['estimate'])} "
                                f"[{number(last['ci_low'])}, {number(last['ci_high'])}]")  # fmt: skip
            panels.append(series)
            facts.append(f"{cell_label(level, domain)}: " + ("; ".join(said) if said else "nothing to plot"))
        alt = (f"{name} over k = 1 to the saved draws for {names}, one panel per cell on the same scales, "
               f"with bootstrap bands; at the largest k: " + " | ".join(facts))  # fmt: skip
        title = f"{name} over k per cell: {names}" if len(runs) > 1 else f"{name} over k per cell"
        grids.append(figures.Grid(title, ylabel, alt, panels, probability))
    titles = [cell_label(level, domain) for level, domain in keys]
    return [figure(svg, grid.alt, kind) for svg, grid in zip(figures.grids_svg(titles, grids), grids)]


def _status(run: RunDigest) -> str:
    rows = [(cell_label(c.level, c.domain), status_groups(c.statuses)) for c in ordered_cells(run)]
    if not rows:  # a run that failed before grading anything (no journal): nothing to draw
        return '<p class="note">No graded attempts: the evaluation stopped before grading.</p>'
    groups = tuple(figures.STATUS_COLOURS)
    counts = table(["cell", *groups], ([esc(label), *(esc(g[s]) for s in groups)] for label, g in rows),
                   numeric=(1, 2, 3, 4), caption="Graded attempts per status")  # fmt: skip
    alt = (
        "Share of graded attempts that are correct, incorrect, malformed or unscorable, per cell: "
        + "; ".join(f"{label} " + ", ".join(f"{s} {g[s]}" for s in groups) for label, g in rows)
    )
    svg = figures.status_svg(rows, "Status of every graded attempt, per cell", alt)
    return figure(svg, alt, "status") + counts


def _prompt(example: ExamplePrompt) -> str:
    top = max((m.draws for m in example.modes), default=1)
    rows = [[f"<code>{esc(m.key)}</code>", f'<span class="bar" style="width:{6 * m.draws / top:.2f}rem"></span> {m.draws}',
             f"<pre>{esc(m.text)}</pre>"] for m in example.modes]  # fmt: skip
    if example.more:  # the page lists the most frequent modes only and counts the rest
        rows.append([f'<span class="note">{counted(example.more, "more mode", "more modes", grouped=True)}</span>', esc(f"{example.more_draws:,}"),
                     '<span class="note">not listed</span>'])  # fmt: skip
    total = len(example.modes) + example.more
    caption = (f"Mode histogram of prompt {example.id}: {counted(total, 'verified mode', grouped=True)} in "
               f"{example.verified} verified of {counted(example.draws, 'draw')}, one graded text per mode"
               + (f" (the {len(example.modes)} most frequent listed)" if example.more else ""))  # fmt: skip
    body = (
        f'<div class="modes">{table(["canonical key", "verified draws", "example graded text"], rows)}</div>'
    )
    return f"<h4>{esc(example.id)}</h4>" + figure(body, caption, "modes")


def _examples(cell: CellDigest) -> str:
    parts = [f"<h3>Prompts of {esc(cell_label(cell.level, cell.domain))}</h3>"]
    for title, found in (
        ("Most modes", cell.most_modes),
        ("Fewest modes (at least one verified)", cell.fewest_modes),
    ):
        parts.append(f"<p><strong>{esc(title)}</strong></p>")
        if found:
            parts.extend(_prompt(e) for e in found)
        else:
            parts.append('<p class="note">none</p>')
    return "".join(parts)


def _failed(run: RunDigest) -> str:
    payload = run.payload
    detail = payload.get("failure", payload["evaluation"].get("status_counts", {}))
    rows = [
        [esc(d.id), esc(cell_label(d.level, d.domain)), esc(d.status), esc(d.detail)] for d in run.diagnostics
    ]
    listed = (
        table(["prompt", "cell", "status", "detail"], rows, caption="First unscorable attempts")
        if rows
        else ""
    )
    return (
        f'<section class="failed" role="alert" data-failed="true"><h2>{esc(FAILED_HEADLINE)}</h2>'
        f"<pre>{esc(json.dumps(detail, sort_keys=True))}</pre>{listed}</section>"
    )


def run_section(run: RunDigest, index: int, rows: RowIndex | None, *, curves: bool = True) -> str:
    """The HTML of one receipt; ``rows`` is its statistics index (None for a failed run).

    ``curves=False`` where the page overlays every run's curves already (a comparison).
    """
    parts = [
        f'<section data-run="{index}"><h2>{esc(run_label(run, index))}: {esc(short(run.path))}</h2>',
        _identity(run),
    ]
    if not run.completed or rows is None:
        parts += [_failed(run), "<h3>Status breakdown</h3>", _status(run), "</section>"]
        return "".join(parts)
    parts += ["<h3>Cells</h3>", _cell_table(run, index, rows), "<h3>pass@k and E[distinct@k] over k</h3>"]
    if curves:
        parts += curve_figures([(index, run, rows)], "curves")
    else:
        parts.append(
            '<p class="note">This run\'s curves are drawn with the other runs\' in "Curves overlaid".</p>'
        )
    parts += ["<h3>Status breakdown</h3>", _status(run)]
    parts += [_examples(cell) for cell in ordered_cells(run)]
    parts.append("</section>")
    return "".join(parts)
