"""All 175 frozen conformance cases of ModeBench 0.4.0, graded in process."""

from __future__ import annotations

from typing import Any

import pytest

from modebench.domains._pipeline import grade_in_process
from tests.reference_data import SKIP_REASON, conformance_fixtures

FIXTURES = conformance_fixtures()
CASES = [
    pytest.param(fixture, case, id=f"{fixture['config']}-{case['name']}")
    for fixture in FIXTURES
    for case in fixture["cases"]
]


@pytest.mark.skipif(not FIXTURES, reason=SKIP_REASON)
def test_corpus_covers_all_cells() -> None:
    assert len(CASES) == 175
    assert len({(f["level"], f["domain"]) for f in FIXTURES}) == 25


@pytest.mark.skipif(not FIXTURES, reason=SKIP_REASON)
@pytest.mark.parametrize(("fixture", "case"), CASES)
def test_conformance_case(fixture: dict[str, Any], case: dict[str, Any]) -> None:
    got = grade_in_process(fixture["level"], fixture["domain"], fixture["row"], case["response"])
    expected = case["expected"]
    assert (got["verified"], got["canonical_key"], got["graded_text"]) == (
        expected["verified"],
        expected["canonical_key"],
        expected["graded_text"],
    ), got


@pytest.mark.skipif(not FIXTURES, reason=SKIP_REASON)
@pytest.mark.parametrize("fixture", FIXTURES, ids=[f["config"] for f in FIXTURES])
def test_witnesses_verify(fixture: dict[str, Any]) -> None:
    keys = set()
    for witness in fixture["witnesses"]:
        got = grade_in_process(fixture["level"], fixture["domain"], fixture["row"], witness["response"])
        assert got["status"] == "correct", got
        keys.add(got["canonical_key"])
    assert len(keys) == len(fixture["witnesses"])


@pytest.mark.skipif(not FIXTURES, reason=SKIP_REASON)
def test_worker_batches_agree_with_in_process_grading() -> None:
    """The isolation boundary and batching change nothing: one batch per fixture, all 25 cells."""
    from modebench.worker_process import BoundedWorker

    with BoundedWorker() as worker:
        for fixture in FIXTURES:
            texts = [case["response"] for case in fixture["cases"]] + [
                w["response"] for w in fixture["witnesses"]
            ]
            batch = worker.grade_batch(fixture["level"], fixture["domain"], fixture["row"]["answer"], texts)
            local = [grade_in_process(fixture["level"], fixture["domain"], fixture["row"], t) for t in texts]
            assert batch == local, fixture["config"]
