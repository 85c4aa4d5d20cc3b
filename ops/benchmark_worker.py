"""Overhead of the isolation boundary: one worker versus in-process grading, same responses.

A mixed batch over all 25 level/domain cells with k = 8 responses per prompt (every response
text distinct, so no result cache helps) is graded twice: in process (parent checks, then the
worker's own steps ``grade_local`` + reply guard, with the reference cached — the cost a worker
pays) and through one warm ``BoundedWorker`` with one batched request per prompt. Reports
responses/s for both and the ratio.

    python ops/benchmark_worker.py [--prompts 2000]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "ops"))

import benchmark_evaluation as shapes  # noqa: E402

from modebench.domains._pipeline import grade_local, parent_precheck, reply_guard  # noqa: E402
from modebench.parallel import grade_prompt  # noqa: E402
from modebench.worker_process import BoundedWorker  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=2000)
    parser.add_argument("--output", default=str(ROOT / "ops" / "results" / "worker.json"))
    args = parser.parse_args()
    pool = shapes._pool()
    source = Path("/tmp/modebench-worker-bench.jsonl")
    responses = shapes.write_input(source, args.prompts, 8, "distinct", pool)
    prompts = []
    for line in source.read_text().splitlines():
        record = json.loads(line)
        answer = json.loads(record["answer"])
        prompts.append(
            {"level": record["level"], "domain": record["domain"], "row": {"answer": answer}, "raw": record}
        )
    source.unlink()
    for item in prompts:  # validate every reference once on both paths before timing
        grade_local(item["level"], item["domain"], item["row"]["answer"], "")

    started = time.perf_counter()
    for item in prompts:
        for text in item["raw"]["responses"]:
            parent_precheck(item["level"], item["domain"], item["row"], text)
            reply_guard(grade_local(item["level"], item["domain"], item["row"]["answer"], text))
    in_process = time.perf_counter() - started

    with BoundedWorker() as worker:
        for item in prompts:
            worker.grade_batch(item["level"], item["domain"], item["row"]["answer"], [""])
        started = time.perf_counter()
        for item in prompts:
            grade_prompt(worker, item)
        through_worker = time.perf_counter() - started
    result = {
        "prompts": args.prompts,
        "k": 8,
        "responses": responses,
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
