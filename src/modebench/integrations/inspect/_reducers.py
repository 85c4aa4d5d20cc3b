"""Reducers: the epochs of one sample → its pass@k, E[distinct@k] and PCMD.

Each is a thin wrapper over :mod:`modebench.stats.estimators` applied to the epochs' scores
(verified or not, and the canonical key the scorer stored), so Inspect reports the same numbers as
``modebench stats`` on the converted receipt. PCMD is undefined below two verified epochs: that
sample's value is NaN, which :func:`defined_mean` leaves out (as the receipt's PCMD does).
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

from inspect_ai.scorer import Metric, SampleScore, Score, ScoreReducer, metric, score_reducer

from modebench.stats.estimators import distinct_at_k, pass_at_k, pcmd

__all__ = ["defined_mean", "distinct_at_k_reducer", "pass_at_k_reducer", "pcmd_reducer"]


def _modes(scores: list[Score]) -> tuple[int, int, Counter[str]]:
    modes: Counter[str] = Counter()
    correct = 0
    for score in scores:
        meta: dict[str, Any] = score.metadata or {}
        if meta.get("verified"):
            correct += 1
            modes[str(meta["canonical_key"])] += 1
    return len(scores), correct, modes


def _k(k: int | None, n: int) -> int:
    return n if k is None else k


@score_reducer(name="pass_at_k")
def pass_at_k_reducer(k: int | None = None) -> ScoreReducer:
    """Unbiased pass@k of the sample's epochs (k defaults to the number of epochs)."""

    def reduce(scores: list[Score]) -> Score:
        n, c, _ = _modes(scores)
        return Score(value=pass_at_k(n, c, _k(k, n)))

    return reduce


@score_reducer(name="distinct_at_k")
def distinct_at_k_reducer(k: int | None = None) -> ScoreReducer:
    """Unbiased E[distinct@k]: expected distinct verified modes among k epochs."""

    def reduce(scores: list[Score]) -> Score:
        n, _, modes = _modes(scores)
        return Score(value=distinct_at_k(n, modes.values(), _k(k, n)))

    return reduce


@score_reducer(name="pcmd")
def pcmd_reducer() -> ScoreReducer:
    """Pairwise correct-mode diversity of the epochs (NaN below two verified epochs)."""

    def reduce(scores: list[Score]) -> Score:
        _, _, modes = _modes(scores)
        value = pcmd(modes.values())
        return Score(value=math.nan if value is None else value)

    return reduce


@metric
def defined_mean() -> Metric:
    """Mean over samples whose reduced value is defined (not NaN)."""

    def compute(scores: list[SampleScore]) -> float:
        values = [float(s.score.as_float()) for s in scores]
        defined = [v for v in values if not math.isnan(v)]
        return math.fsum(defined) / len(defined) if defined else math.nan

    return compute
