"""Status fidelity at two limits of the reference's worker, replayed from recorded 0.4.0 verdicts.

``edge_cases.json`` is written by ``ops/fidelity/record_edge_cases.py`` from ModeBench 0.4.0 itself:

* Countdown expressions at the depth where the reference's recursive evaluation (or its
  ``ast.parse``, or CPython's parser) gives up, one below and one above, for flat and nested
  chains of every operator;
* for every domain and level, ~131,072-character responses of one JSON-escaped character that
  straddle the 262,144-byte reply cap.

Every case is graded by the worker's own code in this process (both request kinds, on a deep
stack, so the caller's depth cannot matter), and a sample of each family through real worker
processes on both the single-request and the batched pool path.
"""

from __future__ import annotations

import json
import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from modebench import verifier_worker
from modebench.diagnostics import UNSCORABLE
from modebench.domains._pipeline import encode_answer, parent_precheck
from modebench.isolation.protocol import decode_line, item_line, item_reply
from modebench.parallel import grade_prompts
from modebench.verifier import grade_with_worker
from modebench.worker_process import BoundedWorker
from tests.reference_data import SKIP_REASON, conformance_fixtures

DOCUMENT = json.loads(Path(__file__).with_name("edge_cases.json").read_text("utf-8"))
CASES: list[dict[str, Any]] = DOCUMENT["cases"]
FIXTURE_ROWS = {(f["config"], f["split"], f["row_index"]): f["row"] for f in conformance_fixtures()}
#: Frames stacked under the in-process replay: deeper than any caller the reference had.
EXTRA_DEPTH = 600
#: Deadline of the in-process replay: generous, so that load cannot decide a verdict.
REPLAY_DEADLINE_SECONDS = 120.0


def _row(ref: dict[str, Any]) -> dict[str, Any]:
    if "fixture" in ref:
        found: dict[str, Any] | None = FIXTURE_ROWS.get((ref["fixture"], ref["split"], ref["row_index"]))
        if found is None:
            pytest.skip(SKIP_REASON)
        return found
    return {"answer": ref["answer"]}


def _response(spec: Any) -> str:
    if isinstance(spec, str):
        return spec
    return str(spec.get("prefix", "") + spec["repeat"] * spec["times"] + spec.get("suffix", ""))


def _want(case: dict[str, Any], text: str) -> tuple[Any, ...]:
    expected = case["expected"]
    shown = text if expected["graded_text"] == {"same_as_response": True} else expected["graded_text"]
    return expected["status"], expected["canonical_key"], shown, expected["detail"]


def _got(reply: dict[str, Any]) -> tuple[Any, ...]:
    assert reply["verified"] == (reply["status"] == "correct")
    return reply["status"], reply["canonical_key"], reply["graded_text"], reply["detail"]


def _deep(frames: int, action: Callable[[], Any]) -> Any:
    return action() if frames == 0 else _deep(frames - 1, action)


@contextmanager
def _worker_signals() -> Iterator[None]:
    """The worker's deadline handler and warm-up, as ``verifier_worker.main`` does them."""
    verifier_worker._warm_up()  # imports (SymPy…) never run under a grading deadline
    previous = signal.signal(signal.SIGALRM, verifier_worker._on_alarm)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _in_worker_code(case: dict[str, Any], text: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """A ``grade`` request and a one-item ``groups`` request, handled by the worker's code."""
    level, domain, answer = case["level"], case["domain"], _row(case["ref"])["answer"]
    early = parent_precheck(level, domain, {"answer": answer}, text)
    if early is not None:
        return early, early
    verifier_worker._deadline_for("grade", domain)  # warms the domain, as the worker does
    # The verdict at depth is under test here, not the deadline: no recorded case is a timeout,
    # and a busy machine must not turn a slow parse into one (the worker processes below keep
    # the real deadlines).
    seconds = REPLAY_DEADLINE_SECONDS
    single = verifier_worker._guarded(seconds, verifier_worker._grade, level, domain, answer, text)
    grade = verifier_worker._group_grader(level, domain, encode_answer(answer))
    compact = item_line(verifier_worker._guarded(seconds, grade, text), text)
    return single, item_reply(decode_line(compact), text)


def test_recorded_from_the_reference() -> None:
    assert DOCUMENT["reference"]["modebench"] == "0.4.0"
    families = {case["id"].split("/")[0] for case in CASES}
    assert families == {"depth", "reply_cap"}
    # Both sides of each limit are present: the data straddles what it claims to.
    statuses = {case["expected"]["status"] for case in CASES}
    assert {"correct", "incorrect", "malformed", "worker_failure", "resource_limit"} <= statuses
    assert {case["domain"] for case in CASES if case["id"].startswith("reply_cap")} == {
        "countdown",
        "graph_coloring",
        "mathir",
        "pantry_plan",
        "python_factors",
    }


@pytest.mark.parametrize("case", CASES, ids=[case["id"] for case in CASES])
def test_worker_code_agrees_at_any_stack_depth(case: dict[str, Any]) -> None:
    text = _response(case["response"])
    with _worker_signals():
        single, batched = _deep(EXTRA_DEPTH, lambda: _in_worker_code(case, text))
    assert _got(single) == _want(case, text)
    assert _got(batched) == _want(case, text)
    assert sys.getrecursionlimit() == 1000 or sys.getrecursionlimit() > EXTRA_DEPTH  # left as found


def _sample() -> list[dict[str, Any]]:
    """Every scorable case (cheap: the worker lives on) and one failure per family and domain
    (each failure costs a worker restart)."""
    chosen, seen = [], set()
    for case in CASES:
        family = (case["id"].split("/")[0], case["domain"], case["expected"]["status"])
        if case["expected"]["status"] not in UNSCORABLE or family not in seen:
            chosen.append(case)
            seen.add(family)
    return chosen


@pytest.mark.slow  # starts a worker process per failure case
def test_worker_processes_agree_on_both_paths() -> None:
    sample = _sample()
    texts = [_response(case["response"]) for case in sample]
    with BoundedWorker() as worker:
        single = [
            grade_with_worker(worker, case["level"], case["domain"], _row(case["ref"]), text)
            for case, text in zip(sample, texts)
        ]
        prepared = [
            {
                "level": case["level"],
                "domain": case["domain"],
                "row": _row(case["ref"]),
                "raw": {"responses": [text]},
            }
            for case, text in zip(sample, texts)
        ]
        pooled = [attempts[0] for attempts in grade_prompts(worker, prepared)]
    for case, text, one, pool in zip(sample, texts, single, pooled):
        assert _got(one) == _want(case, text), case["id"]
        assert _got(pool) == _want(case, text), case["id"]
