"""What a burst of per-sample reward calls costs against one batched call (docs/rl.md, "verl").

verl's asynchronous reward loop and OpenRLHF call the reward function once per sample, many at
once. This grades the same 2,048 completions (256 prompts x 8 of the non-MathIR configs, levels 1-3
of the bundled release: witnesses, a repeat, a wrong and an empty answer) four ways, each on a
fresh pool whose workers were started and warmed on other prompts first (so no result is cached):

``batched``      one ``BatchGrader.grade`` call (what ``compute_score_batch`` does);
``async_burst``  2,048 concurrent ``Coalescer.grade_async`` calls on one event loop (verl's reward
                 loop awaiting ``compute_score_async``);
``thread_burst`` 2,048 ``Coalescer.grade`` calls from a 32-thread pool (verl's executor running a
                 synchronous ``compute_score``; OpenRLHF's ``asyncio.to_thread``);
``per_call``     the same 32 threads calling ``BatchGrader.grade`` with one completion each (the
                 behaviour before coalescing: the grader's lock serialises them).

    .venv/bin/python ops/benchmarks/benchmark_rl_coalesce.py --rounds 5

Prints one JSON object: medians in seconds, the pool batches each burst took, the load average.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))

from modebench.domains import plugin  # noqa: E402
from modebench.rl import BatchGrader, Completion, trainer_rows  # noqa: E402
from modebench.rl.coalesce import Coalescer  # noqa: E402

CONFIGS = tuple(
    f"level{level}_{domain}"
    for level in (1, 2, 3)
    for domain in ("countdown", "graph_coloring", "pantry_plan", "python_factors")
)


def completions(rows: list[dict[str, object]]) -> list[Completion]:
    out = []
    for row in rows:
        answer = json.loads(str(row["answer"]))
        texts = plugin(str(row["domain"])).witnesses(row["level"], answer)[:5]
        texts = (texts * 5)[:5] + [texts[0], "not a solution", ""]
        out += [
            Completion(row["level"], row["domain"], row["answer"], t, str(row["prompt_id"])) for t in texts
        ]
    return out


def fresh(warm: list[Completion]) -> BatchGrader:
    grader = BatchGrader(1, unscorable="mask")
    grader.grade(warm)  # workers started, imports and references of other prompts warm
    return grader


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    rows = [row for config in CONFIGS for row in trainer_rows(config, registry="bundled")]
    batch, warm = completions(rows[:256]), completions(rows[256:288])
    assert len(batch) == 2048, len(batch)
    times: dict[str, list[float]] = {"batched": [], "async_burst": [], "thread_burst": [], "per_call": []}
    batches: dict[str, list[int]] = {"async_burst": [], "thread_burst": []}
    for _ in range(args.rounds):
        with fresh(warm) as grader:
            start = time.perf_counter()
            grader.grade(batch)
            times["batched"].append(time.perf_counter() - start)
        with fresh(warm) as grader:
            coalescer = Coalescer(grader)

            async def burst(c: Coalescer = coalescer) -> None:
                await asyncio.gather(*(c.grade_async(item) for item in batch))

            start = time.perf_counter()
            asyncio.run(burst())
            times["async_burst"].append(time.perf_counter() - start)
            batches["async_burst"].append(coalescer.batches)
        with fresh(warm) as grader, ThreadPoolExecutor(32) as threads:
            coalescer = Coalescer(grader)
            start = time.perf_counter()
            list(threads.map(coalescer.grade, batch))
            times["thread_burst"].append(time.perf_counter() - start)
            batches["thread_burst"].append(coalescer.batches)
        with fresh(warm) as grader, ThreadPoolExecutor(32) as threads:
            start = time.perf_counter()
            list(threads.map(lambda item, g=grader: g.grade([item]), batch))
            times["per_call"].append(time.perf_counter() - start)
    report = {
        "completions": len(batch),
        "rounds": args.rounds,
        "median_seconds": {name: round(statistics.median(values), 4) for name, values in times.items()},
        "pool_batches": batches,
        "load_average": os.getloadavg(),
    }
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
