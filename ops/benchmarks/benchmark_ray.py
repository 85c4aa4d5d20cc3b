"""Throughput of `evaluate --backend ray` against `--backend local`, and Ray's per-response overhead.

Starts a local Ray head node (``ray start --head --num-cpus N`` on 127.0.0.1), then for each
worker count runs the same mixed input (all 25 cells, k = 8) once per back end in a fresh
process, checking that the cells and journals are identical. The overhead figure compares one
chunk graded by a Ray actor (a task round trip) with the same chunk graded by a local worker.

    python ops/benchmarks/benchmark_ray.py --prompts 5000 --workers 1 2
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
# Keep Ray on loopback (set before ray is imported; inherited by the head node and the runs).
os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "ops" / "benchmarks"))

from benchmark_evaluation import _pool, write_input  # noqa: E402

RAY = Path(sys.executable).with_name("ray")


def _evaluate(source: Path, output: Path, workers: int, backend: str, address: str) -> float:
    command = [
        sys.executable,
        "-m",
        "modebench",
        "evaluate",
        str(source),
        "--output",
        str(output),
        "--workers",
        str(workers),
        "--progress-every",
        "0",
        "--backend",
        backend,
    ]
    if backend == "ray":
        command += ["--ray-address", address]
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    started = time.perf_counter()
    subprocess.run(command, env=env, check=True, capture_output=True)
    return time.perf_counter() - started


def _overhead(address: str, source: Path, prompts: int) -> dict[str, Any]:
    """µs per response that one Ray task round trip adds to grading the same chunk locally."""
    import ray

    from modebench.backends.ray_pool import RAY_CHUNK_PROMPTS, GradingActor
    from modebench.evaluation import Options, Preflight
    from modebench.parallel import Chunk, grade_requests
    from modebench.validation import loads
    from modebench.worker_process import BoundedWorker

    preflight = Preflight(Options.build(), None)
    records = [loads(line) for line in source.read_text().splitlines()[:RAY_CHUNK_PROMPTS]]
    prepared = [preflight.accept(record, f"line {i + 1}") for i, record in enumerate(records)]
    chunk = Chunk(prepared)
    responses = sum(len(group[3]) for group in chunk.groups)
    ray.init(address=address, log_to_driver=False)
    actor = ray.remote(num_cpus=1)(GradingActor).remote()
    local = BoundedWorker()
    rounds: dict[str, list[float]] = {"ray": [], "local": []}
    for _ in range(3):  # warm both, including their result caches
        ray.get(actor.grade.remote(chunk.requests, len(chunk.groups)))
        grade_requests(local, chunk.requests, len(chunk.groups))
    for _ in range(20):
        started = time.perf_counter()
        ray.get(actor.grade.remote(chunk.requests, len(chunk.groups)))
        rounds["ray"].append(time.perf_counter() - started)
        started = time.perf_counter()
        grade_requests(local, chunk.requests, len(chunk.groups))
        rounds["local"].append(time.perf_counter() - started)
    local.close()
    ray.shutdown()
    ray_s, local_s = sorted(rounds["ray"])[10], sorted(rounds["local"])[10]
    return {
        "chunk_prompts": RAY_CHUNK_PROMPTS,
        "chunk_distinct_responses": responses,
        "ray_round_trip_ms": round(ray_s * 1000, 2),
        "local_round_trip_ms": round(local_s * 1000, 2),
        "ray_overhead_us_per_response": round((ray_s - local_s) / max(responses, 1) * 1e6, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=5000)
    parser.add_argument("--k", type=int, default=8)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--output", default=str(ROOT / "ops" / "results" / "ray.json"))
    args = parser.parse_args()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    address = f"127.0.0.1:{port}"
    cpus = max(args.workers)
    env = dict(os.environ, RAY_USAGE_STATS_ENABLED="0", PYTHONPATH=str(ROOT / "src"))
    subprocess.run(
        [
            str(RAY),
            "start",
            "--head",
            "--num-cpus",
            str(cpus),
            "--node-ip-address",
            "127.0.0.1",
            "--port",
            str(port),
            "--include-dashboard",
            "false",
            "--disable-usage-stats",
        ],
        env=env,
        check=True,
        capture_output=True,
    )
    rows = []
    try:
        with tempfile.TemporaryDirectory(prefix="modebench-ray-bench-") as temp:
            scratch = Path(temp)
            source = scratch / "mixed.jsonl"
            responses = write_input(source, args.prompts, args.k, "mixed", _pool())
            for workers in args.workers:
                journals = {}
                for backend in ("local", "ray"):
                    output = scratch / backend / str(workers) / "r.json"
                    seconds = _evaluate(source, output, workers, backend, address)
                    journals[backend] = (output.parent / "r.json.work" / "results.jsonl").read_bytes()
                    row = {
                        "backend": backend,
                        "workers": workers,
                        "prompts": args.prompts,
                        "responses": responses,
                        "seconds": round(seconds, 2),
                        "responses_per_second": round(responses / seconds, 1),
                    }
                    rows.append(row)
                    print(json.dumps(row), flush=True)
                assert journals["local"] == journals["ray"], "journals differ between back ends"
            overhead = _overhead(address, source, args.prompts)
            print(json.dumps(overhead), flush=True)
    finally:
        subprocess.run([str(RAY), "stop", "--force"], env=env, capture_output=True)
    payload = {
        "benchmark": "evaluate --backend ray vs local",
        "cpu_count": os.cpu_count(),
        "runs": rows,
        "overhead": overhead,
    }
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    print(f"written: {args.output}")


if __name__ == "__main__":
    main()
