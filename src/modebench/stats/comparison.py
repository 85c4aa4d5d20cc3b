"""Paired comparison of two receipts of the same prompts (the ``compare`` table).

Prompts are matched by (level, domain, id) — the evaluator's own prompt identity; a matched prompt
must carry the same reference hash in both runs, otherwise the comparison is refused naming the
prompts. Prompts only one run has are
counted in ``coverage`` and left out. Per cell (level, domain) and overall, every metric of the
``stats`` table becomes a paired difference B − A with a clustered standard error and a paired
bootstrap interval (both runs' values of a prompt are resampled together); binary outcomes get an
exact McNemar test with mid-p and the minimum detectable difference at this size; mode retention
rows say which of A's modes B keeps. See ``docs/statistics.md``.
"""

from __future__ import annotations

import math
import os
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from fractions import Fraction
from typing import Any

from modebench.identity import file_sha256
from modebench.stats import bootstrap
from modebench.stats.bootstrap import Bootstrap
from modebench.stats.journal import Entry
from modebench.stats.lockstep import lockstep
from modebench.stats.mcnemar import mcnemar
from modebench.stats.paired import Digest, paired_groups
from modebench.stats.profiles import Profile, PromptSummary, completed_receipt, entry_summary
from modebench.stats.ratio import Column, column, difference, estimate, scaled_column, standard_error
from modebench.stats.retention import (
    Expected,
    Retention,
    expected_retention,
    prompt_record,
    retention,
    split_half,
)
from modebench.stats.sources import Filters
from modebench.stats.summary import k_points, metrics_for
from modebench.stats.table import StatsTable
from modebench.suite.power import detectable_delta
from modebench.validation import InputError

__all__ = [
    "COMPARE_COLUMNS",
    "SCHEMA",
    "budget_notes",
    "compare",
    "paired_counts",
    "compare_pairs",
    "iter_prompt_retention",
    "observed_discordant",
]

SCHEMA = "modebench-compare-v2"
COMPARE_COLUMNS = (
    "level", "domain", "draws_a", "draws_b", "metric", "k", "a", "b", "estimate", "standard_error",
    "ci_low", "ci_high", "prompts", "correlation", "a_only", "b_only", "mcnemar_p", "mcnemar_mid_p",
    "detectable_difference", "p_value",
)  # fmt: skip
Pair = tuple[Profile, Profile, Retention]
PerProfile = Callable[[Profile], tuple[Fraction, int]]
_SHOWN = 5


def _binary(test: Callable[[Profile], bool]) -> PerProfile:
    return lambda p: (Fraction(int(test(p))), 1)


# Binary per-prompt outcomes: McNemar applies. ``pass_at_draws`` is each run's saved-group pass.
_BINARY: dict[str, PerProfile] = {
    "first_draw_pass": _binary(lambda p: p.first),
    "pass_at_draws": _binary(lambda p: p.c > 0),
}
# The differences that get a test (and join the Holm family): one per question — correctness
# (accuracy; McNemar on the binary outcomes), diversity (PCMD), mode retention (against its
# baseline). Curves over k and mode counts are estimates with intervals, not tests.
_TESTED = frozenset({"accuracy", "pcmd"})
_ONE = Fraction(1)
# Joint retention statistics at the common draws k: (name, per prompt (numerator, denominator)).
_RETENTION: tuple[tuple[str, Callable[[Expected], tuple[Fraction, Fraction]]], ...] = (
    ("mode_retention", lambda e: (e.retained, e.modes_a)),
    ("lost_draw_share", lambda e: (e.lost_draws_a, e.verified_a)),
    ("modes_retained", lambda e: (e.retained, _ONE)),
    ("modes_lost", lambda e: (e.lost, _ONE)),
    ("modes_gained", lambda e: (e.gained, _ONE)),
    ("modes_union", lambda e: (e.union, _ONE)),
)


def _key(summary: PromptSummary) -> tuple[int, str, str]:
    return summary.cell[0], summary.cell[1], summary.id


Observer = Callable[[Entry], PromptSummary | None]


def _join(
    a: str | os.PathLike[str],
    b: str | os.PathLike[str],
    counts: dict[str, int] | None = None,
    observers: tuple[Observer, Observer] | None = None,
) -> Iterator[tuple[PromptSummary, PromptSummary]]:
    """Matched prompt pairs (same level, domain and id); refuses differing references at the end.

    Both journals are read in lockstep, and a prompt waits in memory only until its partner turns
    up, so runs of the same input (same order) compare in constant memory. ``counts`` receives the
    number of prompts of each run. ``observers`` (one per run) summarize each entry in place of
    the plain summary, so a caller can reduce the same single pass further (the HTML report).
    """
    reducers = observers if observers is not None else (entry_summary, entry_summary)
    pending: tuple[dict[tuple[int, str, str], PromptSummary], ...] = ({}, {})
    totals = [0, 0]
    differing: list[str] = []
    twice: InputError | None = None  # raised once both receipts were read, as before (their checks first)
    for pair in lockstep(
        lambda: completed_receipt(a),
        lambda: completed_receipt(b),
        *reducers,
        light=True,
        parallel=observers is None,
    ):
        if twice is not None:
            continue
        if pair[0] is not None and pair[1] is not None and _key(pair[0]) == _key(pair[1]):
            totals[0] += 1
            totals[1] += 1
            matched = [(pair[0], pair[1])]
        else:
            matched = []
            for side, summary in enumerate(pair):
                if summary is None:
                    continue
                totals[side] += 1
                partner = pending[1 - side].pop(_key(summary), None)
                if partner is None:
                    if _key(summary) in pending[side]:
                        twice = InputError(f"{os.fspath((a, b)[side])}: prompt {summary.id!r} appears twice")
                        break
                    pending[side][_key(summary)] = summary
                else:
                    matched.append((summary, partner) if side == 0 else (partner, summary))
        for mine, other in matched:
            if mine.reference_sha256 != other.reference_sha256:
                differing.append(mine.id)
            elif not differing:
                yield mine, other
    if twice is not None:
        raise twice
    if differing:
        shown = ", ".join(repr(i) for i in differing[:_SHOWN])
        more = f" and {len(differing) - _SHOWN} more" if len(differing) > _SHOWN else ""
        raise InputError(f"the runs grade different prompts under the same id: {shown}{more}")
    if counts is not None:
        counts.update(prompts_a=totals[0], prompts_b=totals[1])


def _pearson(freqs: Sequence[int], xs: Sequence[float], ys: Sequence[float]) -> float | None:
    total = sum(freqs)
    if total < 2:
        return None
    mx = math.fsum(f * x for f, x in zip(freqs, xs)) / total
    my = math.fsum(f * y for f, y in zip(freqs, ys)) / total
    sxy = math.fsum(f * (x - mx) * (y - my) for f, x, y in zip(freqs, xs, ys))
    sxx = math.fsum(f * (x - mx) ** 2 for f, x in zip(freqs, xs))
    syy = math.fsum(f * (y - my) ** 2 for f, y in zip(freqs, ys))
    return sxy / math.sqrt(sxx * syy) if sxx > 0 and syy > 0 else None


def _empty_row(
    level: int | None, domain: str | None, draws: tuple[int | None, int | None], metric: str, k: int | None
) -> dict[str, Any]:
    row: dict[str, Any] = dict.fromkeys(COMPARE_COLUMNS)
    row.update(level=level, domain=domain, draws_a=draws[0], draws_b=draws[1], metric=metric, k=k)
    return row


_scaled = scaled_column


def _wald_p(
    estimate_: float | None, error: float | None, prompts: int, *, lower: bool = False
) -> float | None:
    """Normal-approximation p-value of a difference from its clustered standard error: two-sided,
    or one-sided for "below zero" (``lower``). None when there is no error to divide by.

    A zero standard error with a non-zero difference (every prompt differs by the same amount,
    typical of a handful of prompts; or a single prompt, which has no error) has no normal test, and a p of 0 would read as certainty: the
    exact sign-flip test of those ``prompts`` answers instead (:func:`exact_sign_p`)."""
    if estimate_ is None:
        return None
    if error is None and prompts == 1:  # one prompt: no error at all, but its one sign is testable
        error = 0.0
    if error is None:
        return None
    if error == 0:
        return 1.0 if estimate_ == 0 else exact_sign_p(estimate_, prompts, lower=lower)
    z = estimate_ / error
    return 0.5 * math.erfc(-z / math.sqrt(2)) if lower else math.erfc(abs(z) / math.sqrt(2))


def exact_sign_p(difference: float, prompts: int, *, lower: bool = False) -> float | None:
    """The exact sign-flip (paired permutation) test when each of ``prompts`` prompts differs by
    the same ``difference``: under "A and B are exchangeable" every prompt's sign flips with
    probability ½ independently, so only the 2 all-same-sign assignments (two-sided) or the one
    all-below-zero assignment (``lower``) reach the observed mean. None without prompts."""
    if prompts < 1:
        return None
    if lower:
        return 0.5**prompts if difference < 0 else 1.0
    return min(1.0, 2.0 * 0.5**prompts)


def common_draws(pairs: Iterable[Pair]) -> tuple[int, int, int]:
    """(fewest draws of A, fewest of B, the common k = the fewer of the two) over paired prompts."""
    fewest_a = min(q[0].n for q in pairs)
    fewest_b = min(q[1].n for q in pairs)
    return fewest_a, fewest_b, min(fewest_a, fewest_b)


def unequal_draws(groups: dict[tuple[int, str], Counter[Pair]]) -> bool:
    """Whether any paired prompt has different draw counts in the two runs."""
    return any(q[0].n != q[1].n for pairs in groups.values() for q in pairs)


def _group_rows(
    level: int | None,
    domain: str | None,
    pairs: Counter[Pair],
    ks: Sequence[int] | None,
    settings: Bootstrap,
) -> list[dict[str, Any]]:
    categories = sorted(pairs)
    freqs = [pairs[q] for q in categories]
    draws_a = {q[0].n for q in categories}
    draws_b = {q[1].n for q in categories}
    draws = (min(draws_a) if len(draws_a) == 1 else None, min(draws_b) if len(draws_b) == 1 else None)
    fewest_a, fewest_b, common = common_draws(categories)
    # Every k-dependent quantity is compared at k ≤ the common draws, by exact estimators.
    points = k_points(common, ks)
    paired: list[tuple[str, int | None, PerProfile]] = [m for m in metrics_for(points)]
    paired[1:1] = [(name, None, f) for name, f in _BINARY.items()]
    rows, columns = [], []
    for name, k, function in paired:
        values = [(function(q[0]), function(q[1])) for q in categories]
        dens = [da * db for (_, da), (_, db) in values]  # a prompt counts when defined in both runs
        col_a = column((x, d) for ((x, _), _), d in zip(values, dens))
        col_b = column((y, d) for (_, (y, _)), d in zip(values, dens))
        diff = difference(col_b, col_a)
        row = _empty_row(level, domain, draws, name, k)
        kept = [(f, x, y) for f, x, y, d in zip(freqs, col_a.values(), col_b.values(), dens) if d]
        row.update(
            a=estimate(freqs, col_a), b=estimate(freqs, col_b), estimate=estimate(freqs, diff),
            standard_error=standard_error(freqs, diff), prompts=sum(f for f, _, _ in kept),
            correlation=_pearson([f for f, _, _ in kept], [x for _, x, _ in kept], [y for _, _, y in kept]),
        )  # fmt: skip
        if name in _BINARY:
            _mcnemar(row, freqs, col_a, col_b)
            row["p_value"] = row["mcnemar_p"]
        elif name in _TESTED:
            row["p_value"] = _wald_p(row["estimate"], row["standard_error"], row["prompts"])
        rows.append(row)
        columns.append(diff)
    expected = [expected_retention(q[0].n, q[1].n, q[2].joint, common) for q in categories]
    for name, pick in _RETENTION:
        joint = _scaled([pick(e) for e in expected])
        row = _empty_row(level, domain, draws, name, common)
        row.update(estimate=estimate(freqs, joint), standard_error=standard_error(freqs, joint),
                   prompts=sum(f for f, d in zip(freqs, joint.dens) if d))  # fmt: skip
        rows.append(row)
        columns.append(joint)
    half = min(fewest_a // 2, fewest_b)
    if half >= 1:
        # The null of mode retention: how many of A's modes a second sample of A finds (split
        # halves of A's own draws), beside A→B retention at the same h draws of each run.
        halves = [split_half(q[0].n, q[0].counts, half) for q in categories]
        at_half = [expected_retention(q[0].n, q[1].n, q[2].joint, half) for q in categories]
        base = _scaled([(both, single) for both, single in halves])
        ab = _scaled([(e.retained, single) for e, (_, single) in zip(at_half, halves)])
        gap = _scaled([(e.retained - both, single) for e, (both, single) in zip(at_half, halves)])
        contributing = sum(f for f, d in zip(freqs, base.dens) if d)
        row = _empty_row(level, domain, draws, "retention_baseline", half)
        row.update(estimate=estimate(freqs, base), standard_error=standard_error(freqs, base),
                   prompts=contributing)  # fmt: skip
        rows.append(row)
        columns.append(base)
        row = _empty_row(level, domain, draws, "retention_vs_baseline", half)
        row.update(
            a=estimate(freqs, base), b=estimate(freqs, ab), estimate=estimate(freqs, gap),
            standard_error=standard_error(freqs, gap), prompts=contributing,
        )  # fmt: skip
        row["p_value"] = _wald_p(row["estimate"], row["standard_error"], contributing, lower=True)
        rows.append(row)
        columns.append(gap)
    for row, interval in zip(rows, bootstrap.intervals(freqs, columns, settings)):
        row["ci_low"], row["ci_high"] = interval if interval is not None else (None, None)
    return rows


def _mcnemar(row: dict[str, Any], freqs: Sequence[int], col_a: Column, col_b: Column) -> None:

    pairs = list(zip(freqs, col_a.values(), col_b.values()))
    a_only = sum(f for f, x, y in pairs if x > y)
    b_only = sum(f for f, x, y in pairs if y > x)
    test = mcnemar(a_only, b_only)
    row.update(a_only=a_only, b_only=b_only, mcnemar_p=test.p_value, mcnemar_mid_p=test.mid_p_value)
    items = row["prompts"]
    if a_only + b_only:
        try:
            row["detectable_difference"] = detectable_delta(items, (a_only + b_only) / items)
        except ValueError:  # too few items to detect any difference at this discordant rate
            row["detectable_difference"] = None


def unequal_refusal(draws: tuple[int, int]) -> str:
    """Why a comparison of runs with different draw counts is refused (no exact group test)."""
    fewer = min(draws)
    return (
        f"the runs have different draws per prompt ({draws[0]} and {draws[1]}): pass@k, E[distinct@k] "
        f"and mode retention are compared at k = {fewer} by exact estimators, but the McNemar test of "
        f"pass_at_draws compares each run's whole group (pass@{draws[0]} with pass@{draws[1]}) and has "
        f"no exact equivalent at k = {fewer}; pass --allow-unequal-draws to compare anyway"
    )


def compare_pairs(
    groups: dict[tuple[int, str], Counter[Pair]],
    ks: Sequence[int] | None = None,
    settings: Bootstrap | None = None,
    *,
    allow_unequal_draws: bool = False,
) -> list[dict[str, Any]]:
    """Compare rows from joint (A, B, retention) category counts per cell, then per domain (when it
    has several levels) and over all cells (when there are several).

    Runs with different draw counts are refused (:func:`unequal_refusal`) unless
    ``allow_unequal_draws``; every k-dependent row is at k ≤ the common draws either way."""
    chosen = settings if settings is not None else Bootstrap()
    if ks is not None and any(isinstance(k, bool) or not isinstance(k, int) or k < 1 for k in ks):
        raise ValueError("k points must be positive integers")
    if unequal_draws(groups) and not allow_unequal_draws:
        every = [q for pairs in groups.values() for q in pairs]
        fewest = [min(q[0].n for q in every), min(q[1].n for q in every)]
        most = [max(q[0].n for q in every), max(q[1].n for q in every)]
        shown = (most[0], most[1]) if most[0] != most[1] else (fewest[0], fewest[1])
        raise InputError(unequal_refusal(shown))
    rows: list[dict[str, Any]] = []
    overall: Counter[Pair] = Counter()
    domains: dict[str, list[Counter[Pair]]] = {}
    for (level, domain), pairs in sorted(groups.items()):
        rows.extend(_group_rows(level, domain, pairs, ks, chosen))
        overall.update(pairs)
        domains.setdefault(domain, []).append(pairs)
    for domain, parts in sorted(domains.items()):
        if len(parts) > 1 and len(domains) > 1:
            merged: Counter[Pair] = Counter()
            for part in parts:
                merged.update(part)
            rows.extend(_group_rows(None, domain, merged, ks, chosen))
    if len(groups) > 1:
        rows.extend(_group_rows(None, None, overall, ks, chosen))
    return rows


def _source(path: str | os.PathLike[str]) -> dict[str, Any]:

    return {"receipt": os.fspath(path), "sha256": file_sha256(os.fspath(path))}


def paired_counts(
    a: str | os.PathLike[str],
    b: str | os.PathLike[str],
    *,
    observers: tuple[Observer, Observer] | None = None,
    digests: tuple[Digest | None, Digest | None] | None = None,
) -> tuple[dict[tuple[int, str], Counter[Pair]], dict[str, int]]:
    """Joint (A, B, retention) category counts per cell of two receipts, and each run's prompts.

    ``observers``: see ``_join`` (each must return the entry's summary). ``digests``: each run's
    digest (or None) gets every entry of its run in the same pass, in parallel where that pays.
    """
    groups: dict[tuple[int, str], Counter[Pair]] = {}
    counts: dict[str, int] = {}
    # Large journals of runs in the same order: read side by side by workers (stats/paired.py);
    # anything else, and any problem, is read the one sequential way below.
    aligned = None
    if digests is not None:
        aligned = paired_groups(a, b, digests)
        observers = (
            digests[0].observe if digests[0] is not None else entry_summary,
            digests[1].observe if digests[1] is not None else entry_summary,
        )
    elif observers is None:
        aligned = paired_groups(a, b)
    if aligned is not None:
        groups, paired_prompts = aligned
        counts.update(prompts_a=paired_prompts, prompts_b=paired_prompts)
    for mine, other in _join(a, b, counts, observers) if aligned is None else ():
        key = (mine.profile, other.profile, retention(mine.modes, other.modes))
        groups.setdefault((mine.cell[0], mine.cell[1]), Counter())[key] += 1
    return groups, counts


def coverage(groups: dict[tuple[int, str], Counter[Pair]], counts: dict[str, int]) -> dict[str, int]:
    paired = sum(sum(c.values()) for c in groups.values())
    total_a, total_b = counts["prompts_a"], counts["prompts_b"]
    return {"paired": paired, "only_a": total_a - paired, "only_b": total_b - paired,
            "prompts_a": total_a, "prompts_b": total_b}  # fmt: skip


def bootstrap_meta(chosen: Bootstrap) -> dict[str, Any]:
    return {"method": "percentile, prompt pairs resampled with replacement", "engine": bootstrap.engine(),
            "seed": chosen.seed, "resamples": chosen.resamples, "level": chosen.level}  # fmt: skip


def compare(
    a: str | os.PathLike[str],
    b: str | os.PathLike[str],
    ks: Sequence[int] | None = None,
    settings: Bootstrap | None = None,
    *,
    observers: tuple[Observer, Observer] | None = None,
    digests: tuple[Digest | None, Digest | None] | None = None,
    allow_unequal_draws: bool = False,
    filters: Filters | None = None,
) -> StatsTable:
    """Paired comparison of receipt ``b`` against receipt ``a`` (differences are B − A).

    ``observers``/``digests``: see :func:`paired_counts`. ``filters``: only these cells (as
    ``compare_runs``). Runs and suites: :func:`modebench.stats.many.compare_runs`.
    """
    chosen = settings if settings is not None else Bootstrap()
    groups, counts = paired_counts(a, b, observers=observers, digests=digests)
    if filters:
        groups = filters.apply(groups)
    if not groups:
        what = "in the selected cells" if filters else "in common"
        raise InputError(f"{os.fspath(a)} and {os.fspath(b)} have no prompt {what}")
    rows = compare_pairs(groups, ks, chosen, allow_unequal_draws=allow_unequal_draws)
    meta = {"a": _source(a), "b": _source(b), "coverage": coverage(groups, counts),
            "bootstrap": bootstrap_meta(chosen), "notes": budget_notes(groups)}  # fmt: skip
    return StatsTable(SCHEMA, COMPARE_COLUMNS, tuple(rows), meta)


def budget_notes(groups: dict[tuple[int, str], Counter[Pair]]) -> list[str]:
    """What the output must say about draw budgets: the common k of unequal runs."""
    if not groups or not unequal_draws(groups):
        return []
    pairs = [q for part in groups.values() for q in part]
    fewest_a, fewest_b, common = common_draws(pairs)
    return [
        f"unequal draws per prompt (A {fewest_a}, B {fewest_b}): pass@k, E[distinct@k] and mode "
        f"retention are compared at k <= {common} by exact unbiased estimators; pass_at_draws compares "
        "each run's whole group (different budgets)"
    ]


def iter_prompt_retention(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> Iterator[dict[str, Any]]:
    """Per matched prompt: the modes A found, B found, retained, lost, gained (keys themselves).

    Records are yielded only after both receipts passed every check (a first pass that keeps
    nothing), so a caller printing them never prints a record of a receipt that is then refused.
    """
    for _ in lockstep(
        lambda: completed_receipt(a), lambda: completed_receipt(b), _nothing, light=True, parallel=True
    ):
        pass
    for mine, other in _join(a, b):
        yield {
            "level": mine.cell[0],
            "domain": mine.cell[1],
            **prompt_record(mine.id, mine.modes, other.modes),
        }


def _nothing(entry: Entry) -> None:
    return None


def observed_discordant(document: Any, metric: str = "pass_at_draws") -> tuple[float, int]:
    """(discordant rate, paired prompts) of a binary outcome in a compare document's overall row."""
    if not isinstance(document, dict) or document.get("schema") not in (SCHEMA, "modebench-compare-v1"):
        raise InputError(f"not a comparison: expected schema {SCHEMA}")
    rows = [r for r in document.get("rows", []) if isinstance(r, dict) and r.get("metric") == metric]
    if not rows:
        raise InputError(f"the comparison has no {metric} rows")
    # the all-cells row of the first comparison (level and domain null), else the only row
    first = rows[0].get("run_b")
    rows = [r for r in rows if r.get("run_b") == first]
    overall = [r for r in rows if r.get("level") is None and r.get("domain") is None]
    row = overall[0] if overall else rows[0]
    try:
        items = int(row["prompts"])
        rate = (int(row["a_only"]) + int(row["b_only"])) / items
    except (KeyError, TypeError, ValueError, ZeroDivisionError):
        raise InputError(f"the comparison's {metric} row lacks discordant counts") from None
    return rate, items
