"""Coverage of the `stats` bootstrap intervals on synthetic runs with a known truth.

A prompt population of a few types (success probability p, modes with shares q) is sampled:
each run draws P prompts, n draws per prompt, and computes the stats table through the shipped
code path (`curves_from_profiles`: the same estimators, clustered errors and seeded bootstrap).
For every metric the population truth is known in closed form:

    accuracy = Σ π p;  pass@k = Σ π (1 − (1 − p)^k);  E[distinct@k] = Σ π Σ_m (1 − (1 − p q_m)^k);
    PCMD = Σ π P(c ≥ 2)(1 − Σ q²) / Σ π P(c ≥ 2)   (the mean over prompts with two successes).

The share of runs whose interval contains the truth must lie in [0.93, 0.97] for a 95 % interval.

    python ops/checks/stats_coverage.py --runs 1000 --output evidence/statistics-coverage.json
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "src"))

from modebench.stats import Bootstrap  # noqa: E402
from modebench.stats.profiles import Profile  # noqa: E402
from modebench.stats.summary import curves_from_profiles  # noqa: E402

# (population share π, success probability p, mode shares q)
TYPES = (
    (0.30, 0.10, (1.0,)),
    (0.25, 0.40, (0.7, 0.3)),
    (0.25, 0.65, (0.4, 0.3, 0.2, 0.1)),
    (0.20, 0.90, (0.5, 0.5)),
)
KS = (1, 2, 4, 8)
BAND = (0.93, 0.97)


def truth(n: int) -> dict[tuple[str, int | None], float]:
    values: dict[tuple[str, int | None], float] = {("accuracy", None): sum(s * p for s, p, _ in TYPES)}
    for k in KS:
        values[("pass_at_k", k)] = sum(s * (1 - (1 - p) ** k) for s, p, _ in TYPES)
        values[("distinct_at_k", k)] = sum(s * sum(1 - (1 - p * q) ** k for q in qs) for s, p, qs in TYPES)
    two = [1 - (1 - p) ** n - n * p * (1 - p) ** (n - 1) for _, p, _ in TYPES]
    weight = sum(s * t for (s, _, _), t in zip(TYPES, two))
    values[("pcmd", None)] = (
        sum(s * t * (1 - sum(q * q for q in qs)) for (s, _, qs), t in zip(TYPES, two)) / weight
    )
    return values


def simulate(rng: random.Random, prompts: int, n: int) -> dict[tuple[int, str, int], Counter[Profile]]:
    shares = [s for s, _, _ in TYPES]
    profiles: Counter[Profile] = Counter()
    for _, p, qs in rng.choices(TYPES, weights=shares, k=prompts):
        draws = [rng.choices(range(len(qs)), weights=qs)[0] if rng.random() < p else None for _ in range(n)]
        modes = Counter(m for m in draws if m is not None)
        counts = tuple(sorted(modes.values(), reverse=True))
        profiles[Profile(n, sum(counts), counts, draws[0] is not None)] += 1
    return {(1, "synthetic", n): profiles}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--prompts", type=int, default=300)
    parser.add_argument("--draws", type=int, default=8)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--output")
    args = parser.parse_args()
    target = truth(args.draws)
    hits: Counter[str] = Counter()
    normal_hits: Counter[str] = Counter()
    counted: Counter[str] = Counter()
    rng = random.Random(args.seed)
    started = time.perf_counter()
    engine = ""
    for run in range(args.runs):
        table = curves_from_profiles(
            simulate(rng, args.prompts, args.draws), KS, Bootstrap(seed=run, resamples=args.resamples)
        )
        engine = table.meta["bootstrap"]["engine"]
        for row in table.rows:
            key = (row["metric"], row["k"])
            if key not in target or row["ci_low"] is None:
                continue
            name = row["metric"] if row["k"] is None else f"{row['metric']}@{row['k']}"
            counted[name] += 1
            hits[name] += row["ci_low"] <= target[key] <= row["ci_high"]
            margin = 1.959963984540054 * row["standard_error"]
            normal_hits[name] += abs(row["estimate"] - target[key]) <= margin
    coverage = {name: hits[name] / counted[name] for name in counted}
    result = {
        "script": "ops/checks/stats_coverage.py",
        "claim": "95 % prompt-level percentile bootstrap intervals of `modebench stats` cover the known truth",
        "band": list(BAND),
        "settings": {
            "runs": args.runs,
            "prompts_per_run": args.prompts,
            "draws_per_prompt": args.draws,
            "resamples": args.resamples,
            "level": 0.95,
            "seed": args.seed,
            "engine": engine,
            "population": [{"share": s, "success": p, "modes": list(q)} for s, p, q in TYPES],
        },
        "truth": {(m if k is None else f"{m}@{k}"): v for (m, k), v in target.items()},
        "runs_counted": dict(counted),
        "bootstrap_coverage": coverage,
        "normal_se_coverage": {name: normal_hits[name] / counted[name] for name in counted},
        "within_band": all(BAND[0] <= c <= BAND[1] for c in coverage.values()),
        "seconds": round(time.perf_counter() - started, 1),
        "python": platform.python_version(),
    }
    text = json.dumps(result, indent=2)
    print(text)
    if args.output:
        Path(args.output).write_text(text + "\n", encoding="utf-8")
    if not result["within_band"]:
        sys.exit(1)


if __name__ == "__main__":
    main()
