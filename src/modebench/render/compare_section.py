"""The part of the page that compares runs of the same tasks.

Every number here comes from :func:`modebench.stats.compare` (paired differences B − A with
clustered errors and paired bootstrap intervals, McNemar tests, mode retention) and from each
run's own ``stats`` table; this module only lays them out. With three or more runs, each later
run is compared with the first.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from modebench.render import figures
from modebench.render.digest import RunDigest
from modebench.render.page import esc, figure, number, table
from modebench.render.run_section import RowIndex, cell_label, curve_figures, run_label
from modebench.stats.table import StatsTable

__all__ = ["compare_section", "overlay_section"]

_DIFFERENCES = ("accuracy", "pass_at_draws", "first_draw_pass", "pass_at_k", "distinct_at_k", "pcmd")
# Forest plots: every compared metric, grouped by unit (a plot's x axis has one unit).
_FORESTS = (
    (
        "probability",
        ("accuracy", "first_draw_pass", "pass_at_draws", "pass_at_k"),
        "difference B − A (probability)",
    ),
    ("modes", ("distinct_at_k",), "difference B − A (E[distinct@k] over all draws)"),
    ("diversity", ("pcmd",), "difference B − A (PCMD)"),
)


def overlay_section(runs: Sequence[tuple[int, RunDigest, RowIndex]]) -> str:
    """pass@k and E[distinct@k] of every completed run, overlaid per (level, domain)."""
    return "".join(["<h2>Curves overlaid</h2>", *curve_figures(runs, "overlay")])


def _metric(row: dict[str, Any]) -> str:
    return str(row["metric"]) + (f"@{row['k']}" if row["k"] is not None else "")


def _ci(row: dict[str, Any]) -> str:
    if row["ci_low"] is None:
        return "–"
    return f"[{number(row['ci_low'])}, {number(row['ci_high'])}]"


def compare_section(a: tuple[int, RunDigest], b: tuple[int, RunDigest], result: StatsTable) -> str:
    name_a, name_b = run_label(a[1], a[0]), run_label(b[1], b[0])
    coverage = result.meta.get("coverage", {})
    parts = [f"<h2>{esc(name_b)} compared with {esc(name_a)}</h2>",
             f'<p class="note">Differences are {esc(name_b)} − {esc(name_a)} over prompts both runs graded '
             f"(paired: {esc(coverage.get('paired'))}, only in A: {esc(coverage.get('only_a'))}, only in B: "
             f"{esc(coverage.get('only_b'))}); intervals are paired bootstrap percentiles.</p>"]  # fmt: skip
    parts += [
        f'<p class="note" data-note="budget">Note: {esc(note)}</p>' for note in result.meta.get("notes", [])
    ]
    rows = list(result.rows)
    largest: dict[tuple[Any, Any], int] = {}
    for row in rows:
        if row["metric"] == "pass_at_k":
            key = (row["level"], row["domain"])
            largest[key] = max(largest.get(key, 0), row["k"])
    shown = [r for r in rows if r["metric"] in _DIFFERENCES
             and (r["k"] is None or r["k"] == largest.get((r["level"], r["domain"])))]  # fmt: skip
    threshold = result.meta.get("pcmd_min_defined_prompts")
    body = [[esc(cell_label(r["level"], r["domain"])), esc(_metric(r)), esc(number(r["a"])), esc(number(r["b"])),
             f'<span data-level="{esc(r["level"])}" data-domain="{esc(r["domain"])}" data-metric="{esc(_metric(r))}" '
             f'data-difference="{esc(json.dumps(r["estimate"]))}">{esc(number(r["estimate"]))}</span>',
             esc(_ci(r)), esc(number(r["mcnemar_mid_p"])), esc(number(r["p_value"])), _holm(r),
             esc(number(r["prompts"])), _reportable(r, threshold)] for r in shown]  # fmt: skip
    tests = result.meta.get("holm_tests")
    parts.append(table(["cell", "metric", "A", "B", "B − A", "interval", "McNemar mid-p", "p", "p (Holm)", "prompts",
                        "reportable"], body, numeric=(2, 3, 4, 6, 7, 8, 9),
                       caption="Paired differences; p: exact McNemar for the binary outcomes, a two-sided normal test "
                       f"otherwise; p (Holm): Holm–Bonferroni over all {esc(tests)} tests of this page; PCMD is "
                       f"reportable where its prompts reach the receipts' min_defined_prompts ({esc(threshold)})"))  # fmt: skip
    for unit, metrics, xlabel in _FORESTS:
        forest = [(f"{cell_label(r['level'], r['domain'])} {_metric(r)}{_flag(r, threshold)}", r["estimate"],
                   r["ci_low"], r["ci_high"])
                  for r in shown if r["metric"] in metrics and r["estimate"] is not None]  # fmt: skip
        if forest:
            alt = f"Paired differences {name_b} − {name_a} in {unit} with intervals: " + "; ".join(
                f"{label} {number(e)} [{number(lo)}, {number(hi)}]" for label, e, lo, hi in forest
            )
            title = f"Paired differences B − A: {' and '.join(m.replace('_at_k', '@k') for m in metrics)}"
            svg = figures.differences_svg(forest, xlabel, title, alt)
            parts.append(figure(svg, alt, "differences"))
    parts.append(_retention(rows, name_a, name_b))
    parts.append(_baseline(rows, name_a, name_b))
    return "".join(parts)


def _holm(row: dict[str, Any]) -> str:
    value = row.get("p_holm")
    return (
        f'<span data-p-holm="{esc(json.dumps(value))}">{esc(number(value))}</span>'
        if value is not None
        else "–"
    )


def _reportable(row: dict[str, Any], threshold: Any) -> str:
    """PCMD's reportable flag (its prompts reach ``min_defined_prompts``); empty for other metrics."""
    if row["metric"] != "pcmd" or not isinstance(threshold, int):
        return ""
    return f'<span data-reportable="{esc(json.dumps(row["prompts"] >= threshold))}">{esc(number(row["prompts"] >= threshold))}</span>'


def _flag(row: dict[str, Any], threshold: Any) -> str:
    """A forest plot's row label marks a PCMD difference that is not reportable."""
    if row["metric"] != "pcmd" or not isinstance(threshold, int) or row["prompts"] >= threshold:
        return ""
    return " (not reportable)"


def _baseline(rows: list[dict[str, Any]], name_a: str, name_b: str) -> str:
    """Retention of A's modes by B beside A's own split-half baseline, per cell: the table and a
    forest plot of the difference (below zero: B keeps fewer of A's modes than A keeps of itself)."""
    found = [r for r in rows if r["metric"] == "retention_vs_baseline" and r["estimate"] is not None]
    if not found:
        return '<p class="note">No retention baseline: the runs have fewer than two draws per prompt.</p>'
    body = [[esc(cell_label(r["level"], r["domain"])), esc(number(r["k"])), esc(number(r["a"])), esc(number(r["b"])),
             f'<span data-metric="retention_vs_baseline" data-level="{esc(r["level"])}" data-domain="{esc(r["domain"])}" '
             f'data-value="{esc(json.dumps(r["estimate"]))}">{esc(number(r["estimate"]))}</span>',
             esc(_ci(r)), esc(number(r["p_value"])), _holm(r)] for r in found]  # fmt: skip
    parts = ["<h3>Mode retention against the within-run baseline</h3>",
             f'<p class="note">Sampling alone loses modes: the baseline is the share of {esc(name_a)}\'s modes in one '
             "half of its draws that the other half also finds (all split halves, exactly), at h draws; beside it the "
             f"share {esc(name_b)} finds at the same h draws. A difference below zero means {esc(name_b)} keeps fewer "
             f"of {esc(name_a)}\'s modes than {esc(name_a)} keeps of itself (one-sided p).</p>",
             table(["cell", "h (draws)", "baseline (A vs A)", "B keeps of A", "B − baseline", "interval", "p (B < baseline)",
                    "p (Holm)"], body, numeric=(1, 2, 3, 4, 6, 7))]  # fmt: skip
    forest = [(cell_label(r["level"], r["domain"]), r["estimate"], r["ci_low"], r["ci_high"]) for r in found]
    alt = f"Retention of {name_a}'s modes by {name_b} minus the within-run baseline, per cell: " + "; ".join(
        f"{label} {number(e)} [{number(lo)}, {number(hi)}]" for label, e, lo, hi in forest
    )
    svg = figures.differences_svg(
        forest, "retention by B − within-run baseline of A (share of A's modes)",
        "Mode retention against the within-run baseline", alt, reference=(0.0, "no loss beyond sampling"),
    )  # fmt: skip
    parts.append(figure(svg, alt, "differences"))
    return "".join(parts)


def _retention(rows: list[dict[str, Any]], name_a: str, name_b: str) -> str:
    by_cell: dict[tuple[Any, Any], dict[str, dict[str, Any]]] = {}
    for row in rows:
        by_cell.setdefault((row["level"], row["domain"]), {})[row["metric"]] = row
    found = []
    for (level, domain), metrics in by_cell.items():
        if "modes_retained" in metrics:
            found.append((cell_label(level, domain), metrics))
    body = [[esc(label), *(f'<span data-metric="{m}" data-value="{esc(ms[m]["estimate"])}">{esc(number(ms[m]["estimate"]))}</span>'
                           f'<br><span class="ci">{esc(_ci(ms[m]))}</span>'
                           for m in ("modes_retained", "modes_lost", "modes_gained", "mode_retention"))]
            for label, ms in found]  # fmt: skip
    parts = ["<h3>Mode retention</h3>",
             f'<p class="note">Per prompt, the canonical modes {esc(name_a)} verified that {esc(name_b)} also '
             "verifies (kept), does not (lost), and the modes only B verifies (gained); means over prompts.</p>",
             table(["cell", "kept", "lost", "gained", "retention (kept / A's modes)"], body, numeric=(1, 2, 3, 4))]  # fmt: skip
    bars = [(label, ms["modes_retained"]["estimate"] or 0.0, ms["modes_lost"]["estimate"] or 0.0,
             ms["modes_gained"]["estimate"] or 0.0) for label, ms in found]  # fmt: skip
    if bars:
        alt = f"Mean modes per prompt of {name_a} kept and lost by {name_b}, and gained: " + "; ".join(
            f"{label} kept {number(k)}, lost {number(lo)}, gained {number(g)}" for label, k, lo, g in bars
        )
        parts.append(
            figure(
                figures.retention_svg(bars, f"Mode retention: {name_b} relative to {name_a}", alt),
                alt,
                "retention",
            )
        )
    return "".join(parts)
