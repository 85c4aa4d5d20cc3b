"""Throughput and memory of `modebench evaluate` on generated inputs covering all 25 cells.

Two input shapes, k responses per prompt:
* ``mixed``: references drawn from a pool per cell and responses drawn with the skew real model
  output has (a few modes repeat often; wrong and malformed answers recur), so caches help;
* ``distinct``: every (reference, response) pair is distinct (a unique prompt-specific preamble
  precedes each boxed answer), so no result cache can help.

Each run happens in a fresh process that reports responses/s, its own peak RSS and the peak RSS
of its worker processes. Results are printed and written as JSON.

    python ops/benchmark_evaluation.py --sizes 1000 10000 --workers 1 2 --shape mixed distinct
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from modebench.contracts import DOMAINS  # noqa: E402
from modebench.domains import plugin  # noqa: E402

POOL_PER_CELL = 8
RUN = {
    "model": {"id": "benchmark", "revision": "0"},
    "generation": {"temperature": 1.0},
    "prompt_condition": "registered_hints_v1",
}

DRIVER = """
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
from modebench.streaming import evaluate_file
started = time.perf_counter()
summary = evaluate_file(sys.argv[2], sys.argv[3], run=json.loads(sys.argv[4]), workers=int(sys.argv[5]))
elapsed = time.perf_counter() - started
print(json.dumps({"seconds": elapsed, "status": summary["status"],
                  "parent_rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                  "worker_rss_kib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}))
"""


def _pool() -> dict[tuple[int, str], list[tuple[dict[str, Any], list[str]]]]:
    pool = {}
    for domain in DOMAINS:
        found = plugin(domain)
        assert found.generate is not None and found.witnesses is not None
        for level in range(1, 6):
            entries = []
            for seed in range(POOL_PER_CELL):
                row = found.generate(level, random.Random(1000 * level + seed))
                answer = json.loads(row["answer"])
                entries.append((row, found.witnesses(level, answer)[:6]))
            pool[(level, domain)] = entries
    return pool


def _responses(rng: random.Random, witnesses: list[str], k: int, unique: str | None) -> list[str]:
    out = []
    for _ in range(k):
        roll = rng.random()
        if roll < 0.55:  # correct, skewed towards the first modes (mode collapse)
            text = witnesses[min(int(rng.expovariate(1.2)), len(witnesses) - 1)]
        elif roll < 0.8:
            text = rng.choice(["\\boxed{0}", "\\boxed{1}", "\\boxed{42}"])
        else:
            text = rng.choice(["I am not sure.", "not a solution", ""])
        if unique is not None:
            text = (
                f"Attempt {unique}-{len(out)}: reasoning omitted.\n{text}"
                if text
                else f"Attempt {unique}-{len(out)}"
            )
        out.append(text)
    return out


def write_input(path: Path, prompts: int, k: int, shape: str, pool: dict[tuple[int, str], list[Any]]) -> int:
    rng = random.Random(prompts * 7 + k)
    cells = sorted(pool)
    responses = 0
    with open(path, "w", encoding="utf-8") as handle:
        for index in range(prompts):
            level, domain = cells[index % len(cells)]
            row, witnesses = rng.choice(pool[(level, domain)])
            unique = str(index) if shape == "distinct" else None
            record = {
                "id": f"p{index}",
                "level": level,
                "domain": domain,
                "problem": row["problem"],
                "answer": row["answer"],
                "responses": _responses(rng, witnesses, k, unique),
            }
            handle.write(json.dumps(record) + "\n")
            responses += k
    return responses


def run_once(source: Path, workers: int, scratch: Path) -> dict[str, Any]:
    output = scratch / f"receipt-{time.monotonic_ns()}.json"
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            DRIVER,
            str(ROOT / "src"),
            str(source),
            str(output),
            json.dumps(RUN),
            str(workers),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--shape", nargs="+", default=["mixed", "distinct"], choices=["mixed", "distinct"])
    parser.add_argument("--k", type=int, default=8)
    parser.add_argument("--output", default=str(ROOT / "ops" / "results" / "evaluation.json"))
    args = parser.parse_args()
    pool = _pool()
    rows = []
    with tempfile.TemporaryDirectory(prefix="modebench-bench-") as temp:
        scratch = Path(temp)
        for shape in args.shape:
            for size in args.sizes:
                source = scratch / f"{shape}-{size}.jsonl"
                responses = write_input(source, size, args.k, shape, pool)
                for workers in args.workers:
                    measured = run_once(source, workers, scratch)
                    row = {
                        "shape": shape,
                        "prompts": size,
                        "k": args.k,
                        "workers": workers,
                        "responses": responses,
                        "seconds": round(measured["seconds"], 2),
                        "responses_per_second": round(responses / measured["seconds"], 1),
                        "parent_peak_rss_mib": round(measured["parent_rss_kib"] / 1024, 1),
                        "worker_peak_rss_mib": round(measured["worker_rss_kib"] / 1024, 1),
                        "status": measured["status"],
                    }
                    rows.append(row)
                    print(json.dumps(row), flush=True)
                source.unlink()
    payload = {"benchmark": "modebench evaluate", "cpu_count": os.cpu_count(), "runs": rows}
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    print(f"written: {args.output}")


if __name__ == "__main__":
    main()
