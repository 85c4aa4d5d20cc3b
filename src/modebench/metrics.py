"""Accuracy, empirical pass@k, distinct@k and PCMD (pairwise correct-mode diversity).

Pure functions over graded attempts. Mode identity is prompt-local: keys are never pooled across
prompts. Unscorable attempts are evaluator failures and raise instead of counting as wrong.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Any, Final

from modebench.diagnostics import STATUSES, UNSCORABLE, VerifierExecutionError
from modebench.validation import is_integer

POOLED: Final = "pooled"
PER_GROUP: Final = "per_group"
AGGREGATIONS: Final[tuple[str, str]] = (PER_GROUP, POOLED)
DEFAULT_MIN_DEFINED_PROMPTS: Final = 30
FAILED_PCMD: Final[dict[str, Any]] = {"d_mode": None, "reportable": False, "reason": "verifier_failure"}


def _counts(counts: Mapping[Any, Any] | Iterable[Any]) -> list[int]:
    values = list(counts.values()) if isinstance(counts, Mapping) else list(counts)
    for value in values:
        if not is_integer(value) or value < 0:
            raise ValueError("verified mode counts must be nonnegative integers")
    return values


def mode_diversity(counts: Mapping[Any, Any] | Iterable[Any]) -> float | None:
    """PCMD of one count vector: share of verified pairs in different modes; None below 2."""
    values = _counts(counts)
    total = sum(values)
    if total < 2:
        return None
    return 1.0 - sum(n * (n - 1) for n in values) / (total * (total - 1))


def rarefied_distinct(counts: Mapping[Any, Any] | Iterable[Any], depth: int = 2) -> float | None:
    """Expected distinct modes in ``depth`` verified draws without replacement."""
    if not is_integer(depth) or depth <= 0:
        raise ValueError("rarefaction depth must be a positive integer")
    values = _counts(counts)
    total = sum(values)
    if total < depth:
        return None
    expected = 0.0
    for n in values:
        if n <= 0:
            continue
        miss = 1.0
        for i in range(depth):
            miss *= (total - n - i) / (total - i)
        expected += 1.0 - miss
    return expected


def effective_modes(d_mode: float | None) -> float | None:
    """``1 / (1 - d_mode)``; None for None or exactly 1.0."""
    if d_mode is None:
        return None
    if (
        isinstance(d_mode, bool)
        or not isinstance(d_mode, (int, float))
        or not math.isfinite(d_mode)
        or not 0 <= d_mode <= 1
    ):
        raise ValueError("d_mode must be finite and between zero and one")
    if d_mode == 1.0:
        return None
    return 1.0 / (1.0 - d_mode)


def verified_mode_counts(attempts: Iterable[Any]) -> Counter[str]:
    """Counter of canonical keys among verified attempts (checks every attempt's shape)."""
    counts: Counter[str] = Counter()
    for attempt in attempts:
        # A dict is a Mapping: the exact type test first spares the ABC check for graded results.
        mapping = type(attempt) is dict or isinstance(attempt, Mapping)
        if mapping and attempt.get("status") in UNSCORABLE:
            raise VerifierExecutionError(dict(attempt))
        if not mapping or not isinstance(attempt.get("verified"), bool):
            raise ValueError("each attempt requires a boolean verified flag")
        status = attempt.get("status")
        if status is not None and (status not in STATUSES or attempt["verified"] != (status == "correct")):
            raise ValueError("attempt status and verified flag disagree")
        if attempt["verified"]:
            key = attempt.get("canonical_key")
            if not isinstance(key, str) or not key:
                raise ValueError("verified attempts require a nonempty canonical_key string")
            counts[key] += 1
    return counts


def prompt_mode_diversity(draws: Sequence[Mapping[str, Any]], aggregation: str = POOLED) -> float | None:
    """PCMD of one prompt over its groups (pooled counts, or the mean of defined group values)."""
    if aggregation not in AGGREGATIONS:
        raise ValueError(f"unknown aggregation: {aggregation!r}")
    if aggregation == POOLED:
        pooled: Counter[str] = Counter()
        for group in draws:
            pooled.update(verified_mode_counts(group["attempts"]))
        return mode_diversity(pooled)
    values = [mode_diversity(verified_mode_counts(group["attempts"])) for group in draws]
    defined = [v for v in values if v is not None]
    return statistics.fmean(defined) if defined else None


def _threshold(min_defined_prompts: Any) -> int:
    if not is_integer(min_defined_prompts) or min_defined_prompts <= 0:
        raise ValueError("min_defined_prompts must be a positive integer")
    return min_defined_prompts


def pcmd_block(
    defined: int,
    prompts: int,
    d_mode: float | None,
    standard_error: float | None,
    threshold: int,
    aggregation: str,
) -> dict[str, Any]:
    """The 10-key PCMD object of a cell."""
    return {
        "aggregation": aggregation,
        "d_mode": d_mode,
        "defined_prompts": defined,
        "prompts": prompts,
        "support": defined / prompts if prompts else 0.0,
        "min_defined_prompts": threshold,
        "reportable": defined >= threshold,
        "standard_error": standard_error,
        "rarefied_distinct_at_2": None if d_mode is None else 1.0 + d_mode,
        "effective_modes": effective_modes(d_mode),
    }


def cell_summary(
    prompt_results: Sequence[Mapping[str, Any]],
    aggregation: str = POOLED,
    min_defined_prompts: int = DEFAULT_MIN_DEFINED_PROMPTS,
) -> dict[str, Any]:
    """PCMD summary of a cell from per-prompt results (``fmean``/``stdev`` numerics)."""
    threshold = _threshold(min_defined_prompts)
    if aggregation not in AGGREGATIONS:
        raise ValueError(f"unknown aggregation: {aggregation!r}")
    values = [prompt_mode_diversity(result["draws"], aggregation) for result in prompt_results]
    defined = [v for v in values if v is not None]
    d_mode = statistics.fmean(defined) if defined else None
    error = statistics.stdev(defined) / math.sqrt(len(defined)) if len(defined) > 1 else None
    return pcmd_block(len(defined), len(prompt_results), d_mode, error, threshold, aggregation)


class CellAccumulator:
    """Constant-space cell aggregate with exact rational sums (the streaming v4 path).

    Per-prompt values repeat heavily (accuracy is ``j / k``, pass@k is 0 or 1, PCMD takes few
    values for small k), so each is counted by value and turned into a rational once: the sums
    are the same exact rationals as adding ``Fraction(value)`` prompt by prompt, at a fraction of
    the cost. At most ``DISTINCT_VALUES`` values are held per sum; beyond that they are folded in.
    """

    DISTINCT_VALUES = 1024

    def __init__(self) -> None:
        self.prompts = 0
        self._accuracy: Counter[float] = Counter()
        self._passed: Counter[float] = Counter()
        self.distinct = 0
        self.defined = 0
        self._pcmd: Counter[float] = Counter()
        self._sums = [Fraction(0), Fraction(0), Fraction(0), Fraction(0)]  # acc, passed, pcmd, pcmd²

    def add(self, prompt_result: Mapping[str, Any]) -> None:
        """Add one scorable per-prompt result (its aggregates must not be null)."""
        self.prompts += 1
        accuracy, passed = prompt_result["accuracy"], prompt_result["pass_at_k"]
        for counts, value in ((self._accuracy, accuracy), (self._passed, passed)):
            if value not in counts:
                Fraction(value)  # a value the rational sum refuses is refused now, as it always was
        self._accuracy[accuracy] += 1
        self._passed[passed] += 1
        self.distinct += prompt_result["distinct_at_k"]
        value = prompt_mode_diversity(prompt_result["draws"], POOLED)
        if value is not None:
            self.defined += 1
            self._pcmd[value] += 1
        if max(len(self._accuracy), len(self._passed), len(self._pcmd)) > self.DISTINCT_VALUES:
            self._fold()

    def add_counted(
        self,
        prompts: int,
        accuracy: Mapping[float, int],
        passed: Mapping[float, int],
        distinct: int,
        defined: int,
        pcmd: Mapping[float, int],
    ) -> None:
        """Add prompts already counted by value (a reader that tallies without :meth:`add`)."""
        self.prompts += prompts
        self._accuracy.update(accuracy)
        self._passed.update(passed)
        self.distinct += distinct
        self.defined += defined
        self._pcmd.update(pcmd)
        if max(len(self._accuracy), len(self._passed), len(self._pcmd)) > self.DISTINCT_VALUES:
            self._fold()

    def merge(self, other: CellAccumulator) -> None:
        """Add the prompts of another accumulator (exact sums: the order of merging does not matter)."""
        self.add_counted(
            other.prompts, other._accuracy, other._passed, other.distinct, other.defined, other._pcmd
        )
        self._sums = [mine + theirs for mine, theirs in zip(self._sums, other._sums)]

    def _fold(self) -> None:
        """Move the counted values into the exact sums."""
        sums = self._sums
        for value, count in self._accuracy.items():
            sums[0] += Fraction(value) * count
        for value, count in self._passed.items():
            sums[1] += Fraction(value) * count
        for value, count in self._pcmd.items():
            exact = Fraction(value)
            sums[2] += exact * count
            sums[3] += exact * exact * count
        self._accuracy.clear()
        self._passed.clear()
        self._pcmd.clear()

    @property
    def accuracy(self) -> Fraction:
        self._fold()
        return self._sums[0]

    @property
    def passed(self) -> Fraction:
        self._fold()
        return self._sums[1]

    @property
    def pcmd(self) -> Fraction:
        self._fold()
        return self._sums[2]

    @property
    def pcmd_squares(self) -> Fraction:
        self._fold()
        return self._sums[3]

    def summary(self, threshold: int, healthy: bool = True) -> dict[str, Any]:
        """``accuracy, pass_at_k, distinct_at_k, pcmd`` of the cell (nulls when not healthy)."""
        if not healthy:
            return {"accuracy": None, "pass_at_k": None, "distinct_at_k": None, "pcmd": dict(FAILED_PCMD)}
        n, d = self.prompts, self.defined
        d_mode = float(self.pcmd) / d if d else None
        error = None
        if d > 1:
            variance = (self.pcmd_squares - self.pcmd * self.pcmd / d) / (d - 1)
            error = math.sqrt(float(variance)) / math.sqrt(d)
        return {
            "accuracy": float(self.accuracy) / n,
            "pass_at_k": float(self.passed) / n,
            "distinct_at_k": float(self.distinct) / n,
            "pcmd": pcmd_block(d, n, d_mode, error, threshold, POOLED),
        }


def prompt_metrics(attempts: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """``pass_at_k``, ``distinct_at_k``, ``accuracy`` of one group; all null if any is unscorable."""
    if any(attempt["status"] in UNSCORABLE for attempt in attempts):
        return {"pass_at_k": None, "distinct_at_k": None, "accuracy": None}
    keys = [attempt["canonical_key"] for attempt in attempts if attempt["verified"]]
    return {
        "pass_at_k": 1.0 if keys else 0.0,
        "distinct_at_k": len(set(keys)),
        "accuracy": len(keys) / len(attempts),
    }


__all__ = [
    "AGGREGATIONS",
    "CellAccumulator",
    "DEFAULT_MIN_DEFINED_PROMPTS",
    "FAILED_PCMD",
    "PER_GROUP",
    "POOLED",
    "cell_summary",
    "effective_modes",
    "mode_diversity",
    "pcmd_block",
    "prompt_metrics",
    "prompt_mode_diversity",
    "rarefied_distinct",
    "verified_mode_counts",
]

# ModeBench 0.4.0 surface names (docs/compatibility.md).
from modebench.validation import positive_integer  # noqa: E402

__all__ += ["positive_integer"]
