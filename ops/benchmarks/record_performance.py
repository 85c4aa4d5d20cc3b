"""Collect the latest benchmark results (``ops/results/*.json``) into ``evidence/performance.json``.

Run the benchmarks first (``make bench``); this only gathers their output with the method and the
machine they ran on, so the record says how each figure was measured.
"""

from __future__ import annotations

import json
import os
import platform
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "ops" / "results"
METHODS = {
    "grading": "ops/benchmarks/benchmark_grading.py: in-process cost per response of what a worker does (grade_local + "
    "reply guard) with the domains warmed and the reference validated and cached; conformance-v1 fixture "
    "responses; warm = the same response graded again (repeated grade), cold = its first grade.",
    "worker": "ops/benchmarks/benchmark_worker.py: the same mixed all-domain batch (k = 8, all response texts distinct, "
    "references validated first) graded in fresh processes, in alternating rounds: in process (caller-side caps "
    "with the answer sized once per prompt, then grade_local + reply guard), through one warm worker driven as "
    "the evaluator drives it (ParallelGrader(1).results), and through one worker one chunk at a time (serial).",
    "evaluation": "ops/benchmarks/benchmark_evaluation.py: `evaluate_file` in a fresh process on generated inputs over all "
    "25 cells, k = 8; 'mixed' repeats answers the way RL logs do, 'distinct' makes every (reference, response) "
    "pair unique. Wall time includes worker start-up, preflight, grading and publication; RSS is ru_maxrss. "
    "'side_by_side': the mixed 1,000-prompt and all-distinct 652-prompt inputs through the evaluate command "
    "with --workers 1, timed from outside, next to ModeBench 0.4.0 on the same input when measured "
    "(--reference-python), receipt cells compared; load averages say how busy the shared machine was.",
    "startup": "ops/benchmarks/benchmark_startup.py: fresh interpreters timed from outside, median of repeats; CPU seconds "
    "are the whole process tree's (interpreter and grading workers): `python -c pass`, `import modebench.api`, "
    "a first `api.grade()` of one countdown response, and `modebench evaluate` of one countdown prompt (k = 8).",
}


def main() -> int:
    record = {
        "schema": "modebench-performance-v1",
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "system": platform.system()},
        "note": "Measurements, not guarantees; other load on the machine inflates them.",
        "benchmarks": {},
    }
    target = ROOT / "evidence" / "performance.json"
    previous = json.loads(target.read_text(encoding="utf-8"))["benchmarks"] if target.is_file() else {}
    for name, method in METHODS.items():
        path = RESULTS / f"{name}.json"
        if path.is_file():
            record["benchmarks"][name] = {"method": method, "result": json.loads(path.read_text())}  # type: ignore[index]
        elif name in previous:  # not rerun this time: keep the last recorded figures
            record["benchmarks"][name] = previous[name]  # type: ignore[index]
    target.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    print(f"written: {target.relative_to(ROOT)} ({len(record['benchmarks'])} benchmarks)")  # type: ignore[arg-type]
    return 0


if __name__ == "__main__":
    sys.exit(main())
