"""Receipts, journals and ``records_sha256`` of this tree against another source tree ("before").

A speed change must not move a byte: this runs ``evaluate_file`` from both source trees on the
same inputs (the walkthrough; the benchmark's mixed and rl inputs at the given sizes, and its
all-distinct input up to 1,000 prompts; the mixed input also with the run declared inline on
every record, and absent) with each worker count, then
compares the journals byte for byte and the receipts with only the fields that name the time,
the path or the software (its source digest, hence the checkpoint identity digest) left out.

    python ops/fidelity/check_receipt_identity.py --before /path/to/main/src --sizes 1000 10000 --workers 1 2
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "ops" / "benchmarks"))
sys.path.insert(0, str(ROOT / "src"))

import benchmark_evaluation as bench  # noqa: E402

DRIVER = """
import json, sys
sys.path.insert(0, sys.argv[1])
from modebench.streaming import evaluate_file
run = json.loads(sys.argv[4])
evaluate_file(sys.argv[2], sys.argv[3], run=run, workers=int(sys.argv[5]))
"""
#: Receipt fields that differ between any two runs, or between two source trees.
VOLATILE = ("created_at", "software", "prompt_results.path", "execution.identity_sha256", "execution.history")


def _masked(receipt: dict[str, Any]) -> dict[str, Any]:
    out = json.loads(json.dumps(receipt))
    for dotted in VOLATILE:
        *parents, last = dotted.split(".")
        holder = out
        for name in parents:
            holder = holder[name]
        holder.pop(last, None)
    return out


def _evaluate(src: str, source: Path, output: Path, run: Any, workers: int) -> tuple[dict[str, Any], bytes]:
    subprocess.run(
        [sys.executable, "-c", DRIVER, src, str(source), str(output), json.dumps(run), str(workers)],
        check=True,
    )
    receipt = json.loads(output.read_text(encoding="utf-8"))
    journal = (output.parent / receipt["prompt_results"]["path"]).read_bytes()
    return receipt, journal


def _inputs(scratch: Path, sizes: list[int]) -> list[tuple[str, Path, Any]]:
    from modebench.walkthrough import bundle

    data = bundle()
    walkthrough = scratch / "walkthrough.jsonl"
    walkthrough.write_text("".join(json.dumps(r) + "\n" for r in data["records"]), encoding="utf-8")
    found = [("walkthrough", walkthrough, data["run"])]
    pool = bench._pool()
    for size in sizes:
        mixed = scratch / f"mixed-{size}.jsonl"
        bench.write_input(mixed, size, 8, "mixed", pool)
        found.append((f"mixed-{size}", mixed, bench.RUN))
        rl = scratch / f"rl-{size}.jsonl"  # wrong MathIR programs: the table's terms and last steps
        bench.write_rl(rl, size, 8)
        found.append((f"rl-{size}", rl, bench.RUN))
        if size <= 1000:  # every reference/response pair distinct: each reference validated afresh
            distinct = scratch / f"all-distinct-{size}.jsonl"
            bench.write_all_distinct(distinct, size, 8)
            found.append((f"all-distinct-{size}", distinct, bench.RUN))
        if size <= 1000:  # the in-process paths: an inline run on every record, and no run at all
            inline = scratch / f"inline-{size}.jsonl"
            with open(mixed, encoding="utf-8") as lines, open(inline, "w", encoding="utf-8") as out:
                for line in lines:
                    out.write(json.dumps({**json.loads(line), "run": bench.RUN}) + "\n")
            found.append((f"inline-run-{size}", inline, None))
            found.append((f"no-run-{size}", mixed, None))
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="the src/ directory of the tree to compare with")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    args = parser.parse_args()
    failures = 0
    with tempfile.TemporaryDirectory(prefix="modebench-identity-") as temp:
        scratch = Path(temp)
        for name, source, run in _inputs(scratch, args.sizes):
            for workers in args.workers:
                label = f"{name} workers={workers}"
                before = _evaluate(
                    args.before, source, scratch / f"before-{name}-{workers}.json", run, workers
                )
                after = _evaluate(
                    str(ROOT / "src"), source, scratch / f"after-{name}-{workers}.json", run, workers
                )
                same_journal = before[1] == after[1]
                same_receipt = _masked(before[0]) == _masked(after[0])
                same_records = before[0]["records_sha256"] == after[0]["records_sha256"]
                ok = same_journal and same_receipt and same_records
                failures += not ok
                print(
                    f"{'ok  ' if ok else 'DIFF'} {label}: journal {'=' if same_journal else '≠'}, "
                    f"receipt {'=' if same_receipt else '≠'}, records_sha256 {'=' if same_records else '≠'}",
                    flush=True,
                )
    print("identical" if not failures else f"{failures} differing runs")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
