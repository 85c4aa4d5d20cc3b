"""Task generator: one python_factors row with the release's row schema per call.

Level 1 follows the published ``ops/make_python_factor_mode_data.py`` rules for a single row:
4 distinct values drawn with ``rng.sample`` from 6…96 restricted to values with at least two
proper divisors (primes and prime squares excluded), sorted ascending, rejected while the row has
fewer than 16 modes. (The original's cross-row rules — no duplicate rows, no eval/train overlap,
final shuffle — need a whole split and are the caller's business.)

Levels 2–5 were built by unpublished admission procedures. Rows here follow only the documented
shape: case count and value window per level, "at least one value above 96" at Level 2, prime
squares allowed at Level 4, and the same ≥ 16-mode floor. The ``level3_*`` / ``scale_*`` columns
describe THIS generator (label ``GENERATOR``), not the original construction metadata; frozen
rows must be loaded, never regenerated.

The certificate runs the smallest- and largest-divisor seed programs through this domain's
own grader, so ``certified_mode_key_sha256`` is exactly what the verifier produces.
"""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass
from functools import cache
from typing import Any

from modebench.domains.python_factors.check import mode_key, run_cases
from modebench.domains.python_factors.language import load_candidate
from modebench.domains.python_factors.reference import PYTHON_VERSION, VERIFIER, mode_count, proper_divisors

GENERATOR = "modebench.domains.python_factors.generate"
SOURCE = "synthetic_python_factor_modebench_v1"
MIN_MODES = 16
PROBLEM = (
    "Write one pure Python function with the exact form lambda n: EXPR. An external Python tool will call it"
    " once for each n in [{cases}]. For every call, return an integer d satisfying 1 < d < n and n % d == 0."
    " Different valid return vectors are different solution modes. You may use integer literals, n, +, -, *,"
    " //, %, comparisons, Boolean operators, and conditional expressions; calls, imports, attributes,"
    " containers, and other names are forbidden. Return exactly the one-line lambda inside \\boxed{{}} and no"
    " explanation."
)


@dataclass(frozen=True)
class LevelShape:
    cases: int
    low: int
    high: int
    min_divisors: int  # 2 excludes primes and prime squares; 1 only excludes primes
    above: int | None  # at least one case must exceed this value
    split_tag: str


LEVELS = {
    1: LevelShape(4, 6, 96, 2, None, "eval"),
    2: LevelShape(4, 6, 192, 2, 96, "level2_eval"),
    3: LevelShape(4, 60, 254, 2, None, "level3_eval"),
    4: LevelShape(6, 25, 998, 1, None, "level4_eval"),
    5: LevelShape(4, 48, 996, 2, None, "level5_eval"),
}


@cache
def _candidates(level: int) -> tuple[int, ...]:
    shape = LEVELS[level]
    return tuple(v for v in range(shape.low, shape.high + 1) if len(proper_divisors(v)) >= shape.min_divisors)


def seed_programs(cases: tuple[int, ...]) -> tuple[str, str]:
    """The smallest- and largest-divisor dispatch lambdas of the certificate (the fixtures' witness form)."""

    def dispatch(outputs: list[int]) -> str:
        arms = "".join(f"{d} if n=={v} else " for v, d in zip(cases[:-1], outputs[:-1]))
        return f"lambda n: {arms}{outputs[-1]}"

    return (
        dispatch([proper_divisors(v)[0] for v in cases]),
        dispatch([proper_divisors(v)[-1] for v in cases]),
    )


def certified_keys(cases: tuple[int, ...]) -> list[str]:
    """Distinct keys of the two seed programs, executed by this verifier, in code-point order."""
    keys = {mode_key(run_cases(load_candidate(program), cases)) for program in seed_programs(cases)}
    return sorted(keys)


def _draw_cases(level: int, rng: random.Random) -> tuple[int, ...]:
    shape = LEVELS[level]
    pool = _candidates(level)
    while True:
        cases = tuple(sorted(rng.sample(pool, shape.cases)))
        if shape.above is not None and max(cases) <= shape.above:
            continue
        if mode_count(cases) >= MIN_MODES:
            return cases


def _dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def generate(level: int, rng: random.Random) -> dict[str, Any]:
    """One row for ``level`` (1–5); deterministic in ``rng``, which is the only randomness used."""
    shape = LEVELS[level]
    cases = _draw_cases(level, rng)
    modes = mode_count(cases)
    keys = certified_keys(cases)
    instance = f"generated-level{level}-m{modes}-{rng.getrandbits(48):012x}"
    answer = {
        "verifier": VERIFIER,
        "python_version": PYTHON_VERSION,
        "cases": list(cases),
        "num_modes": modes,
        "num_externally_certified_modes": len(keys),
        "certified_mode_key_sha256": hashlib.sha256("\n".join(keys).encode("utf-8")).hexdigest(),
        "instance_id": instance,
        "source": SOURCE,
    }
    row: dict[str, Any] = {
        "problem": PROBLEM.format(cases=", ".join(map(str, cases))),
        "answer": _dumps(answer),
        "modebench_task": VERIFIER,
        "answer_mode_count": modes,
        "answer_mode_split": shape.split_tag,
    }
    profile = f"cases{shape.cases}_{shape.low}_{shape.high}"
    if level == 3:  # eval column order of Appendix B
        row.update(
            level3_difficulty="uncalibrated",
            level3_generator=GENERATOR,
            level3_generation_profile=profile,
            level3_cell_index=modes,
            level3_python_preset="uniform_composites",
            level3_case_window=f"{shape.low}-{shape.high}",
            level3_minimum_case_band=min(cases),
            level3_maximum_smallest_factor=max(proper_divisors(v)[0] for v in cases),
            level3_case_max=max(cases),
        )
    elif level in (4, 5):
        row.update(
            scale_candidate_generator=GENERATOR,
            scale_candidate_tier="uncalibrated",
            scale_candidate_profile=profile,
            scale_origin_metadata=_dumps({"generator": GENERATOR, "level": level}),
            scale_cell_index=modes,
        )
        law = "scale_python_harder_law_version" if level == 4 else "scale_bridge_law_version"
        row[law] = f"{GENERATOR}:v1"
    return row


__all__ = ["GENERATOR", "LEVELS", "PROBLEM", "certified_keys", "generate", "seed_programs"]
