#!/usr/bin/env python3
"""What the progress display costs: the validation bar's line count, and the per-event filter.

``python ops/benchmarks/benchmark_progress.py [--megabytes 256] [--output FILE]`` writes an evaluate-shaped
JSONL file of about that size to a temporary directory, times ``count_lines`` on it (wall and CPU
seconds, reported per GiB) and times ``EventFilter`` over a million grading events. Prints JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from modebench.cli._progress import EventFilter, count_lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--megabytes", type=int, default=256, help="input size to scan (default 256)")
    parser.add_argument("--output", help="also write the JSON here")
    args = parser.parse_args(argv)
    record = {
        "id": "x",
        "level": 1,
        "domain": "countdown",
        "answer": {"verifier": "countdown", "numbers": [1, 2, 3], "target": 6},
        "responses": ["\\boxed{1+2+3} and some reasoning " * 40] * 8,
    }
    line = (json.dumps(record) + "\n").encode()
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "input.jsonl"
        lines = args.megabytes * 2**20 // len(line)
        with open(path, "wb") as handle:
            for _ in range(lines):
                handle.write(line)
        size = path.stat().st_size
        wall, cpu = time.perf_counter(), time.process_time()
        counted = count_lines(path)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    assert counted == lines
    events = EventFilter(None, lambda event: int(event["completed_prompts"]))
    started = time.process_time()
    for done in range(1_000_000):
        events({"phase": "grading", "completed_prompts": done}, done / 1000)
    per_event = (time.process_time() - started) / 1_000_000
    result = {
        "schema": "modebench-progress-cost-v1",
        "python": sys.version.split()[0],
        "load_average": os.getloadavg(),
        "input_bytes": size,
        "lines": lines,
        "count_lines_wall_seconds": round(wall, 3),
        "count_lines_cpu_seconds": round(cpu, 3),
        "count_lines_cpu_seconds_per_gib": round(cpu * 2**30 / size, 3),
        "event_filter_cpu_microseconds": round(per_event * 1e6, 3),
    }
    text = json.dumps(result, indent=2)
    print(text)
    if args.output:
        Path(args.output).write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
