"""Peak grading-worker memory on an input built to fill the worker caches (hardening round two, item 1).

Builds ``tests/cache_fill.py``'s input (graph-colouring prompts with ~56 KB references and many
distinct responses), evaluates it with each worker count, and records per run: the status counts,
the journal's SHA-256 (the same for every worker count, or the run is wrong) and the peak
resident memory (``VmHWM``) of every grading worker, sampled at each progress event.

    python ops/benchmarks/cache_memory.py --prompts 700 --workers 1 2 3 --output evidence/cache-memory.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))


def run(prompts: int, workers: list[int]) -> dict[str, Any]:
    from cache_fill import children_peak_kib, write_cache_filling_input
    from modebench.streaming import evaluate_file

    runs = []
    with tempfile.TemporaryDirectory(prefix="modebench-cache-") as tmp:
        source = write_cache_filling_input(Path(tmp) / "in.jsonl", prompts)
        for count in workers:
            peaks: dict[int, int] = {}
            output = Path(tmp) / f"w{count}.json"
            started = time.monotonic()
            evaluate_file(source, output, workers=count, progress=lambda event, p=peaks: children_peak_kib(p))
            payload = json.loads(output.read_text())
            journal = output.parent / payload["prompt_results"]["path"]
            runs.append(
                {
                    "workers": count,
                    "status": payload["evaluation"]["status"],
                    "status_counts": payload["evaluation"]["status_counts"],
                    "journal_sha256": hashlib.sha256(journal.read_bytes()).hexdigest(),
                    "seconds": round(time.monotonic() - started, 1),
                    "worker_peak_rss_bytes": sorted((kib * 1024 for kib in peaks.values()), reverse=True),
                }
            )
        input_bytes = source.stat().st_size
    return {
        "schema": "modebench-cache-memory-v1",
        "python": platform.python_version(),
        "prompts": prompts,
        "input_bytes": input_bytes,
        "runs": runs,
        "identical_journals": len({r["journal_sha256"] for r in runs}) == 1,
        "method": "evaluate_file in process; VmHWM of each child sampled at every progress event "
        "(a worker replaced mid-run is sampled while it lived); measured on a shared, loaded 2-core machine",
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=700)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--output", required=True)
    args = parser.parse_args()
    if os.path.lexists(args.output):
        parser.error(f"output already exists: {args.output}")
    summary = run(args.prompts, args.workers)
    Path(args.output).write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps({k: summary[k] for k in ("prompts", "identical_journals")}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
