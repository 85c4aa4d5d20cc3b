"""In-process grading cost per response, per domain (median and p95), printed and written as JSON.

Measures what a worker does for each response once the reference is validated and cached:
``grade_local`` plus the reply-size guard. Responses are the conformance fixture cases of ModeBench
0.4.0 when ``../shared/reference`` is present, else generated tasks with their certified witnesses
and a few wrong and malformed answers.

    python ops/benchmarks/benchmark_grading.py [--repeat 200] [--output ops/results/grading.json]
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "src"))

from modebench.contracts import DOMAINS  # noqa: E402
from modebench.domains import plugin  # noqa: E402
from modebench.domains._pipeline import grade_local, reply_guard  # noqa: E402

FIXTURES = ROOT.parent / "shared" / "reference" / "tests" / "fixtures" / "conformance-v1.json"
TARGETS_US = {"mathir": 3000.0}
DEFAULT_TARGET_US = 50.0


def _cases_from_fixtures() -> list[tuple[int, str, Any, str]]:
    data = json.loads(FIXTURES.read_text(encoding="utf-8"))
    cases = []
    for fixture in data["fixtures"]:
        for case in fixture["cases"]:
            cases.append((fixture["level"], fixture["domain"], fixture["row"]["answer"], case["response"]))
    return cases


def _cases_from_generators(rows_per_level: int = 4) -> list[tuple[int, str, Any, str]]:
    cases = []
    for domain in DOMAINS:
        found = plugin(domain)
        if found.generate is None or found.witnesses is None:
            continue
        for level in range(1, 6):
            for seed in range(rows_per_level):
                row = found.generate(level, random.Random(seed))
                answer = json.loads(row["answer"])
                for text in found.witnesses(level, answer)[:3] + ["not a solution", "\\boxed{0}"]:
                    cases.append((level, domain, answer, text))
    return cases


def cell_name(level: int, domain: str) -> str:
    # Pantry Level 1 grades a support mask by projection: reported apart from Levels 2–5.
    if domain == "pantry_plan":
        return "pantry_plan L1" if level == 1 else "pantry_plan L2-5"
    return domain


def measure_cold(cases: list[tuple[int, str, Any, str]]) -> dict[str, list[float]]:
    """Each response graded exactly once, right after its reference was validated: no memo helps."""
    samples: dict[str, list[float]] = {}
    for level, domain, answer, text in cases:
        grade_local(level, domain, answer, "")  # validates and caches the reference only
        started = time.perf_counter_ns()
        reply_guard(grade_local(level, domain, answer, text))
        samples.setdefault(cell_name(level, domain), []).append((time.perf_counter_ns() - started) / 1000)
    return samples


def measure(cases: list[tuple[int, str, Any, str]], repeat: int) -> dict[str, dict[str, float]]:
    cold = measure_cold(cases)
    samples: dict[str, list[float]] = {}
    for level, domain, answer, text in cases:
        reply_guard(grade_local(level, domain, answer, text))  # validate and cache the reference
        timings = samples.setdefault(cell_name(level, domain), [])
        for _ in range(repeat):
            started = time.perf_counter_ns()
            reply_guard(grade_local(level, domain, answer, text))
            timings.append((time.perf_counter_ns() - started) / 1000)
    report = {}
    for name, timings in sorted(samples.items()):
        timings.sort()
        first = sorted(cold[name])
        report[name] = {
            "responses": len(timings) // repeat,
            "median_us": round(statistics.median(timings), 2),
            "p95_us": round(timings[int(0.95 * (len(timings) - 1))], 2),
            "cold_median_us": round(statistics.median(first), 2),
            "cold_p95_us": round(first[int(0.95 * (len(first) - 1))], 2),
            "target_median_us": TARGETS_US.get(name, DEFAULT_TARGET_US),
        }
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument("--output", default=str(ROOT / "ops" / "results" / "grading.json"))
    args = parser.parse_args()
    source = "conformance-v1 fixtures" if FIXTURES.is_file() else "generated tasks"
    cases = _cases_from_fixtures() if FIXTURES.is_file() else _cases_from_generators()
    for domain in DOMAINS:  # as a worker does before taking work (SymPy for MathIR)
        warm_up = plugin(domain).warm_up
        if warm_up is not None:
            warm_up()
    report = measure(cases, args.repeat)
    print(f"in-process grading cost per response ({source}, {args.repeat} repeats)")
    print("warm = the same response graded again; cold = its first grade (reference already validated)")
    print(
        f"{'domain':<18} {'responses':>9} {'warm med':>9} {'warm p95':>9} {'cold med':>9} {'cold p95':>9} {'target':>7}"
    )
    for name, row in report.items():
        print(
            f"{name:<18} {row['responses']:>9} {row['median_us']:>9.1f} {row['p95_us']:>9.1f} "
            f"{row['cold_median_us']:>9.1f} {row['cold_p95_us']:>9.1f} {row['target_median_us']:>7.0f}"
        )
    payload = {
        "benchmark": "in-process grading",
        "source": source,
        "python": platform.python_version(),
        "domains": report,
    }
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    print(f"written: {args.output}")


if __name__ == "__main__":
    main()
