"""The HTML page of a trajectory: per cell, the statistics over training steps as figures and a table.

Everything shown comes from the trajectory table (:func:`modebench.stats.trajectory.trajectory_table`):
per step and cell, accuracy, pass@k and E[distinct@k] (at k = 1 and at the cell's draws), PCMD,
effective modes and mode retention against the first step. The page grows with steps × cells,
never with prompts: the lost mode keys are summarised as a count of prompts per step.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Mapping, Sequence
from typing import Any

from modebench._words import counted
from modebench.publish import atomic_output
from modebench.render import figures
from modebench.render.html import export_figures
from modebench.render.page import encodable, esc, figure, number, page, short, table, visible
from modebench.render.run_section import cell_label
from modebench.stats.table import StatsTable
from modebench.validation import InputError

__all__ = [
    "ARM_PANELS",
    "COLUMNS",
    "arms_trajectory_html",
    "render_arms_trajectory_html",
    "render_trajectory_html",
    "require_plot",
    "trajectory_html",
]

Key = tuple[int, str, int | None]  # metric row: (step, metric, k)
#: The table's columns: (heading, metric, which k: None, "one" or "draws").
COLUMNS: tuple[tuple[str, str, str | None], ...] = (
    ("accuracy", "accuracy", None),
    ("pass@1", "pass_at_k", "one"),
    ("pass@n", "pass_at_k", "draws"),
    ("E[distinct@n]", "distinct_at_k", "draws"),
    ("PCMD", "pcmd", None),
    ("effective modes", "effective_modes", None),
    ("modes kept", "modes_kept", "draws"),
    ("modes lost", "modes_lost", "draws"),
    ("modes gained", "modes_gained", "draws"),
    ("retention", "retention_share", "draws"),
    ("retention @h", "retention_share", "half"),
    ("baseline @h", "first_step_baseline", "half"),
)


def _cells(rows: Sequence[Mapping[str, Any]]) -> dict[tuple[int, str], dict[Key, Any]]:
    found: dict[tuple[int, str], dict[Key, Any]] = {}
    for row in rows:
        found.setdefault((row["level"], row["domain"]), {})[(row["step"], row["metric"], row["k"])] = row
    return found


def _k(choice: str | None, draws: int | None) -> int | None:
    if choice is None:
        return None
    if choice == "half":  # the draws of the split-half baseline
        return None if draws is None else draws // 2
    return 1 if choice == "one" else draws


def _value(rows: Mapping[Key, Any], step: int, metric: str, k: int | None) -> Any:
    row = rows.get((step, metric, k))
    return None if row is None else row["estimate"]


def _draws(rows: Mapping[Key, Any], step: int) -> int | None:
    found = [key[2] for key in rows if key[0] == step and key[1] == "pass_at_k" and key[2] is not None]
    return max(found) if found else None


def _unreportable(row: Mapping[str, Any] | None) -> str:
    """PCMD (and effective modes) over fewer prompts than the receipts' ``min_defined_prompts``."""
    if row is None or row.get("reportable") is not False:
        return ""
    return '<br><span class="note" data-reportable="false">not reportable</span>'


def _cell_section(level: int, domain: str, rows: Mapping[Key, Any], steps: Sequence[int]) -> str:
    label = cell_label(level, domain)
    draws = {step: _draws(rows, step) for step in steps}
    shown = [s for s in steps if any(key[0] == s for key in rows)]
    body = []
    for step in shown:
        cells = [esc(step), esc(number(draws[step]))]
        for _, metric, choice in COLUMNS:
            k = _k(choice, draws[step])
            value = _value(rows, step, metric, k)
            cells.append(
                f'<span class="value" data-step="{esc(step)}" data-level="{esc(level)}" '
                f'data-domain="{esc(domain)}" data-metric="{esc(metric)}" data-k="{esc(json.dumps(k))}" '
                f'data-value="{esc(json.dumps(value))}">{esc(number(value))}</span>'
                + _unreportable(rows.get((step, metric, k)))
            )
        body.append(cells)
    numbers = table(["step", "draws", *(c[0] for c in COLUMNS)], body, numeric=tuple(range(2 + len(COLUMNS))),
                    caption=f"{label}: statistics per training step; retention against step {shown[0] if shown else '–'}")  # fmt: skip

    def series(metric: str, choice: str | None, name: str, colour: int) -> figures.StepSeries:
        found = [rows.get((s, metric, _k(choice, draws[s]))) for s in shown]
        return figures.StepSeries(
            name, colour, shown, [None if r is None else r["estimate"] for r in found],
            [None if r is None else r.get("ci_low") for r in found],
            [None if r is None else r.get("ci_high") for r in found],
        )  # fmt: skip

    first = shown[0] if shown else None
    baseline = (
        rows.get((first, "retention_baseline", _k("half", draws.get(first)))) if first is not None else None
    )
    flat = [baseline["estimate"] if baseline else None] * len(shown)
    panels = [
        ("accuracy (= pass@1) and pass@n", "probability",
         [series("accuracy", None, "accuracy = pass@1", 0), series("pass_at_k", "draws", "pass@n (n = draws)", 2)], 0.0),
        ("E[distinct@n] over all draws", "verified modes", [series("distinct_at_k", "draws", "E[distinct@n]", 0)], 0.0),
        ("PCMD", "pairwise mode diversity", [series("pcmd", None, "PCMD", 3)], 0.0),
        ("effective modes", "1 / (1 − PCMD)", [series("effective_modes", None, "effective modes", 4)], 1.0),
        ("modes per prompt", "mean modes per prompt",
         [series("modes_kept", "draws", "first-step modes kept", 2), series("modes_lost", "draws", "lost", 5),
          series("modes_gained", "draws", "gained", 0)], 0.0),
        ("mode retention against step " + str(first), "share of first-step modes",
         [series("retention_share", "half", "retention at h = n/2 draws", 0),
          figures.StepSeries("within-run baseline of the first step (split halves, h draws)", 5, shown, flat),
          series("retention_share", "draws", "retention at n draws", 2)], 0.0),
    ]  # fmt: skip
    last = shown[-1] if shown else None
    alt = (
        f"{label}: accuracy, pass@k, E[distinct@n], PCMD, effective modes and mode retention over "
        f"{len(shown)} training steps"
        + (
            f"; at step {last}: accuracy {number(_value(rows, last, 'accuracy', None))}, "
            f"E[distinct@n] {number(_value(rows, last, 'distinct_at_k', draws[last]))}, "
            f"retention {number(_value(rows, last, 'retention_share', None))}"
            if last is not None
            else ""
        )
    )
    svg = figures.steps_svg(panels, f"{label}: diversity over training steps", alt)
    return f"<h2>{esc(label)}</h2>" + figure(svg, alt, "trajectory") + numbers


def require_plot() -> None:
    try:
        import matplotlib  # noqa: F401, PLC0415 - optional extra: plot (matplotlib)
    except ImportError:
        raise InputError(figures.PLOT_EXTRA_MESSAGE) from None


def trajectory_html(result: StatsTable) -> str:
    """The page of a trajectory table (``modebench.stats.trajectory``)."""
    require_plot()
    runs = result.meta.get("runs", [])
    steps = [run["step"] for run in runs]
    listed = table(
        ["step", "run", "receipt", "sha256"],
        ([esc(r["step"]), esc(visible(short(r.get("label") or "", 120))), f"<code>{esc(short(r.get('receipt')))}</code>",
          f"<code>{esc(r.get('sha256') or ', '.join(p['sha256'][:12] + '…' for p in r.get('receipts', [])))}</code>"]
         for r in runs),
        caption="Runs in training order (a run of several receipts lists the start of each receipt's sha256)",
    )  # fmt: skip
    lost = result.meta.get("lost_modes", {})
    counts = [[esc(step), esc(len(lost.get(str(step), {})))] for step in steps]
    sections = [
        f'<p class="note">{counted(len(steps), "run")} of the same tasks ordered by training step. Retention compares '
        "each step's verified modes per prompt with the first step's, over the prompts both graded.</p>",
        listed,
    ]
    for (level, domain), rows in sorted(_cells(result.rows).items()):
        sections.append(_cell_section(level, domain, rows, steps))
    sections.append("<h2>Prompts that lost modes</h2>")
    sections.append(table(["step", "prompts with a lost first-step mode"], counts, numeric=(0, 1)))
    return page(f"ModeBench trajectory over {counted(len(steps), 'step')}", sections)


def render_trajectory_html(
    result: StatsTable, output: str | os.PathLike[str], figures_dir: str | os.PathLike[str] | None = None
) -> dict[str, Any]:
    """Write the trajectory page to ``output`` (never overwritten); returns a summary.
    ``figures_dir``: also each figure as a standalone SVG and PDF there (``render.html.export_figures``)."""

    with contextlib.ExitStack() as stack:
        pdfs = stack.enter_context(figures.collect_pdfs()) if figures_dir is not None else None
        text = encodable(trajectory_html(result))
    with atomic_output(output) as handle:
        handle.write(text)
    summary: dict[str, Any] = {"output": os.fspath(output), "steps": len(result.meta.get("runs", [])),
                               "bytes": len(text.encode("utf-8"))}  # fmt: skip
    if figures_dir is not None:
        summary["figures"] = export_figures(text, figures_dir, pdfs)
    return summary


#: The arms page's panels: (title, y label, metric, which k, floor of the y axis).
ARM_PANELS: tuple[tuple[str, str, str, str | None, float], ...] = (
    ("accuracy (= pass@1)", "probability", "accuracy", None, 0.0),
    ("pass@n (n = draws)", "probability", "pass_at_k", "draws", 0.0),
    ("E[distinct@n] over all draws", "verified modes", "distinct_at_k", "draws", 0.0),
    ("PCMD", "pairwise mode diversity", "pcmd", None, 0.0),
)


def arms_trajectory_html(arms: Mapping[str, StatsTable]) -> str:
    """One page laying several arms' trajectories side by side (an arm: a training run, its
    trajectory table): per cell, accuracy, pass@n, E[distinct@n] and PCMD over training steps with
    one line per arm, and a table of the values per arm and step."""
    require_plot()
    if not arms:
        raise InputError("an arms page needs at least one arm")
    by_arm = {name: _cells(table.rows) for name, table in arms.items()}
    cells = sorted({cell for found in by_arm.values() for cell in found})
    runs = [[esc(name), esc(len(table.meta.get("runs", []))),
             f"<code>{esc(short((table.meta.get('runs') or [{}])[0].get('receipt') or ''))}</code>"]
            for name, table in arms.items()]  # fmt: skip
    sections = [
        f'<p class="note">{len(arms)} arms of the same experiment, each a run of step receipts; per cell, '
        "each metric over training steps with one line per arm.</p>",
        table(["arm", "steps", "first receipt"], runs, numeric=(1,), caption="Arms"),
    ]
    for level, domain in cells:
        label = cell_label(level, domain)
        panels = []
        body = []
        for title, ylabel, metric, choice, floor in ARM_PANELS:
            series = []
            for colour, (name, found) in enumerate(by_arm.items()):
                rows = found.get((level, domain), {})
                steps = sorted({key[0] for key in rows})
                found_rows = [rows.get((s, metric, _k(choice, _draws(rows, s)))) for s in steps]
                series.append(figures.StepSeries(
                    name, colour % len(figures.PALETTE), steps, [None if r is None else r["estimate"] for r in found_rows],
                    [None if r is None else r.get("ci_low") for r in found_rows],
                    [None if r is None else r.get("ci_high") for r in found_rows],
                ))  # fmt: skip
            panels.append((title, ylabel, series, floor))
        for name, found in by_arm.items():
            rows = found.get((level, domain), {})
            for step in sorted({key[0] for key in rows}):
                cells_row = [esc(name), esc(step)]
                for _, _, metric, choice, _ in ARM_PANELS:
                    k = _k(choice, _draws(rows, step))
                    value = _value(rows, step, metric, k)
                    cells_row.append(
                        f'<span class="value" data-arm="{esc(name)}" data-step="{esc(step)}" '
                        f'data-level="{esc(level)}" data-domain="{esc(domain)}" '
                        f'data-metric="{esc(metric)}" data-k="{esc(json.dumps(k))}" '
                        f'data-value="{esc(json.dumps(value))}">{esc(number(value))}</span>'
                        + _unreportable(rows.get((step, metric, k)))
                    )
                body.append(cells_row)
        alt = (
            f"{label}: accuracy, pass@n, E[distinct@n] and PCMD over training steps for the arms "
            + ", ".join(arms)
        )
        svg = figures.steps_svg(panels, f"{label}: arms over training steps", alt)
        numbers = table(["arm", "step", *(p[0] for p in ARM_PANELS)], body, numeric=(1, 2, 3, 4, 5),
                        caption=f"{label}: statistics per arm and training step")  # fmt: skip
        sections.append(f"<h2>{esc(label)}</h2>" + figure(svg, alt, "trajectory") + numbers)
    return page(f"ModeBench trajectory of {len(arms)} arms", sections)


def render_arms_trajectory_html(
    arms: Mapping[str, StatsTable], output: str | os.PathLike[str]
) -> dict[str, Any]:
    """Write the arms page to ``output`` (never overwritten); returns a summary."""
    text = encodable(arms_trajectory_html(arms))
    with atomic_output(output) as handle:
        handle.write(text)
    return {"output": os.fspath(output), "arms": list(arms), "bytes": len(text.encode("utf-8"))}
