"""Every edge-case vector of spec/domains/countdown.md §9, graded through the full contract."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from modebench.domains._pipeline import grade_in_process
from tests.reference_data import SKIP_REASON, conformance_fixtures

VECTORS: list[dict[str, Any]] = json.loads((Path(__file__).with_name("vectors.json")).read_text("utf-8"))[
    "vectors"
]
FIXTURE_ROWS = {(f["config"], f["split"], f["row_index"]): f["row"] for f in conformance_fixtures()}


def _row(ref: dict[str, Any]) -> Any:
    if "fixture" in ref:
        found = FIXTURE_ROWS.get((ref["fixture"], ref["split"], ref["row_index"]))
        if found is None:
            pytest.skip(SKIP_REASON)
        return found
    if "answer" in ref:
        return {"answer": ref["answer"]}
    return ref["row"]


def _response(spec: Any) -> str:
    if isinstance(spec, str):
        return spec
    return spec.get("prefix", "") + spec["repeat"] * spec["times"] + spec.get("suffix", "")


def test_all_vectors_transcribed() -> None:
    ids = [vector["id"] for vector in VECTORS]
    assert ids == [f"cd-{number:02d}" for number in range(1, 75)]


@pytest.mark.parametrize("vector", [v for v in VECTORS if "confidence" not in v], ids=lambda v: v["id"])
def test_vector(vector: dict[str, Any]) -> None:
    response = _response(vector["response"])
    got = grade_in_process(vector["level"], vector["domain"], _row(vector["ref"]), response)
    expected = vector["expected"]
    graded_text = (
        response if expected["graded_text"] == {"same_as_response": True} else expected["graded_text"]
    )
    assert list(got)[:5] == ["status", "verified", "canonical_key", "graded_text", "detail"]
    assert (got["status"], got["verified"], got["canonical_key"], got["graded_text"]) == (
        expected["status"],
        expected["status"] == "correct",
        expected["canonical_key"],
        graded_text,
    ), got


@pytest.mark.parametrize("vector", [v for v in VECTORS if "confidence" in v], ids=lambda v: v["id"])
def test_uncertain_vector(vector: dict[str, Any]) -> None:
    """cd-74 (``uncertain``): the recursion threshold is interpreter-defined, so only the outcome
    class is asserted. In process there is no worker guard, so the RecursionError itself must
    escape (the worker turns it into ``worker_failure``); a guarded result must be that status."""
    assert vector["expected"]["status"] == "worker_failure"
    try:
        got = grade_in_process(
            vector["level"], vector["domain"], _row(vector["ref"]), _response(vector["response"])
        )
    except RecursionError:
        return
    assert (got["status"], got["canonical_key"], got["graded_text"]) == ("worker_failure", None, "")
