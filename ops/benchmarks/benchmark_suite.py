"""What a whole suite costs: one ``evaluate --config all`` against one ``evaluate`` per configuration.

On the bundled release (offline): ``prepare --config all`` writes the requests of every
configuration, each request gets k stand-in responses (one correct-looking, the rest empty), then

* ``suite``: ``modebench evaluate DIR --config all --registry bundled …`` (one process);
* ``singles``: ``modebench evaluate DIR/<config>.jsonl --config <config> …`` once per configuration.

Wall seconds, CPU seconds of the child processes (user + system) and the load average are printed
and, with ``--output``, written as JSON. The receipts of both ways are compared (minus timestamps).

    python ops/benchmarks/benchmark_suite.py [--limit 32] [--workers 1] [--output FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
RUN = {
    "model": {"id": "benchmark-suite", "revision": "1"},
    "generation": {"draws_per_prompt": 4},
    "prompt_condition": "registered_hints_v1",
}


def _cli(*argv: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    subprocess.run([sys.executable, "-m", "modebench", *argv], check=True, env=env, stdout=subprocess.DEVNULL)


def _timed(label: str, commands: list[list[str]]) -> dict[str, Any]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    for argv in commands:
        _cli(*argv)
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {
        "way": label,
        "processes": len(commands),
        "wall_seconds": round(wall, 2),
        "cpu_seconds": round(cpu, 2),
    }


def _stable(path: Path) -> dict[str, Any]:
    receipt: dict[str, Any] = json.loads(path.read_bytes())
    receipt.pop("created_at")
    for entry in receipt["execution"]["history"]:
        entry.pop("started_at")
    return receipt


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=32, help="prompts per configuration (default 32: all)")
    parser.add_argument("--workers", type=int, default=1, help="grading workers (default 1)")
    parser.add_argument("--output", help="write the figures as JSON here (never overwritten)")
    args = parser.parse_args()
    if args.output and Path(args.output).exists():
        sys.exit(f"output already exists: {args.output}")
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        common = ["--registry", "bundled", "--limit", str(args.limit)]
        _cli("prepare", "--config", "all", *common, "--output", str(root / "requests"))
        (root / "responses").mkdir()
        for path in sorted((root / "requests").glob("*.jsonl")):
            with open(root / "responses" / path.name, "w") as handle:
                for line in path.read_text().splitlines():
                    record = {**json.loads(line), "responses": ["\\boxed{1}", "", "", ""]}
                    handle.write(json.dumps(record) + "\n")
        (root / "run.json").write_text(json.dumps(RUN))
        configs = sorted(path.stem for path in (root / "responses").glob("*.jsonl"))
        options = [
            *common,
            "--run",
            str(root / "run.json"),
            "--workers",
            str(args.workers),
            "--progress-every",
            "0",
        ]
        (root / "singles").mkdir()
        runs = [
            _timed(
                "suite",
                [
                    [
                        "evaluate",
                        str(root / "responses"),
                        "--config",
                        "all",
                        *options,
                        "--output",
                        str(root / "suite"),
                    ]
                ],
            ),
            _timed(
                "singles",
                [
                    [
                        "evaluate",
                        str(root / "responses" / f"{name}.jsonl"),
                        "--config",
                        name,
                        *options,
                        "--output",
                        str(root / "singles" / f"{name}.json"),
                    ]
                    for name in configs
                ],
            ),
        ]
        identical = all(
            _stable(root / "suite" / f"{name}.json") == _stable(root / "singles" / f"{name}.json")
            for name in configs
        )
    report = {
        "schema": "modebench-suite-benchmark-v1",
        "configs": len(configs),
        "prompts_per_config": args.limit,
        "draws_per_prompt": RUN["generation"]["draws_per_prompt"],
        "workers": args.workers,
        "cpu_count": os.cpu_count(),
        "load_average": [round(value, 2) for value in os.getloadavg()],
        "runs": runs,
        "receipts_identical": identical,
    }
    print(json.dumps(report, indent=2))
    if args.output:
        Path(args.output).write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
