"""Receipts for the statistics and report benchmarks, shared by ``benchmark_stats.py`` and
``benchmark_report.py`` (which imports ``benchmark_stats``; this module imports neither).

``replicate`` makes a big receipt out of a small graded one: its journal repeated until it has
the wanted number of prompts (ids made unique), with the receipt's counts and cells re-tallied
by the evaluator's own code, so that the copy is a valid receipt.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "src"))

from modebench.receipt.reader import journal_path, read_report  # noqa: E402
from modebench.receipt.tallies import tally_results, v4_cells  # noqa: E402

__all__ = ["replicate"]


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
