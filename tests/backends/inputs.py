"""Mixed inputs over all 25 cells, made by the project's own generators and witnesses."""

from __future__ import annotations

import json
import random
from functools import cache
from pathlib import Path
from typing import Any

from modebench.contracts import DOMAINS
from modebench.domains import plugin

RUN = {
    "model": {"id": "test-model", "revision": "0"},
    "generation": {"temperature": 1.0},
    "prompt_condition": "registered_hints_v1",
}
WRONG = ["\\boxed{0}", "\\boxed{42}", "I am not sure.", "", "not a solution"]


@cache
def _cell_rows(level: int, domain: str) -> list[tuple[dict[str, Any], tuple[str, ...]]]:
    found = plugin(domain)
    assert found.generate is not None and found.witnesses is not None
    rows = []
    for seed in range(3):
        row = found.generate(level, random.Random(100 * level + seed))
        answer = json.loads(row["answer"]) if isinstance(row["answer"], str) else row["answer"]
        rows.append(({**row, "answer": answer}, tuple(found.witnesses(level, answer)[:4])))
    return rows


def write_mixed(path: Path, prompts: int, seed: int = 0, k: int = 4, extra: list[str] | None = None) -> Path:
    """``prompts`` records cycling over the 25 cells; responses skewed towards the first modes."""
    rng = random.Random(seed)
    cells = [(level, domain) for domain in DOMAINS for level in range(1, 6)]
    with open(path, "w", encoding="utf-8") as handle:
        for index in range(prompts):
            level, domain = cells[index % len(cells)]
            row, witnesses = rng.choice(_cell_rows(level, domain))
            responses = [
                witnesses[min(int(rng.expovariate(1.0)), len(witnesses) - 1)]
                if rng.random() < 0.6
                else rng.choice(WRONG)
                for _ in range(k)
            ]
            if extra is not None and index == 0:
                responses = list(extra)
            record = {
                "id": f"p{index}",
                "level": level,
                "domain": domain,
                "problem": row["problem"],
                "answer": row["answer"],
                "responses": responses,
            }
            handle.write(json.dumps(record) + "\n")
    return path


def normalized(receipt_path: Path) -> dict[str, Any]:
    """A receipt without the fields that name when and how it ran (start time, history)."""
    payload: dict[str, Any] = json.loads(receipt_path.read_text())
    payload.pop("created_at")
    payload["execution"].pop("history")
    return payload
