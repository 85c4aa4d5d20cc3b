"""How soon after the last draw ``generate --evaluate`` has its receipt, graded as draws arrive
(``docs/generate.md``, "Grading right away"), against the former way: publish, then evaluate.

Both modes run in this process against the loopback OpenAI-compatible server
(``tests/generate/openai_server.py``, which answers after ``--delay`` seconds with countdown
answers, some right and some wrong, so the worker really grades):

- ``ahead``: ``generate_responses(..., receipt=...)`` — prompts are graded as their draws
  complete and the evaluation after publication takes them from the memo;
- ``after``: ``generate_responses(...)`` then ``modebench.api.evaluate_file`` with the same run
  metadata and options, which is what ``--evaluate`` did before (a fresh worker pool, every
  prompt graded after publication).

Per run, one JSON line: ``receipt_after_last_draw_seconds`` (from the progress event of the last
draw to the receipt being published), ``generation_seconds`` (first to last draw: grading in the
background must not slow the senders), the process's CPU seconds (workers included, reaped at the
end) and the load average. Then the medians per mode.

    .venv/bin/python ops/benchmarks/benchmark_generate_grading.py [--config level1_countdown] [-k 8]
        [--concurrency 16] [--delay 0.2] [--runs 3]
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
from typing import Any, cast

ROOT = Path(__file__).resolve().parents[2]
ANSWERS = ["\\boxed{1+2+3}", "\\boxed{(25-5)*4}", "\\boxed{7*8-3}", "I cannot find one."]


def _server(delay: float) -> tuple[subprocess.Popen[str], int]:
    config = {"model": "bench-model", "delay": delay, "answers": ANSWERS}
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.generate.openai_server", json.dumps(config)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    return process, int(process.stdout.readline())


def _cpu() -> float:
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def _run(args: argparse.Namespace, port: int, mode: str) -> dict[str, Any]:
    from modebench.api import evaluate_file, generate_responses
    from modebench.api_types import EvaluationOptions, RunMetadata
    from modebench.generate import FrozenSplitSource, GenerationSettings

    marks: dict[str, float] = {}

    def progress(event: dict[str, Any]) -> None:
        if event["phase"] == "generating":
            marks.setdefault("first", time.perf_counter())
            if event["draws"] == event["total_draws"]:
                marks["last_draw"] = time.perf_counter()

    source = FrozenSplitSource(args.config, registry=args.registry)
    settings = GenerationSettings(
        model="bench-model",
        base_url=f"http://127.0.0.1:{port}/v1",
        k=args.k,
        seed=1,
        temperature=1.0,
        concurrency=args.concurrency,
        timeout=60.0,
    )
    load_before = os.getloadavg()[0]
    cpu_before = _cpu()
    with tempfile.TemporaryDirectory() as directory:
        out, receipt = Path(directory, "out.jsonl"), Path(directory, "receipt.json")
        extra: dict[str, Any] = {}
        if mode == "ahead":
            result = generate_responses(source, out, settings, progress=progress, receipt=receipt)
            extra = result.pregrade or {}
        else:
            result = generate_responses(source, out, settings, progress=progress)
            options = EvaluationOptions(
                min_defined_prompts=30,
                run=cast(RunMetadata, result.run),
                config=args.config,
                registry=args.registry,
            )
            evaluate_file(out, receipt, options=options)
        ready = time.perf_counter()
        status = json.loads(receipt.read_bytes())["evaluation"]["status"]
    return {
        "mode": mode,
        "draws": result.draws,
        "status": status,
        "receipt_after_last_draw_seconds": round(ready - marks["last_draw"], 2),
        "generation_seconds": round(marks["last_draw"] - marks["first"], 2),
        "cpu_seconds": round(_cpu() - cpu_before, 2),
        "load_average": [round(load_before, 2), round(os.getloadavg()[0], 2)],
        **extra,
    }


def _cold(args: argparse.Namespace, port: int, mode: str) -> dict[str, Any]:
    """One run in a fresh interpreter, as a ``modebench generate`` command runs."""
    command = [
        sys.executable, __file__, "--config", args.config, "--registry", args.registry, "-k", str(args.k),
        "--concurrency", str(args.concurrency), "--one", mode, "--port", str(port),
    ]  # fmt: skip
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=True)
    result: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--config", default="level1_countdown", help="frozen config (default level1_countdown)"
    )
    parser.add_argument("--registry", default="bundled", help="registry (default bundled)")
    parser.add_argument("-k", type=int, default=8, help="draws per prompt (default 8)")
    parser.add_argument("--concurrency", type=int, default=16, help="requests in flight (default 16)")
    parser.add_argument("--delay", type=float, default=0.2, help="server seconds per reply (default 0.2)")
    parser.add_argument("--runs", type=int, default=3, help="runs per mode; medians at the end (default 3)")
    parser.add_argument(
        "--warm",
        action="store_true",
        help="run in this process after a warm-up run per mode (default: each run in a fresh process)",
    )
    parser.add_argument("--one", choices=("after", "ahead"), help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one is not None:  # a cold run, started by _cold
        print(json.dumps(_run(args, args.port, args.one)))
        return 0
    setup = {
        "benchmark": "generate-grading",
        "config": args.config,
        "k": args.k,
        "concurrency": args.concurrency,
        "delay": args.delay,
        "start": "warm" if args.warm else "cold",
        "python": sys.version.split()[0],
        "cpus": os.cpu_count(),
    }
    server, port = _server(args.delay)
    runs: list[dict[str, Any]] = []
    measure = _run if args.warm else _cold
    try:
        if args.warm:
            for mode in ("after", "ahead"):  # warm-up: imports, the frozen split's first read
                _run(args, port, mode)
        for index in range(args.runs):
            for mode in ("after", "ahead"):  # interleaved: both see the same machine load
                runs.append(measure(args, port, mode))
                print(json.dumps({**setup, "run": index + 1, **runs[-1]}), flush=True)
    finally:
        server.terminate()
        server.wait()
    keys = ("receipt_after_last_draw_seconds", "generation_seconds", "cpu_seconds")
    medians = {
        mode: {key: statistics.median(r[key] for r in runs if r["mode"] == mode) for key in keys}
        for mode in ("after", "ahead")
    }
    print(json.dumps({**setup, "runs": args.runs, "median": medians, "load_average": os.getloadavg()[0]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
