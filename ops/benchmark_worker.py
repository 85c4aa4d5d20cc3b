"""Overhead of the isolation boundary: one worker versus in-process grading, same responses.

A mixed batch over all 25 level/domain cells with k = 8 responses per prompt (every response
text distinct, so no result cache helps) is graded twice, each time in a fresh process so that both start with cold caches: in process (parent
checks, then the worker's own steps ``grade_local`` + reply guard, references validated first) and
through one warm ``BoundedWorker`` with one request per chunk of prompts, as the evaluator sends
them (references validated first). Reports
responses/s for both and the ratio.

    python ops/benchmark_worker.py [--prompts 2000]
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "ops"))

import benchmark_evaluation as shapes  # noqa: E402

from modebench.domains._pipeline import grade_local, parent_precheck, reply_guard  # noqa: E402
from modebench.parallel import CHUNK_PROMPTS, grade_prompts  # noqa: E402
from modebench.worker_process import BoundedWorker  # noqa: E402


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
        for item in prompts:  # validate every reference first, as preflight does
            grade_local(item["level"], item["domain"], item["row"]["answer"], "")
        started = time.perf_counter()
        for item in prompts:
            for text in item["raw"]["responses"]:
                parent_precheck(item["level"], item["domain"], item["row"], text)
                reply_guard(grade_local(item["level"], item["domain"], item["row"]["answer"], text))
        return time.perf_counter() - started
    with BoundedWorker() as worker:
        for item in prompts:
            worker.request(
                {
                    "operation": "reference",
                    "level": item["level"],
                    "domain": item["domain"],
                    "answer": item["row"]["answer"],
                }
            )
        started = time.perf_counter()
        for offset in range(0, len(prompts), CHUNK_PROMPTS):  # as the evaluator sends them
            grade_prompts(worker, prompts[offset : offset + CHUNK_PROMPTS])
        return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3, help="fresh-process runs per path (median taken)")
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

    in_process = statistics.median(fresh("in-process") for _ in range(args.repeat))
    through_worker = statistics.median(fresh("worker") for _ in range(args.repeat))
    source.unlink()
    result = {
        "prompts": args.prompts,
        "k": 8,
        "responses": responses,
        "runs_per_path": args.repeat,
        "in_process_responses_per_second": round(responses / in_process, 1),
        "worker_responses_per_second": round(responses / through_worker, 1),
        "ratio_worker_over_in_process": round(through_worker / in_process, 3),
        "target_ratio": 1.3,
    }
    print(json.dumps(result, indent=2))
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
