"""Client-side throughput of ``modebench generate`` against the loopback OpenAI-compatible server.

The server (``tests/generate/openai_server.py``) runs in its own process and answers instantly,
so the figure is what modebench itself sustains: planning, the ``openai`` client, parsing and the
durable ledger append per draw. Prints one JSON object; target: ≥ 500 draws/s at concurrency 64.

    .venv/bin/python ops/benchmark_generate.py [--prompts 500] [-k 8] [--concurrency 64]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _server() -> tuple[subprocess.Popen[str], int]:
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.generate.openai_server", json.dumps({"model": "bench-model"})],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    return process, int(process.stdout.readline())


def _tasks(path: Path, prompts: int) -> None:
    with open(path, "w") as handle:
        for index in range(prompts):
            problem = f"Using the numbers [1, 2, {index}], create an expression that equals {index + 3}."
            answer = {"verifier": "countdown", "numbers": [1, 2, index], "target": index + 3}
            record = {
                "id": f"t{index}",
                "level": 1,
                "domain": "countdown",
                "problem": problem,
                "answer": answer,
            }
            handle.write(json.dumps(record) + "\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=500)
    parser.add_argument("-k", type=int, default=8)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--choices-per-request", type=int, default=1)
    parser.add_argument("--processes", type=int, default=1)
    args = parser.parse_args()

    from modebench.api import generate_responses
    from modebench.generate import GenerationSettings, TaskFileSource

    server, port = _server()
    events: list[dict[str, object]] = []
    cpu: dict[str, float] = {}

    def progress(event: dict[str, object]) -> None:
        # Client CPU per draw is the machine-independent figure: on a shared, loaded machine the
        # wall-clock rate also measures the other tenants.
        if event["phase"] not in cpu:
            # os.times() includes reaped children: the shard processes (joined before publishing),
            # never the server (reaped only at the end).
            times = os.times()
            cpu[str(event["phase"])] = times.user + times.system + times.children_user + times.children_system
        events.append(event)

    try:
        with tempfile.TemporaryDirectory() as directory:
            tasks = Path(directory, "tasks.jsonl")
            _tasks(tasks, args.prompts)
            settings = GenerationSettings(
                model="bench-model",
                base_url=f"http://127.0.0.1:{port}/v1",
                k=args.k,
                seed=1,
                temperature=1.0,
                concurrency=args.concurrency,
                processes=args.processes,
                choices_per_request=args.choices_per_request,
                timeout=30.0,
            )
            started = time.perf_counter()
            result = generate_responses(
                TaskFileSource(tasks), Path(directory, "out.jsonl"), settings, progress=progress
            )
            total = time.perf_counter() - started
    finally:
        server.terminate()
        server.wait()
    sending = next(e for e in events if e["phase"] == "publishing")
    report = {
        "benchmark": "generate-loopback",
        "prompts": args.prompts,
        "k": args.k,
        "concurrency": args.concurrency,
        "choices_per_request": args.choices_per_request,
        "processes": args.processes,
        "draws": result.draws,
        "failed": result.failed,
        "send_seconds": sending["elapsed_seconds"],
        "draws_per_second": sending["draws_per_second"],
        "client_cpu_ms_per_draw": round((cpu["publishing"] - cpu["generating"]) * 1000 / result.draws, 3),
        "client_capacity_draws_per_cpu_second": round(
            result.draws / (cpu["publishing"] - cpu["generating"]), 1
        ),
        "end_to_end_seconds": round(total, 2),
        "end_to_end_draws_per_second": round(result.draws / total, 1),
        "cpus": os.cpu_count(),
        "load_average": os.getloadavg()[0],
    }
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
