"""Time and size of `modebench report --html` on a 100k-prompt receipt, alone and compared.

Grading 100k prompts takes far longer than rendering them, so the big receipts are built from a
graded base: `--base` prompts (references from the domains' own generators, responses from their
witnesses, as in `ops/benchmarks/benchmark_stats.py`: run A answers in several modes, run B collapses to each
prompt's first mode) are evaluated for real, then each journal is repeated until it holds
`--prompts` records (ids made unique, sequence renumbered, the receipt's journal count and hash
updated). Every repeat is an exact copy, so every cell mean in the receipt stays exact; the report
reads all 100k journal records, as it would for a graded run. Each render runs in a fresh process
that reports wall time, CPU seconds and peak RSS, its own and its worker processes' (large
journals are read by forked workers); the page size is measured on disk. A second fresh process per
page splits its own CPU seconds: the statistics (what of the journal pass, the curves' bootstrap
and the comparison runs in that process) and the rendering (the matplotlib import, every figure and
the HTML), the split `render_html` itself does not report, measured by timing the page's section
builders.

    python ops/benchmarks/benchmark_report.py --base 1000 --prompts 100000 --output evidence/report-benchmark.json

`--keep DIR` builds the receipts in DIR once and reuses them on the next run (the setup takes minutes).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "ops" / "benchmarks"))

from benchmark_evaluation import _pool  # noqa: E402
from benchmark_receipts import replicate  # noqa: E402
from benchmark_stats import evaluate, measure, write_inputs  # noqa: E402

from modebench.receipt.reader import journal_path, read_report  # noqa: E402

# The page's section builders (and the matplotlib import) are the rendering; the rest of
# `html_report` is the statistics: the journal pass(es), the curves and the comparison.
SPLIT = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
from modebench.render import html
spent = [0.0]
def timed(function):
    def wrapper(*args, **kwargs):
        started = time.process_time()
        try:
            return function(*args, **kwargs)
        finally:
            spent[0] += time.process_time() - started
    return wrapper
for name in ("_require_plot", "run_section", "overlay_section", "compare_section", "page"):
    setattr(html, name, timed(getattr(html, name)))
started = time.process_time()
html.html_report(sys.argv[2:])
total = time.process_time() - started
print(json.dumps({"report_cpu_seconds": total, "render_cpu_seconds": spent[0]}))
"""


def split(receipts: list[Path]) -> dict[str, float]:
    done = subprocess.run([sys.executable, "-c", SPLIT, str(ROOT / "src"), *map(str, receipts)],
                          check=True, capture_output=True, text=True)  # fmt: skip
    found = json.loads(done.stdout.strip().splitlines()[-1])
    total, render = found["report_cpu_seconds"], found["render_cpu_seconds"]
    return {"statistics": round(total - render, 2), "rendering": round(render, 2)}


def render(receipts: list[Path], output: Path) -> dict[str, Any]:
    output.unlink(missing_ok=True)  # the report never overwrites a page
    result = measure(["report", *map(str, receipts), "--html", str(output)])
    result["page_bytes"] = output.stat().st_size
    result["page_mib"] = round(output.stat().st_size / 2**20, 2)
    result["cpu_seconds_split"] = split(receipts)
    return result


def receipts(root: Path, base: int, prompts: int, k: int) -> tuple[Path, Path]:
    """The two big receipts in ``root``, built unless a previous run left them there."""
    big_a, big_b = root / f"big-a-{base}-{prompts}-{k}.json", root / f"big-b-{base}-{prompts}-{k}.json"
    if not (big_a.exists() and big_b.exists()):
        a, b = (evaluate(path) for path in write_inputs(root, base, k, _pool()))
        replicate(a, prompts, big_a)
        replicate(b, prompts, big_b)
    return big_a, big_b


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", type=int, default=1000)
    parser.add_argument("--prompts", type=int, default=100000)
    parser.add_argument("--k", type=int, default=8)
    parser.add_argument("--output")
    parser.add_argument("--keep", help="build the receipts in this directory once and reuse them")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="modebench-report-bench-") as scratch:
        root = Path(args.keep or scratch)
        root.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        big_a, big_b = receipts(root, args.base, args.prompts, args.k)
        setup = time.perf_counter() - started
        journal_mib = journal_path(big_a, read_report(big_a, verify_results=False)).stat().st_size / 2**20
        cells = len(read_report(big_a, verify_results=False)["cells"])
        result = {
            "benchmark": "modebench report --html",
            "method": __doc__.split("\n\n")[1].replace("\n", " "),
            "python": platform.python_version(),
            "prompts": args.prompts,
            "graded_base_prompts": args.base,
            "k": args.k,
            "cells": cells,
            "journal_mib": round(journal_mib, 1),
            "setup_seconds": round(setup, 1),
            "one_receipt": render([big_a], root / "one.html"),
            "two_receipts": render([big_a, big_b], root / "two.html"),
            "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
        }
    text = json.dumps(result, indent=2)
    print(text)
    if args.output:
        Path(args.output).write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
