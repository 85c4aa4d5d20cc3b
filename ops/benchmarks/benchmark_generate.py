"""Client-side throughput of ``modebench generate`` against the loopback OpenAI-compatible server.

The server (``tests/generate/openai_server.py``) runs in its own process and answers at once, so
the figures are what modebench itself sustains: planning, the real ``openai`` client, parsing and
the durable ledger. Target: ≥ 500 draws/s at concurrency 64 (``docs/generate.md``).

Prints one JSON line per run and then a summary line with the medians:

- ``draws_per_second``: wall-clock rate over the sending phase;
- ``steady_draws_per_second``: the same between 10 % and 90 % of the draws (no start-up, no tail);
- ``client_cpu_ms_per_draw`` / ``draws_per_client_cpu_second``: CPU time of the generating
  process (and of its shard processes) per draw over the sending phase, start-up included, and
  ``steady_draws_per_client_cpu_second`` between 10 % and 90 %. On a shared machine these are the
  figures to compare: the wall rate also measures the other tenants (see ``load_average``);
- ``server_cpu_ms_per_draw``: the loopback server's CPU per draw (it shares the machine's cores).

    .venv/bin/python ops/benchmarks/benchmark_generate.py [--prompts 500] [-k 8] [--concurrency 64] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
STEADY = (0.1, 0.9)


def _server() -> tuple[subprocess.Popen[str], int]:
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.generate.openai_server", json.dumps({"model": "bench-model"})],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    return process, int(process.stdout.readline())


def _process_cpu(pid: int, reaped: bool = False) -> float:
    """CPU seconds (user + system) of a live process, from /proc (Linux); with ``reaped``, also
    those of its children it has waited for."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12]) + (int(fields[13]) + int(fields[14]) if reaped else 0)
    return ticks / os.sysconf("SC_CLK_TCK")


def _children(pid: int | str) -> list[int]:
    children = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            children += [int(child) for child in (task / "children").read_text().split()]
        except FileNotFoundError:  # the thread ended meanwhile
            pass
    return children


def _own_cpu(server_pid: int) -> float:
    """CPU seconds of this process and of every process it started but the server (shard
    processes, the fork server they are forked from): live ones from /proc, reaped ones from
    ``os.times`` or from their parent's reaped-children times."""
    times = os.times()
    total = times.user + times.system + times.children_user + times.children_system
    pending = [child for child in _children("self") if child != server_pid]
    while pending:
        pid = pending.pop()
        try:
            total += _process_cpu(pid, reaped=True)
            pending += _children(pid)
        except (FileNotFoundError, ProcessLookupError):  # reaped meanwhile: counted by its parent
            pass
    return total


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


def _run(args: argparse.Namespace, port: int, server_pid: int) -> dict[str, Any]:
    from modebench.api import generate_responses
    from modebench.generate import GenerationSettings, TaskFileSource

    total = args.prompts * args.k
    marks = [int(total * fraction) for fraction in STEADY]
    points: dict[str, tuple[float, float, float]] = {}  # name -> (wall, own cpu, server cpu)

    def mark(name: str) -> None:
        points[name] = (time.perf_counter(), _own_cpu(server_pid), _process_cpu(server_pid))

    def progress(event: dict[str, Any]) -> None:
        phase, draws = event["phase"], event["draws"]
        if phase != "generating" and phase not in points:
            mark(phase)
        elif phase == "generating" and "generating" not in points:
            mark("generating")
        elif phase == "generating":
            for index, at in enumerate(marks):
                name = f"steady{index}"
                if draws >= at and name not in points:
                    mark(name)

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
        load_before = os.getloadavg()[0]
        started = time.perf_counter()
        result = generate_responses(
            TaskFileSource(tasks), Path(directory, "out.jsonl"), settings, progress=progress
        )
        end_to_end = time.perf_counter() - started

    def span(first: str, last: str, draws: int) -> tuple[float, float, float]:
        wall = points[last][0] - points[first][0]
        return draws / wall, draws / (points[last][1] - points[first][1]), points[last][2] - points[first][2]

    rate, capacity, server_cpu = span("generating", "publishing", result.draws)
    steady_rate, steady_capacity, _ = span("steady0", "steady1", marks[1] - marks[0])
    return {
        "draws": result.draws,
        "failed": result.failed,
        "draws_per_second": round(rate, 1),
        "steady_draws_per_second": round(steady_rate, 1),
        "client_cpu_ms_per_draw": round(1000 / capacity, 3),
        "draws_per_client_cpu_second": round(capacity, 1),
        "steady_draws_per_client_cpu_second": round(steady_capacity, 1),
        "server_cpu_ms_per_draw": round(server_cpu * 1000 / result.draws, 3),
        "end_to_end_seconds": round(end_to_end, 2),
        "load_average": [round(load_before, 2), round(os.getloadavg()[0], 2)],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--prompts", type=int, default=500, help="prompts per run (default 500)")
    parser.add_argument("-k", type=int, default=8, help="draws per prompt (default 8)")
    parser.add_argument("--concurrency", type=int, default=64, help="requests in flight (default 64)")
    parser.add_argument("--choices-per-request", type=int, default=1, help="n per request (default 1)")
    parser.add_argument("--processes", type=int, default=1, help="sending processes (default 1)")
    parser.add_argument("--runs", type=int, default=3, help="runs; the summary gives medians (default 3)")
    args = parser.parse_args()

    import openai

    setup = {
        "benchmark": "generate-loopback",
        "prompts": args.prompts,
        "k": args.k,
        "concurrency": args.concurrency,
        "choices_per_request": args.choices_per_request,
        "processes": args.processes,
        "openai": openai.__version__,
        "python": sys.version.split()[0],
        "cpus": os.cpu_count(),
    }
    server, port = _server()
    runs = []
    try:
        _run(argparse.Namespace(**{**vars(args), "prompts": 20}), port, server.pid)  # warm-up
        for index in range(args.runs):
            runs.append(_run(args, port, server.pid))
            print(json.dumps({**setup, "run": index + 1, **runs[-1]}), flush=True)
    finally:
        server.terminate()
        server.wait()
    keys = [key for key, value in runs[0].items() if isinstance(value, float)]
    summary = {key: statistics.median(run[key] for run in runs) for key in keys}
    print(json.dumps({**setup, "runs": len(runs), "median": summary, "load_average": os.getloadavg()[0]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
