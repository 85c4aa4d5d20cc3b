"""0.4.0's call-time hooks (◆ in ``api.md`` §4): a caller that replaces one of these module
attributes (``monkeypatch.setattr``) changes what the code does, as in 0.4.0.

``dataset_cache.urlopen``, ``MAX_DOWNLOAD_BYTES`` and ``DOWNLOAD_TIMEOUT_SECONDS`` are covered by
``tests/data/test_fetch.py``; every other ◆ name is here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from modebench import evaluation, parallel, streaming, verifier_worker
from modebench.validation import InputError

ANSWER = {"verifier": "countdown", "numbers": [3, 6, 9], "target": 18}
RECORD = {"id": 1, "level": 1, "domain": "countdown", "answer": ANSWER, "responses": ["\\boxed{3+6+9}"]}


def _input(tmp_path: Path) -> Path:
    path = tmp_path / "in.jsonl"
    path.write_text(json.dumps(RECORD) + "\n", encoding="utf-8")
    return path


def _statuses(receipt: Path) -> dict[str, int]:
    counts: dict[str, int] = json.loads(receipt.read_text(encoding="utf-8"))["evaluation"]["status_counts"]
    return counts


def _patched_grade(calls: list[str]) -> Any:
    def grade_response(level: Any, domain: Any, row: Any, text: str) -> dict[str, Any]:
        calls.append(text)
        return {
            "status": "incorrect",
            "verified": False,
            "canonical_key": None,
            "graded_text": text,
            "detail": "patched",
        }

    return grade_response


def test_evaluate_grades_through_a_replaced_grade_response(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    monkeypatch.setattr(evaluation, "grade_response", _patched_grade(calls))
    result = evaluation.evaluate([RECORD], min_defined_prompts=1)
    attempt = result["cells"][0]["prompt_results"][0]["draws"][0]["attempts"][0]
    assert (attempt["status"], attempt["detail"], calls) == ("incorrect", "patched", ["\\boxed{3+6+9}"])


@pytest.mark.parametrize("hook", ["grade_response", "grade_prepared"])
def test_evaluate_file_grades_through_a_replaced_hook(
    hook: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []
    if hook == "grade_response":
        monkeypatch.setattr(evaluation, "grade_response", _patched_grade(calls))
    else:
        original = evaluation.grade_prepared

        def grade_prepared(prepared: Any, grader: Any = None) -> dict[str, Any]:
            calls.append(prepared["id"])
            return original(prepared, lambda item: [_patched_grade([])(1, "", {}, "replaced")])

        monkeypatch.setattr(evaluation, "grade_prepared", grade_prepared)
    out = tmp_path / "out.json"
    summary = streaming.evaluate_file(_input(tmp_path), out, min_defined_prompts=1)
    assert summary["status"] == "completed"
    assert len(calls) == 1
    assert _statuses(out) == {"incorrect": 1}  # the replacement's verdict, not the verifier's


def test_without_a_replacement_evaluate_file_grades_as_usual(tmp_path: Path) -> None:
    assert evaluation.replaced_hooks() == frozenset()
    out = tmp_path / "out.json"
    streaming.evaluate_file(_input(tmp_path), out, min_defined_prompts=1)
    assert _statuses(out) == {"correct": 1}


def _refuse(level: Any, domain: Any, answer: Any) -> dict[str, Any]:
    raise ValueError("patched reference failure")


def test_evaluate_validates_references_through_a_replaced_validate_reference(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(evaluation, "validate_reference", _refuse)
    assert evaluation.replaced_hooks() == frozenset({"validate_reference"})
    with pytest.raises(InputError) as caught:
        evaluation.evaluate([RECORD], min_defined_prompts=1)
    assert str(caught.value) == "record 1, prompt '1': patched reference failure"


@pytest.mark.parametrize("workers", [1, 2])
def test_evaluate_file_validates_references_through_a_replaced_validate_reference(
    workers: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(evaluation, "validate_reference", _refuse)
    with pytest.raises(InputError) as caught:
        streaming.evaluate_file(
            _input(tmp_path), tmp_path / "out.json", min_defined_prompts=1, workers=workers
        )
    assert str(caught.value) == "line 1, prompt '1': patched reference failure"


def test_the_replacement_s_answer_is_the_reference_graded_against(monkeypatch: pytest.MonkeyPatch) -> None:
    """0.4.0 grades against what ``validate_reference`` returns (here a different target)."""
    monkeypatch.setattr(
        evaluation, "validate_reference", lambda level, domain, answer: {**ANSWER, "target": 99}
    )
    result = evaluation.evaluate([RECORD], min_defined_prompts=1)
    assert result["cells"][0]["prompt_results"][0]["draws"][0]["attempts"][0]["status"] == "incorrect"


def test_evaluate_file_records_a_replaced_software_identity(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(streaming, "software_identity", lambda: {"name": "patched-software"})
    out = tmp_path / "out.json"
    streaming.evaluate_file(_input(tmp_path), out, min_defined_prompts=1)
    assert "patched-software" in out.read_text(encoding="utf-8")


def test_parallel_grading_starts_a_replaced_bounded_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[int] = []
    original = parallel.BoundedWorker

    class Counted(original):  # type: ignore[misc, valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            started.append(1)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(parallel, "BoundedWorker", Counted)
    out = tmp_path / "out.json"
    streaming.evaluate_file(_input(tmp_path), out, min_defined_prompts=1, workers=2)
    assert started and _statuses(out) == {"correct": 1}


def test_guarded_handle_calls_a_replaced_handle_under_its_guard(monkeypatch: pytest.MonkeyPatch) -> None:
    request = {"operation": "grade", "level": 1, "domain": "countdown", "answer": ANSWER, "text": "x"}
    assert verifier_worker.guarded_handle(request)["status"] == "malformed"  # our own step
    reply = {
        "status": "incorrect",
        "verified": False,
        "canonical_key": None,
        "graded_text": "x",
        "detail": "hook",
    }
    monkeypatch.setattr(verifier_worker, "handle", lambda found: reply)
    assert verifier_worker.guarded_handle(request) is reply

    def boom(found: Any) -> Any:
        raise RuntimeError("boom")

    monkeypatch.setattr(verifier_worker, "handle", boom)
    assert verifier_worker.guarded_handle(request) == {
        "status": "worker_failure",
        "verified": False,
        "canonical_key": None,
        "graded_text": "",
        "detail": "unexpected RuntimeError",
    }
