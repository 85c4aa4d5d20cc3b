"""Independent check of a generated release: references validate, mode counts match brute force.

For every sampled row of a release (default: the bundled one) this script validates the reference
with the verifier, grades the certified witnesses, and recounts the modes by brute force *through
the grader* — enumerating candidate responses and counting distinct canonical keys — without the
generator's enumeration code:

* countdown: every fully parenthesised expression over every operand order and operator choice;
* graph_coloring: every colour string for the hidden vertices;
* python_factors: the product of proper-divisor counts (the output vectors);
* mathir: every menu program of 1..max_steps actions;
* pantry_plan: Level 1 every six-bit mask; Levels 2–5 every support with its lattice scanned.

Writes ``evidence/generated-release.json``.

    python ops/release/verify_generated.py [--registry bundled] [--sample 8]
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "src"))

from modebench.api import load_tasks  # noqa: E402
from modebench.dataset_cache import load_registry  # noqa: E402
from modebench.domains import plugin  # noqa: E402
from modebench.domains._pipeline import grade_local  # noqa: E402
from modebench.verifier import close_worker, grade_response, reference_check  # noqa: E402


def _keys(level: int, domain: str, answer: dict[str, Any], texts: Any) -> set[str]:
    keys = set()
    for text in texts:
        result = grade_local(level, domain, answer, text)
        if result["status"] == "correct":
            keys.add(result["canonical_key"])
    return keys


def _trees(items: list[str]) -> Any:
    if len(items) == 1:
        yield items[0]
        return
    for cut in range(1, len(items)):
        for left in _trees(items[:cut]):
            for right in _trees(items[cut:]):
                for op in "+-*/":
                    yield f"({left}{op}{right})"


def brute_force(level: int, domain: str, answer: dict[str, Any]) -> int:
    if domain == "countdown":
        texts = (
            t
            for order in itertools.permutations([str(n) for n in answer["numbers"]])
            for t in _trees(list(order))
        )
        return len(_keys(level, domain, answer, texts))
    if domain == "graph_coloring":
        partial = answer.get("partial_colors")
        width = sum(1 for c in partial if c == 0) if partial else 0
        width = width or int(answer["n"])
        return len(
            _keys(level, domain, answer, (",".join(d) for d in itertools.product("123", repeat=width)))
        )
    if domain == "python_factors":
        total = 1
        for n in answer["cases"]:
            total *= sum(1 for d in range(2, n) if n % d == 0)
        return total
    if domain == "mathir":
        ids = list(answer["actions"])
        steps = int(answer.get("max_steps", 4))
        texts = (";".join(p) for length in range(1, steps + 1) for p in itertools.product(ids, repeat=length))
        return len(_keys(level, domain, answer, texts))
    # pantry_plan
    rows = answer["ingredients"]
    if level == 1:
        return len(
            _keys(
                level, domain, answer, ("".join(bits) for bits in itertools.product("01", repeat=len(rows)))
            )
        )
    keys: set[str] = set()
    for size in range(answer["min_ingredients"], answer["max_ingredients"] + 1):
        for combo in itertools.combinations(rows, size):
            lattices = [range(r["min_if_used_g"], r["available_g"] + 1, r["step_g"]) for r in combo]
            for grams in itertools.product(*lattices):
                text = ";".join(f"{r['id']}={g}" for r, g in zip(combo, grams))
                result = grade_local(level, domain, answer, text)
                if result["status"] == "correct":
                    keys.add(result["canonical_key"])
                    break
    return len(keys)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--registry", default="bundled")
    parser.add_argument("--sample", type=int, default=8, help="rows checked per split (0 = all)")
    args = parser.parse_args()
    registry = load_registry(args.registry)
    cells = []
    failures = 0
    started = time.perf_counter()
    for record in registry.records:
        level, domain, config = record["level"], record["domain"], record["config_name"]
        witnesses_of = plugin(domain).witnesses
        assert witnesses_of is not None
        checked = agree = witnesses_ok = 0
        for index, task in enumerate(load_tasks(config, record["split"], registry=args.registry)):
            if args.sample and index >= args.sample:
                break
            answer = dict(task.answer)
            reference_check(level, domain, answer)  # raises for an invalid reference
            recorded = next(
                answer[k]
                for k in (
                    "num_expressions",
                    "valid_mode_count",
                    "certified_mode_count",
                    "num_modes",
                    "num_completions",
                )
                if k in answer
            )
            counted = brute_force(level, domain, answer)
            agree += counted == recorded
            witnesses = witnesses_of(level, answer)[:2]
            statuses = [
                grade_response(level, domain, {"answer": answer}, text)["status"] for text in witnesses
            ]
            witnesses_ok += all(s == "correct" for s in statuses)
            checked += 1
        failures += (checked - agree) + (checked - witnesses_ok)
        cells.append(
            {
                "config": config,
                "split": record["split"],
                "rows_checked": checked,
                "mode_counts_agree": agree,
                "witnesses_correct": witnesses_ok,
            }
        )
        print(
            f"{config}/{record['split']}: {agree}/{checked} mode counts agree, {witnesses_ok}/{checked} witnesses correct",
            flush=True,
        )
    close_worker()
    evidence = {
        "schema": "modebench-generated-release-evidence-v1",
        "registry": args.registry,
        "registry_sha256": registry.sha256,
        "method": __doc__.split("\n\n")[1].replace("\n", " "),
        "sample_per_split": args.sample or "all",
        "seconds": round(time.perf_counter() - started, 1),
        "cells": cells,
        "failures": failures,
    }
    target = ROOT / "evidence" / "generated-release.json"
    target.write_text(json.dumps(evidence, indent=2) + "\n", encoding="utf-8")
    print(f"written: {target.relative_to(ROOT)}; failures: {failures}")
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
