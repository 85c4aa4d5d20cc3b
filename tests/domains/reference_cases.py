"""The reference-error cases of ``reference_hints.json`` and the edits that build each case's
reference, shared by ``test_reference_hints.py`` and ``ops/fidelity/reference_errors_vs_040.py`` (which
builds the references here and hands the finished ones to ModeBench 0.4.0)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

__all__ = ["DATA", "edited"]

DATA: dict[str, Any] = json.loads(
    (Path(__file__).parent / "reference_hints.json").read_text(encoding="utf-8")
)


def edited(case: dict[str, Any]) -> Any:
    """The case's domain reference with its edits applied: ``["set", path, value]`` (an empty
    path replaces the whole answer), ``["del", path]``, ``["pad", path, n]`` (n characters)."""
    answer = copy.deepcopy(DATA["bases"].get(case["domain"], DATA["bases"]["countdown"]))
    for op, path, *value in case["edits"]:
        if not path:
            answer = value[0]
            continue
        parent = answer
        for step in path[:-1]:
            parent = parent[step]
        if op == "del":
            del parent[path[-1]]
        elif op == "pad":
            parent[path[-1]] = "x" * value[0]
        else:
            parent[path[-1]] = value[0]
    return answer
