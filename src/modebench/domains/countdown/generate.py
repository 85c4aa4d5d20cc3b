"""Countdown task generator: one row with the release's row schema per call.

Level 1 follows the documented ``ops/make_exact_countdown_mode_data.py`` rules: distinct operands
from ``2..12``, targets that are positive, not an operand, at most ``12 × 3``, with 4–32 modes,
drawn uniformly from the full candidate list. Level 2 applies the same rules to four operands up
to 14 (the original's harder-variant preference and histogram matching are not reproduced).
The Level 3–5 generators were never published; their rows here only follow the observed operand
counts and ranges, and the ``level3_*`` / ``scale_*`` columns are filled with this generator's own
labels, not the original construction metadata. Frozen rows must still be loaded, not regenerated.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from functools import cache
from itertools import combinations
from typing import Any

from modebench.domains.countdown.modes import expression_table

GENERATOR = "modebench.domains.countdown.generate"
SOURCE = "synthetic_exact_countdown"
PROBLEM = (
    "Using the numbers {numbers}, create an arithmetic expression that equals {target}. Use each given "
    "number exactly once. You may use +, -, *, /, and parentheses. Return exactly one final answer and "
    "no explanation: the expression inside \\boxed{{}}."
)


@dataclass(frozen=True)
class LevelShape:
    operand_counts: tuple[int, ...]
    low: int
    high: int
    max_target: int
    min_modes: int
    max_modes: int
    split_tag: str


LEVELS = {
    1: LevelShape((3,), 2, 12, 36, 4, 32, "eval_multi_answer"),
    2: LevelShape((4,), 2, 14, 56, 4, 32, "level2_eval"),
    3: LevelShape((3, 4), 2, 99, 999, 2, 8, "level3_eval"),
    4: LevelShape((4,), 2, 192, 9999, 2, 8, "level4_eval"),
    5: LevelShape((4,), 5, 188, 9999, 2, 8, "level5_eval"),
}


def _targets(numbers: tuple[int, ...], shape: LevelShape) -> list[tuple[int, int]]:
    """``(target, mode count)`` of every admissible target of one operand set, ascending."""
    found = []
    for value, trees in expression_table(numbers).items():
        if value.denominator != 1 or not 0 < value <= shape.max_target or int(value) in numbers:
            continue
        if shape.min_modes <= len(trees) <= shape.max_modes:
            found.append((int(value), len(trees)))
    return sorted(found)


@cache
def _all_candidates(level: int) -> tuple[tuple[tuple[int, ...], int, int], ...]:
    """Every (numbers, target, modes) of a small level; cached (keyed by the level only)."""
    shape = LEVELS[level]
    return tuple(
        (numbers, target, count)
        for size in shape.operand_counts
        for numbers in combinations(range(shape.low, shape.high + 1), size)
        for target, count in _targets(numbers, shape)
    )


def _draw(level: int, rng: random.Random) -> tuple[tuple[int, ...], int, int]:
    if level == 1:
        return rng.choice(_all_candidates(level))
    shape = LEVELS[level]
    while True:  # rejection sampling: enumerating every 4-operand set up front would take minutes
        size = rng.choice(shape.operand_counts)
        numbers = tuple(sorted(rng.sample(range(shape.low, shape.high + 1), size)))
        found = _targets(numbers, shape)
        if found:
            target, count = rng.choice(found)
            return numbers, target, count


def _extra_columns(level: int, numbers: tuple[int, ...], count: int) -> dict[str, Any]:
    if level == 3:
        return {
            "level3_difficulty": "uncalibrated",
            "level3_generator": GENERATOR,
            "level3_sampling_law": "uniform_distinct_operands",
            "level3_support_sampling_index": count,  # the exact mode-count (support) cell
            "level3_countdown_support7_exception": False,
            "level3_countdown_target_family": f"operands{len(numbers)}",
        }
    if level in (4, 5):
        return {
            "scale_countdown_target_family": f"operands{len(numbers)}",
            "scale_origin_metadata": json.dumps(
                {"generator": GENERATOR}, sort_keys=True, separators=(",", ":")
            ),
            "scale_candidate_generator": GENERATOR,
            "scale_candidate_tier": "uncalibrated",
            "scale_candidate_profile": f"level{level}_operands_{LEVELS[level].low}_{LEVELS[level].high}",
            "scale_cell_index": count,
        }
    return {}


def generate(level: int, rng: random.Random) -> dict[str, Any]:
    """One row for ``level``; deterministic in the state of ``rng`` (its only source of randomness)."""
    if level not in LEVELS:
        raise ValueError("level must be 1, 2, 3, 4, or 5")
    numbers, target, count = _draw(level, rng)
    tag = LEVELS[level].split_tag
    answer = {
        "instance_id": f"{tag}-{rng.getrandbits(32)}-m{count}",
        "num_completions": count,
        "num_expressions": count,
        "numbers": list(numbers),
        "source": SOURCE,
        "target": target,
        "verifier": "countdown",
    }
    return {
        "problem": PROBLEM.format(numbers=list(numbers), target=target),
        # The original generator used default separators here.
        "answer": json.dumps(answer, sort_keys=True),
        "modebench_task": "countdown",
        "answer_mode_count": count,
        "answer_mode_split": tag,
        **_extra_columns(level, numbers, count),
    }


__all__ = ["LEVELS", "PROBLEM", "generate"]
