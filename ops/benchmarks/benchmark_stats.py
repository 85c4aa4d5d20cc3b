"""Time and memory of `modebench stats` and `modebench compare` on large real receipts.

Two inputs of the same prompts are generated with the machinery of `ops/benchmarks/benchmark_evaluation.py`
(references drawn per cell from the domains' own generators, responses from their witnesses):
run A answers in several modes, run B answers only in each prompt's first mode (a collapsed
model). Both are graded by `evaluate_file`, then `stats A` and `compare A B` (JSON output, the
default 1000 bootstrap resamples) each run in a fresh process that reports its wall time and peak
RSS (and CPU seconds, which a loaded machine inflates less; the 1-minute load average at the
start of each measurement is recorded beside them). Sizes 10k and 100k show whether
memory stays flat as the receipt grows. With `--base N`, only N prompts are graded and each journal
is repeated up to the size (as in `ops/benchmarks/benchmark_report.py`: ids made unique, the receipt's counts,
cells and journal hash rederived), since grading 100k prompts twice takes far longer than the
statistics; the statistics still read and verify every record.

    python ops/benchmarks/benchmark_stats.py --base 1000 --sizes 10000 100000 --output evidence/statistics-benchmark.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "ops" / "benchmarks"))

from benchmark_evaluation import RUN, _pool, _responses  # noqa: E402
from benchmark_receipts import replicate  # noqa: E402

from modebench.reporting import journal_path, read_report  # noqa: E402

DRIVER = """
import io, json, resource, sys, time
from contextlib import redirect_stdout
sys.path.insert(0, sys.argv[1])
from modebench.cli import main
buffer = io.StringIO()
started = time.perf_counter()
with redirect_stdout(buffer):
    code = main(sys.argv[2:])
elapsed = time.perf_counter() - started
usage = resource.getrusage(resource.RUSAGE_SELF)
workers = resource.getrusage(resource.RUSAGE_CHILDREN)  # a parallel pass's worker processes
print(json.dumps({"seconds": elapsed, "cpu_seconds": usage.ru_utime + usage.ru_stime, "exit": code,
                  "worker_cpu_seconds": workers.ru_utime + workers.ru_stime,
                  "output_bytes": len(buffer.getvalue()), "peak_rss_kib": usage.ru_maxrss,
                  "worker_peak_rss_kib": workers.ru_maxrss}))
"""


def write_inputs(directory: Path, prompts: int, k: int, pool: dict[Any, Any]) -> tuple[Path, Path]:
    choose = random.Random(prompts)
    answers_a, answers_b = random.Random(1), random.Random(2)
    cells = sorted(pool)
    paths = directory / f"a-{prompts}.jsonl", directory / f"b-{prompts}.jsonl"
    with open(paths[0], "w", encoding="utf-8") as a, open(paths[1], "w", encoding="utf-8") as b:
        for index in range(prompts):
            level, domain = cells[index % len(cells)]
            row, witnesses = choose.choice(pool[(level, domain)])
            base = {"id": f"p{index}", "level": level, "domain": domain, "problem": row["problem"],
                    "answer": row["answer"]}  # fmt: skip
            a.write(json.dumps({**base, "responses": _responses(answers_a, witnesses, k, None)}) + "\n")
            b.write(json.dumps({**base, "responses": _responses(answers_b, witnesses[:1], k, None)}) + "\n")
    return paths


def evaluate(source: Path) -> Path:
    output = source.with_suffix(".receipt.json")
    code = (
        "import json, sys; sys.path.insert(0, sys.argv[1]);"
        "from modebench.streaming import evaluate_file;"
        "print(json.dumps(evaluate_file(sys.argv[2], sys.argv[3], run=json.loads(sys.argv[4]), workers=2)))"
    )
    subprocess.run(
        [sys.executable, "-c", code, str(ROOT / "src"), str(source), str(output), json.dumps(RUN)],
        check=True,
        capture_output=True,
    )
    return output


def measure(arguments: list[str]) -> dict[str, Any]:
    load = os.getloadavg()[0]
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, str(ROOT / "src"), *arguments],
        check=True,
        capture_output=True,
        text=True,
    )
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return {
        "seconds": round(result["seconds"], 2),
        "cpu_seconds_incl_startup": round(result["cpu_seconds"], 2),
        "worker_cpu_seconds": round(result["worker_cpu_seconds"], 2),
        "peak_rss_mib": round(result["peak_rss_kib"] / 1024, 1),
        "worker_peak_rss_mib": round(result["worker_peak_rss_kib"] / 1024, 1),
        "exit": result["exit"],
        "output_bytes": result["output_bytes"],
        "load_average_1min_at_start": round(load, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10000, 100000])
    parser.add_argument("--k", type=int, default=8)
    parser.add_argument("--base", type=int, help="grade this many prompts and repeat them up to each size")
    parser.add_argument("--output")
    parser.add_argument("--keep", help="build the receipts in this directory and reuse them on later runs")
    args = parser.parse_args()
    pool = _pool()
    runs = []
    base: list[Path] = []
    with tempfile.TemporaryDirectory(prefix="modebench-stats-bench-") as temporary:
        scratch = args.keep or temporary
        Path(scratch).mkdir(parents=True, exist_ok=True)
        for prompts in args.sizes:
            started = time.perf_counter()
            if args.base:
                root = Path(scratch)
                kept = [root / f"{n}-{prompts}-big.json" for n in "ab"]
                if all(path.exists() for path in kept):  # built by an earlier run with --keep
                    a, b = kept
                else:
                    if not base:  # graded once, repeated to every size
                        base.extend(evaluate(path) for path in write_inputs(root, args.base, args.k, pool))
                    a, b = (replicate(r, prompts, path) for r, path in zip(base, kept))
            else:
                a, b = (evaluate(path) for path in write_inputs(Path(scratch), prompts, args.k, pool))
            graded = time.perf_counter() - started
            journal_mib = journal_path(a, read_report(a, verify_results=False)).stat().st_size / 2**20
            run = {
                "prompts": prompts,
                "k": args.k,
                "journal_a_mib": round(journal_mib, 1),
                "setup_seconds": round(graded, 1),
                "stats": measure(["stats", str(a), "--format", "json"]),
                "compare": measure(["compare", str(a), str(b), "--format", "json"]),
            }
            print(json.dumps(run), flush=True)
            runs.append(run)
    try:
        import numpy

        engine = f"numpy {numpy.__version__}"
    except ImportError:
        engine = "pure Python"
    result = {
        "benchmark": "modebench stats / compare",
        "method": __doc__.split("\n\n")[1].replace("\n", " "),
        "python": platform.python_version(),
        "bootstrap": engine,
        "graded_base_prompts": args.base,
        "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
        "runs": runs,
    }
    text = json.dumps(result, indent=2)
    print(text)
    if args.output:
        Path(args.output).write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
