"""Every edge-case vector of spec/domains/mathir.md §7, graded through the full contract.

No MathIR vector is marked uncertain (all were replayed on the reference wheel), so every one is
compared exactly on status, verified, canonical_key and graded_text.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from modebench.domains._pipeline import grade_in_process
from tests.reference_data import SKIP_REASON, conformance_fixtures

VECTORS: list[dict[str, Any]] = json.loads(Path(__file__).with_name("vectors.json").read_text("utf-8"))[
    "vectors"
]
FIXTURE_ROWS = {(f["config"], f["row_index"]): f["row"] for f in conformance_fixtures()}


def _row(ref: dict[str, Any]) -> dict[str, Any]:
    if "inline_answer" in ref:
        return {"answer": ref["inline_answer"]}
    found = FIXTURE_ROWS.get((ref["fixture"], ref["row_index"]))
    if found is None:
        pytest.skip(SKIP_REASON)
    answer = copy.deepcopy(found["answer"])
    if isinstance(answer, str):
        answer = json.loads(answer)
    answer.update(ref.get("answer_overrides", {}))  # shallow top-level replacement
    return {"answer": answer}


def _response(vector: dict[str, Any]) -> Any:
    if "response_spec" in vector:
        spec = vector["response_spec"]
        return spec["repeat"] * spec["count"]
    return vector["response"]


def test_all_vectors_transcribed() -> None:
    assert [v["id"] for v in VECTORS] == [f"v{n:02d}" for n in range(1, 88)]


@pytest.mark.parametrize("vector", VECTORS, ids=lambda v: v["id"])
def test_vector(vector: dict[str, Any]) -> None:
    got = grade_in_process(vector["level"], "mathir", _row(vector["ref"]), _response(vector))
    expected = vector["expected"]
    assert list(got)[:5] == ["status", "verified", "canonical_key", "graded_text", "detail"]
    assert (got["status"], got["verified"], got["canonical_key"], got["graded_text"]) == (
        expected["status"],
        expected["verified"],
        expected["canonical_key"],
        expected["graded_text"],
    ), (vector["note"], got)
