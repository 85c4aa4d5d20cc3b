"""Regenerate the packaged walkthrough (``src/modebench/walkthrough.json``).

Five Level-1 tasks, one per domain, made by this project's generators; four saved responses
each: two certified witnesses in different modes, one well-formed wrong answer (found by
mutating a witness until the grader says ``incorrect``) and one malformed answer. The output is
committed; the test suite re-grades it, so a grader change that alters the walkthrough fails.

    python ops/release/make_walkthrough.py [--seed 2026]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "src"))

from modebench.domains import plugin  # noqa: E402
from modebench.domains._pipeline import grade_in_process  # noqa: E402

ORDER = ("countdown", "graph_coloring", "python_factors", "mathir", "pantry_plan")
TARGET = ROOT / "src" / "modebench" / "walkthrough.json"
MALFORMED = "not a solution"


def _wrong(domain: str, row: dict[str, Any], witness: str) -> str:
    """The first single-character mutation of a witness that grades ``incorrect``."""
    alphabet = "0123456789ABCDEFGHabcdef+-*/=;"
    for index in range(len(witness) - 1, -1, -1):
        for char in alphabet:
            if char == witness[index]:
                continue
            text = witness[:index] + char + witness[index + 1 :]
            if grade_in_process(1, domain, row, text)["status"] == "incorrect":
                return text
    raise SystemExit(f"no incorrect mutation found for {domain}")


def build(seed: int) -> dict[str, Any]:
    records = []
    for domain in ORDER:
        found = plugin(domain)
        assert found.generate is not None and found.witnesses is not None
        row = found.generate(1, random.Random(seed))
        answer = json.loads(row["answer"])
        witnesses = found.witnesses(1, answer)
        first = witnesses[0]
        key = grade_in_process(1, domain, row, first)["canonical_key"]
        second = next(w for w in witnesses[1:] if grade_in_process(1, domain, row, w)["canonical_key"] != key)
        records.append(
            {
                "id": f"level1_{domain}/walkthrough/0",
                "level": 1,
                "domain": domain,
                "problem": row["problem"],
                "answer": answer,
                "responses": [first, second, _wrong(domain, row, first), MALFORMED],
            }
        )
    return {
        "schema": "modebench-walkthrough-v1",
        "source": f"Level-1 tasks from this project's generators (seed {seed}); responses are certified witnesses and hand-picked failures, not model generations.",
        "records": records,
        "run": {
            "model": {"id": "recorded-walkthrough", "revision": f"generated-seed-{seed}"},
            "generation": {
                "source": "generated verified examples, not model generations",
                "draws_per_prompt": 4,
            },
            "prompt_condition": "registered_hints_v1",
        },
        "expected": {
            "cells": 5,
            "per_cell": {
                "accuracy": 0.5,
                "pass_at_k": 1.0,
                "distinct_at_k": 2.0,
                "pcmd": 1.0,
                "reportable": False,
            },
            "status_counts": {"correct": 10, "incorrect": 5, "malformed": 5},
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    TARGET.write_text(json.dumps(build(args.seed), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"written: {TARGET}")


if __name__ == "__main__":
    main()
