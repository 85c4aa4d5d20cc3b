"""Replay the ModeBench 0.4.0 conformance corpus through the isolated worker; record the result.

Reads ``../shared/reference/tests/fixtures/conformance-v1.json`` in place (never copied), grades
every case and witness with ``modebench.verifier.grade_response`` (the public, worker-isolated
entry point) and writes ``evidence/conformance.json``: agreement counts per level/domain cell.

    python ops/fidelity/conformance_report.py
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "src"))

from modebench.prompts import prompt_sha256  # noqa: E402
from modebench.verifier import close_worker, grade_response  # noqa: E402

FIXTURES = ROOT.parent / "shared" / "reference" / "tests" / "fixtures" / "conformance-v1.json"


def main() -> int:
    if not FIXTURES.is_file():
        print(f"reference fixtures not found at {FIXTURES}; nothing to replay")
        return 2
    raw = FIXTURES.read_bytes()
    data = json.loads(raw)
    cells = []
    agree = total = 0
    mismatches = []
    for fixture in data["fixtures"]:
        level, domain, row = fixture["level"], fixture["domain"], fixture["row"]
        matched = 0
        for case in fixture["cases"]:
            got = grade_response(level, domain, row, case["response"])
            expected = case["expected"]
            same = (got["verified"], got["canonical_key"], got["graded_text"]) == (
                expected["verified"],
                expected["canonical_key"],
                expected["graded_text"],
            )
            matched += same
            if not same:
                mismatches.append({"config": fixture["config"], "case": case["name"], "got": got})
        witnesses = [grade_response(level, domain, row, w["response"]) for w in fixture["witnesses"]]
        cells.append(
            {
                "config": fixture["config"],
                "cases": len(fixture["cases"]),
                "agree": matched,
                "witnesses_correct": sum(w["status"] == "correct" for w in witnesses),
                "witness_modes": len({w["canonical_key"] for w in witnesses}),
                "prompt_sha256": prompt_sha256(level, domain, row),
            }
        )
        agree += matched
        total += len(fixture["cases"])
    close_worker()
    report = {
        "schema": "modebench-conformance-evidence-v1",
        "corpus": "conformance-v1.json (ModeBench 0.4.0, CC BY 4.0; read in place)",
        "corpus_sha256": hashlib.sha256(raw).hexdigest(),
        "method": "every case and witness graded through modebench.verifier.grade_response (isolated worker); "
        "verified, canonical_key and graded_text compared exactly",
        "cases": total,
        "agree": agree,
        "cells": cells,
        "mismatches": mismatches,
    }
    target = ROOT / "evidence" / "conformance.json"
    target.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(
        f"conformance: {agree}/{total} cases agree across {len(cells)} cells; written {target.relative_to(ROOT)}"
    )
    return 0 if agree == total else 1


if __name__ == "__main__":
    sys.exit(main())
