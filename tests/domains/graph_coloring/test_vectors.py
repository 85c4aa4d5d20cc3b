"""Every section-9 vector of the graph-coloring spec, plus cases stated in the spec's prose."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from modebench.domains._pipeline import grade_in_process
from tests.reference_data import SKIP_REASON, conformance_fixtures

VECTORS: list[dict[str, Any]] = json.loads(
    (Path(__file__).with_name("vectors.json")).read_text(encoding="utf-8")
)
FIXTURES = {(f["config"], f["split"], f["row_index"]): f for f in conformance_fixtures()}

L1 = {"fixture": "level1_graph_coloring", "split": "eval", "row_index": 0}
CHAIN = {"answer": {"verifier": "graph_coloring", "n": 4, "edges": [[1, 2], [2, 3], [3, 4]]}}
ALL_FIXED = {
    "answer": {"verifier": "graph_coloring", "n": 3, "edges": [[1, 2], [2, 3]], "partial_colors": [1, 2, 1]}
}


def _row(ref: dict[str, Any]) -> dict[str, Any]:
    if "fixture" not in ref:
        return ref
    fixture = FIXTURES.get((ref["fixture"], ref["split"], ref["row_index"]))
    if fixture is None:
        pytest.skip(SKIP_REASON)
    return {"answer": fixture["row"]["answer"]}


def _response(spec: Any) -> str:
    if isinstance(spec, str):
        return spec
    return spec.get("prefix", "") + spec["repeat"] * spec["times"] + spec.get("suffix", "")


def _check(level: int, ref: dict[str, Any], response: Any, expected: dict[str, Any]) -> None:
    text = _response(response)
    got = grade_in_process(level, "graph_coloring", _row(ref), text)
    graded = expected["graded_text"]
    if isinstance(graded, dict) and graded.get("same_as_response"):
        graded = text
    assert got["status"] == expected["status"], got
    assert got["verified"] is (expected["status"] == "correct")
    assert got["canonical_key"] == expected["canonical_key"]
    assert got["graded_text"] == graded
    assert (got["detail"] is None) is (expected["status"] == "correct")


def test_all_section9_vectors_present() -> None:
    assert [v["id"] for v in VECTORS] == [f"gc-{i:02d}" for i in range(1, 60)]


@pytest.mark.parametrize("vector", VECTORS, ids=[v["id"] for v in VECTORS])
def test_vector(vector: dict[str, Any]) -> None:
    assert vector["domain"] == "graph_coloring"
    _check(vector["level"], vector["ref"], vector["response"], vector["expected"])


def _ok(key: str, text: str) -> dict[str, Any]:
    return {"status": "correct", "canonical_key": f"graph_coloring:{key}", "graded_text": text}


def _bad(status: str, text: str) -> dict[str, Any]:
    return {"status": status, "canonical_key": None, "graded_text": text}


# Cases spelled out in the prose of spec sections 1, 4, 6 and 10 (not in the section-9 list).
PROSE = [
    ("dash-separated", 1, L1, "2-1-1-1-3-2", _ok("211132", "2-1-1-1-3-2")),
    ("coloring-is-prefix", 1, L1, "coloring is 113", _ok("211132", "coloring is 113")),
    ("h0-hello", 1, ALL_FIXED, "hello", _ok("121", "hello")),
    ("h0-zero", 1, ALL_FIXED, "0", _ok("121", "0")),
    ("h0-whitespace-box", 1, ALL_FIXED, "\\boxed{   }", _ok("121", "\\boxed{   }")),
    ("h0-full-form", 1, ALL_FIXED, "121", _ok("121", "121")),
    ("h0-full-form-changes-fixed", 1, ALL_FIXED, "131", _bad("incorrect", "131")),
    # An answer prefix alone leaves an empty candidate: no surface, even when h = 0.
    ("h0-bare-prefix", 1, ALL_FIXED, "Answer:", _bad("malformed", "Answer:")),
    ("permutation-is-distinct", 1, CHAIN, "2121", _ok("2121", "2121")),
    ("angle-bracket-unboxed", 1, L1, "<113>", _bad("malformed", "<113>")),
    ("angle-bracket-boxed", 1, L1, "\\boxed{<113>}", _ok("211132", "\\boxed{<113>}")),
    (
        "last-box-unclosed",
        1,
        L1,
        "\\boxed{113} then \\boxed{2",
        _bad("malformed", "\\boxed{113} then \\boxed{2"),
    ),
    (
        "last-box-wins-incorrect",
        1,
        L1,
        "\\boxed{113} \\boxed{111}",
        _bad("incorrect", "\\boxed{113} \\boxed{111}"),
    ),
    ("nested-braces", 1, L1, "\\boxed{{1}{1}{3}}", _ok("211132", "\\boxed{{1}{1}{3}}")),
    ("padded-graded-text", 1, L1, "  113  ", _ok("211132", "  113  ")),
    (
        "duplicate-and-reversed-edges",
        1,
        {"answer": {"verifier": "graph_coloring", "n": 2, "edges": [[2, 1], [1, 2]]}},
        "11",
        _bad("incorrect", "11"),
    ),
    (
        "empty-edges",
        1,
        {"answer": {"verifier": "graph_coloring", "n": 2, "edges": []}},
        "11",
        _ok("11", "11"),
    ),
    ("string-answer", 1, {"answer": json.dumps(CHAIN["answer"])}, "1212", _ok("1212", "1212")),
]

BAD_REFS = [
    ("n-bool", {"n": True, "edges": []}),
    ("n-float", {"n": 3.0, "edges": []}),
    ("n-missing", {"edges": []}),
    ("edges-missing", {"n": 3}),
    ("edges-object", {"n": 3, "edges": {"a": 1}}),
    ("edge-triple", {"n": 3, "edges": [[1, 2, 3]]}),
    ("edge-string", {"n": 3, "edges": ["12"]}),
    ("edge-bool", {"n": 3, "edges": [[True, 2]]}),
    ("edge-float", {"n": 3, "edges": [[1.0, 2]]}),
    ("edge-zero", {"n": 3, "edges": [[0, 2]]}),
    ("partial-not-list", {"n": 3, "edges": [], "partial_colors": "1?1"}),
    ("partial-true", {"n": 2, "edges": [], "partial_colors": [True, None]}),
    ("partial-float", {"n": 2, "edges": [], "partial_colors": [1.0, None]}),
    ("partial-four", {"n": 2, "edges": [], "partial_colors": [4, None]}),
]


@pytest.mark.parametrize(
    ("level", "ref", "response", "expected"), [p[1:] for p in PROSE], ids=[p[0] for p in PROSE]
)
def test_prose_case(level: int, ref: dict[str, Any], response: str, expected: dict[str, Any]) -> None:
    _check(level, ref, response, expected)


@pytest.mark.parametrize("answer", [b[1] for b in BAD_REFS], ids=[b[0] for b in BAD_REFS])
def test_invalid_reference(answer: dict[str, Any]) -> None:
    got = grade_in_process(1, "graph_coloring", {"answer": {"verifier": "graph_coloring", **answer}}, "12")
    assert got["status"] == "invalid_reference"
    assert got["graded_text"] == "12"
    assert got["detail"].startswith("invalid graph_coloring reference: ")


def test_invalid_reference_details_in_spec_order() -> None:
    def detail(answer: dict[str, Any]) -> str:
        row = {"answer": {"verifier": "graph_coloring", **answer}}
        return grade_in_process(1, "graph_coloring", row, "1")["detail"].removeprefix(
            "invalid graph_coloring reference: "
        )

    assert detail({"n": 0, "edges": "x"}) == "answer.n must be a positive integer"
    assert detail({"n": 2, "edges": "x"}) == "answer.edges must be a list of vertex pairs"
    # Edges are checked one at a time, each fully, before partial_colors.
    assert (
        detail({"n": 2, "edges": [[1, 1], [1]], "partial_colors": [9]})
        == "graph edges must not be self-loops"
    )
    assert detail({"n": 2, "edges": [[1], [1, 1]]}) == "each graph edge must be a pair"
    assert detail({"n": 2, "edges": [[1, 3], [1, 1]]}) == "graph edge endpoints must be integers in 1..n"
    assert detail({"n": 2, "edges": [], "partial_colors": [1]}) == "answer.partial_colors must have n entries"
    assert (
        detail({"n": 2, "edges": [], "partial_colors": [0, 1]})
        == "partial colors must be null or integers 1, 2, 3"
    )
    mismatch = grade_in_process(1, "graph_coloring", {"answer": {"verifier": "countdown"}}, "1")["detail"]
    assert mismatch == "answer.verifier 'countdown' does not match domain 'graph_coloring'"


def test_failure_details() -> None:
    row = _row(L1)
    assert grade_in_process(1, "graph_coloring", row, "\\boxed{}")["detail"] == "invalid response surface"
    assert grade_in_process(1, "graph_coloring", row, "12")["detail"] == "invalid coloring surface"
    assert grade_in_process(1, "graph_coloring", row, "111")["detail"] == "edge or fixed-color violation"
