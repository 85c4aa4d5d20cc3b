"""An evaluate input built to fill the grading worker's caches (hardening round two, item 1).

Graph-colouring prompts with ~53 KB references (under the 64 KiB reference cap) and many
distinct short responses: every reference is parsed into a large object, and every response is
a new result-cache entry. Written by ``write_cache_filling_input``; shared by the property test
and ``ops/benchmarks/cache_memory.py`` (peak worker memory).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

__all__ = ["cache_filling_records", "children_peak_kib", "write_cache_filling_input"]


def _answer(seed: int, n: int = 2000) -> dict[str, Any]:
    # A 3-colourable graph: vertex v has colour v mod 3 + 1; edges join vertices 1 and 2 apart
    # (always different colours); the seed shifts a few extra edges so no two references are equal.
    edges = [[v, v + 1] for v in range(1, n)] + [[v, v + 2] for v in range(1, n - 1, 1)]
    edges.append([1 + seed % (n - 5), 2 + seed % (n - 5)])
    partial: list[int | None] = [v % 3 + 1 for v in range(1, n + 1)]
    for hidden in (0, 1, 2):
        partial[hidden] = None
    return {
        "edges": edges,
        "n": n,
        "partial_colors": partial,
        "instance_id": f"cache-fill-{seed}",
        "verifier": "graph_coloring",
    }


def cache_filling_records(prompts: int, responses: int = 4) -> list[dict[str, Any]]:
    records = []
    for index in range(prompts):
        texts = ["\\boxed{231}"] + [
            f"try {index}-{draw}: \\boxed{{{(draw % 3) + 1}{(index % 3) + 1}1}}"
            for draw in range(1, responses)
        ]
        records.append(
            {
                "id": f"big{index}",
                "level": 1,
                "domain": "graph_coloring",
                "answer": _answer(index),
                "responses": texts,
            }
        )
    return records


def write_cache_filling_input(path: Path, prompts: int, responses: int = 4) -> Path:
    with open(path, "w", encoding="utf-8") as handle:
        for record in cache_filling_records(prompts, responses):
            handle.write(json.dumps(record, separators=(",", ":")) + "\n")
    return path


def children_peak_kib(peaks: dict[int, int]) -> None:
    """Record the peak resident memory (VmHWM, KiB) of every live child of this process by pid.

    VmHWM is each child's own peak: ``ru_maxrss`` of the children would count a large forking
    parent (a test runner's worker) too."""
    for task in Path(f"/proc/{os.getpid()}/task").iterdir():
        try:
            children = (task / "children").read_text().split()
        except OSError:
            continue
        for pid in children:
            try:
                status = Path(f"/proc/{pid}/status").read_text()
            except OSError:
                continue
            for line in status.splitlines():
                if line.startswith("VmHWM:"):
                    peaks[int(pid)] = max(peaks.get(int(pid), 0), int(line.split()[1]))
