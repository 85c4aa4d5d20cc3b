"""Overhead of the isolation boundary: one worker versus in-process grading, same responses.

A mixed batch over all 25 level/domain cells with k = 8 responses per prompt (every response
text distinct, so no result cache helps) is graded in fresh processes, so every path starts
with cold caches and references validated first (as preflight does):

* ``in-process``: the cheapest honest in-process path: the caller-side caps with the answer
  sized once per prompt, then exactly the worker's own steps (``grade_local`` + reply guard);
* ``worker``: one worker driven as the evaluator drives it (``ParallelGrader(1).results``:
  chunks of prompts planned on the calling thread while a grading thread keeps the worker busy);
* ``serial``: one ``grade_prompts`` call per chunk, each waiting for the previous one.

Paths are run in alternation, ``--repeat`` times each, so drifting machine load hits all of
them alike; the report gives medians, the per-round ratios and the best ratio.

    python ops/benchmarks/benchmark_worker.py [--prompts 2000] [--repeat 7]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "ops" / "benchmarks"))

import benchmark_evaluation as shapes  # noqa: E402

from modebench.domains._pipeline import grade_local, reply_guard, request_overhead, text_precheck  # noqa: E402
from modebench.parallel import CHUNK_PROMPTS, ParallelGrader, grade_prompts  # noqa: E402

PATHS = ("in-process", "worker", "serial")


def _load(path: Path) -> list[dict[str, Any]]:
    prompts = []
    for line in path.read_text().splitlines():
        record = json.loads(line)
        answer = json.loads(record["answer"])
        prompts.append(
            {"level": record["level"], "domain": record["domain"], "row": {"answer": answer}, "raw": record}
        )
    return prompts


def measure(mode: str, path: Path) -> float:
    """Seconds to grade every response of the file, in a process whose caches start cold."""
    prompts = _load(path)
    if mode == "in-process":
        for item in prompts:
            grade_local(item["level"], item["domain"], item["row"]["answer"], "")
        started = time.perf_counter()
        for item in prompts:
            level, domain, answer = item["level"], item["domain"], item["row"]["answer"]
            overhead = request_overhead(level, domain, answer)
            for text in item["raw"]["responses"]:
                if text_precheck(overhead, text) is None:
                    reply_guard(grade_local(level, domain, answer, text))
        return time.perf_counter() - started
    with ParallelGrader(1) as pool:
        for item in prompts:
            pool.reference_check(item["level"], item["domain"], item["row"]["answer"])
        started = time.perf_counter()
        if mode == "worker":
            graded = sum(len(attempts) for _, _, attempts in pool.results(enumerate(prompts)))
        else:
            worker = pool._idle[0]  # the warm worker that checked the references
            graded = 0
            for offset in range(0, len(prompts), CHUNK_PROMPTS):
                graded += sum(map(len, grade_prompts(worker, prompts[offset : offset + CHUNK_PROMPTS])))
        elapsed = time.perf_counter() - started
    assert graded == sum(len(item["raw"]["responses"]) for item in prompts)
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=7, help="fresh-process rounds (each runs every path)")
    parser.add_argument("--measure", nargs=2, metavar=("MODE", "FILE"), help=argparse.SUPPRESS)
    parser.add_argument("--output", default=str(ROOT / "ops" / "results" / "worker.json"))
    args = parser.parse_args()
    if args.measure:
        print(measure(args.measure[0], Path(args.measure[1])))
        return
    source = Path(tempfile.mkdtemp(prefix="modebench-worker-bench-")) / "input.jsonl"
    responses = shapes.write_input(source, args.prompts, 8, "distinct", shapes._pool())

    def fresh(mode: str) -> float:
        done = subprocess.run(
            [sys.executable, __file__, "--measure", mode, str(source)],
            capture_output=True,
            text=True,
            check=True,
        )
        return float(done.stdout.strip().splitlines()[-1])

    rounds = [{path: fresh(path) for path in PATHS} for _ in range(args.repeat)]
    source.unlink()
    median = {path: statistics.median(r[path] for r in rounds) for path in PATHS}

    def ratios(path: str) -> list[float]:
        return sorted(round(r[path] / r["in-process"], 3) for r in rounds)

    result = {
        "prompts": args.prompts,
        "k": 8,
        "responses": responses,
        "rounds": args.repeat,
        "responses_per_second": {path: round(responses / median[path], 1) for path in PATHS},
        "ratio_worker_over_in_process": round(median["worker"] / median["in-process"], 3),
        "ratio_serial_over_in_process": round(median["serial"] / median["in-process"], 3),
        "worker_ratio_per_round": ratios("worker"),
        "serial_ratio_per_round": ratios("serial"),
        "target_ratio": 1.3,
    }
    print(json.dumps(result, indent=2))
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
