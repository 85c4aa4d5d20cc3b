"""Time and size of `modebench report --html` on a 100k-prompt receipt, alone and compared.

Grading 100k prompts takes far longer than rendering them, so the big receipts are built from a
graded base: `--base` prompts (references from the domains' own generators, responses from their
witnesses, as in `ops/benchmark_stats.py`: run A answers in several modes, run B collapses to each
prompt's first mode) are evaluated for real, then each journal is repeated until it holds
`--prompts` records (ids made unique, sequence renumbered, the receipt's journal count and hash
updated). Every repeat is an exact copy, so every cell mean in the receipt stays exact; the report
reads all 100k journal records, as it would for a graded run. Each render runs in a fresh process
that reports wall time, CPU seconds and peak RSS; the page size is measured on disk.

    python ops/benchmark_report.py --base 1000 --prompts 100000 --output evidence/report-benchmark.json
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "ops"))

from benchmark_evaluation import _pool  # noqa: E402
from benchmark_stats import evaluate, measure, write_inputs  # noqa: E402

from modebench.evaluation import tally_results, v4_cells  # noqa: E402
from modebench.reporting import journal_path, read_report  # noqa: E402


def replicate(receipt: Path, prompts: int, output: Path) -> Path:
    """A receipt whose journal repeats ``receipt``'s until it has ``prompts`` records."""
    payload = read_report(receipt)
    lines = journal_path(receipt, payload).read_bytes().splitlines()
    entries = [json.loads(line) for line in lines]
    journal = output.with_suffix(".results.jsonl")
    digest = hashlib.sha256()
    copies = []
    with open(journal, "wb") as handle:
        for sequence in range(prompts):
            copy, entry = divmod(sequence, len(entries))
            record = dict(entries[entry])
            record["sequence"] = sequence
            record["result"] = {**record["result"], "id": f"{record['result']['id']}#{copy}"}
            line = (json.dumps(record, sort_keys=True, separators=(",", ":")) + "\n").encode()
            digest.update(line)
            handle.write(line)
            if copy == 0:
                copies.append(record)
    # The status counts and the PCMD block (prompt counts, standard error) grow with the copies:
    # the receipt gets the ones the evaluator's own tally derives from the repeated journal.
    repeated = (copies[i % len(copies)] for i in range(prompts))
    tally, cells = tally_results((r["level"], r["domain"], r["k"], r["result"]) for r in repeated)
    threshold = payload["evaluation"]["min_defined_prompts"]
    payload["evaluation"]["status_counts"] = dict(sorted(tally.counts.items()))
    payload["cells"] = v4_cells(cells, threshold, tally.healthy)
    payload["prompt_results"] = {**payload["prompt_results"], "path": journal.name, "records": prompts,
                                 "sha256": digest.hexdigest()}  # fmt: skip
    output.write_text(json.dumps(payload, indent=2, sort_keys=True), encoding="utf-8")
    read_report(output)  # the copy is a valid receipt (journal hash verified)
    return output


def render(receipts: list[Path], output: Path) -> dict[str, Any]:
    result = measure(["report", *map(str, receipts), "--html", str(output)])
    result["page_bytes"] = output.stat().st_size
    result["page_mib"] = round(output.stat().st_size / 2**20, 2)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", type=int, default=1000)
    parser.add_argument("--prompts", type=int, default=100000)
    parser.add_argument("--k", type=int, default=8)
    parser.add_argument("--output")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="modebench-report-bench-") as scratch:
        root = Path(scratch)
        started = time.perf_counter()
        a, b = (evaluate(path) for path in write_inputs(root, args.base, args.k, _pool()))
        big_a = replicate(a, args.prompts, root / "big-a.json")
        big_b = replicate(b, args.prompts, root / "big-b.json")
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
