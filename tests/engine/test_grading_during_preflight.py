"""Grading while preflight runs (``docs/performance.md``): the contract of a sequential run holds.

A local pool grades prompts as preflight stores them. These tests prove that this is invisible:
a line refused late in the input, after prompts were graded, fails the run with the same error
and exit status as a sequential run and leaves no receipt, no checkpoint and no ledger rows; a run
killed while preflight and grading overlap resumes from the start to the same receipt and journal;
the progress stream keeps its phase order.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from modebench.isolation import pool
from modebench.streaming import evaluate_file
from modebench.validation import InputError
from tests.opaque_grader import OpaqueLocalGrader

SRC = Path(__file__).resolve().parents[2] / "src"
COUNTDOWN = {"verifier": "countdown", "numbers": [1, 2, 3], "target": 6}
RUN = {
    "model": {"id": "m", "revision": "r"},
    "generation": {"temperature": 0.7},
    "prompt_condition": "registered_hints_v1",
}
PROMPTS = 400  # chunks of 16, 32, then 64: the window (2 chunks per worker) fills long before the end


def _record(ident: str) -> dict[str, Any]:
    return {
        "id": ident,
        "level": 1,
        "domain": "countdown",
        "answer": COUNTDOWN,
        "responses": ["1+2+3", "3*2*1", "bad", ident],
    }


def _write(path: Path, lines: Iterable[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def _good_lines(count: int = PROMPTS) -> list[str]:
    return [json.dumps(_record(f"p{i}")) for i in range(count)]


#: Late refusals of several kinds: a record check, a duplicate prompt, a line that is not JSON.
LATE = {
    "record": json.dumps({**_record("late"), "responses": "not a list"}),
    "duplicate": json.dumps(_record("p7")),
    "json": "{not json",
}


#: The same local pool, but not a ``ParallelGrader``: the engine grades after preflight.
_Sequential = OpaqueLocalGrader


@pytest.fixture
def graded_early(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Sequence numbers graded by the overlapping feed, in the order it handed them back."""
    seen: list[int] = []
    original = pool.OrderedResults.put

    def put(self: pool.OrderedResults, seq: int, prepared: dict[str, Any]) -> list[Any]:
        out = original(self, seq, prepared)
        seen.extend(item[0] for item in out)
        return out

    monkeypatch.setattr(pool.OrderedResults, "put", put)
    return seen


@pytest.mark.parametrize("kind", sorted(LATE))
def test_late_refused_line_fails_as_a_sequential_run(
    tmp_path: Path, kind: str, graded_early: list[int]
) -> None:
    source = _write(tmp_path / "in.jsonl", [*_good_lines(), LATE[kind]])
    with pytest.raises(InputError) as overlapped:
        evaluate_file(source, tmp_path / "o.json", run=RUN)
    # Prompts were graded (and committed) before the refused line was reached ...
    assert graded_early[:3] == [0, 1, 2] and len(graded_early) >= 2 * pool.CHUNK_PROMPTS
    # ... and the run failed exactly as a sequential one does, leaving nothing behind.
    assert not (tmp_path / "o.json").exists()
    assert not (tmp_path / "o.json.work").exists()
    with _Sequential() as sequential, pytest.raises(InputError) as reference:
        evaluate_file(source, tmp_path / "s.json", run=RUN, grader=sequential)
    assert str(overlapped.value) == str(reference.value)
    assert f"line {PROMPTS + 1}" in str(overlapped.value)
    assert not (tmp_path / "s.json").exists() and not (tmp_path / "s.json.work").exists()
    # The corrected input then runs from scratch (no checkpoint was left to refuse it).
    _write(source, _good_lines())
    summary = evaluate_file(source, tmp_path / "o.json", run=RUN)
    assert summary["status"] == "completed" and summary["prompts"] == PROMPTS


def test_late_refused_line_exit_status_and_message(tmp_path: Path) -> None:
    source = _write(tmp_path / "in.jsonl", [*_good_lines(), LATE["record"]])
    run = _write(tmp_path / "run.json", [json.dumps(RUN)])
    done = subprocess.run(
        [sys.executable, "-m", "modebench", "evaluate", str(source), "--run", str(run)]
        + ["--output", str(tmp_path / "o.json")],
        env=dict(os.environ, PYTHONPATH=str(SRC)),
        capture_output=True,
        text=True,
        timeout=300,
    )
    with _Sequential() as sequential, pytest.raises(InputError) as reference:
        evaluate_file(source, tmp_path / "s.json", run=RUN, grader=sequential)
    assert done.returncode == 2
    assert str(reference.value) in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "o.json").exists() and not (tmp_path / "o.json.work").exists()


def test_binding_error_after_graded_prompts_discards_them(tmp_path: Path, graded_early: list[int]) -> None:
    # A prompt-binding error (Phase C) is raised only after the whole input passed Phases A and B.
    late = json.dumps({**_record("late"), "prompt_sha256": "0" * 64})
    source = _write(tmp_path / "in.jsonl", [*_good_lines(), late])
    with pytest.raises(InputError) as overlapped:
        evaluate_file(source, tmp_path / "o.json", run=RUN)
    assert graded_early
    assert not (tmp_path / "o.json").exists() and not (tmp_path / "o.json.work").exists()
    with _Sequential() as sequential, pytest.raises(InputError) as reference:
        evaluate_file(source, tmp_path / "s.json", run=RUN, grader=sequential)
    assert str(overlapped.value) == str(reference.value)


def _journal(output: Path) -> bytes:
    return (output.parent / (output.name + ".work") / "results.jsonl").read_bytes()


def _masked(output: Path) -> dict[str, Any]:
    receipt = json.loads(output.read_text(encoding="utf-8"))
    for key in ("created_at", "execution", "software"):
        receipt.pop(key)
    receipt["prompt_results"].pop("path")
    return receipt


def test_kill_while_preflight_and_grading_overlap_resumes_from_the_start(
    tmp_path: Path, graded_early: list[int]
) -> None:
    source = _write(tmp_path / "in.jsonl", _good_lines())
    with _Sequential() as sequential:
        evaluate_file(source, tmp_path / "clean.json", run=RUN, grader=sequential)

    journal = tmp_path / "o.json.work" / "results.jsonl"

    def stop(event: dict[str, Any]) -> None:
        # Killed while still validating, once graded results have reached the journal.
        if event["phase"] == "validating" and journal.is_file() and journal.stat().st_size > 0:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        evaluate_file(source, tmp_path / "o.json", run=RUN, progress=stop)
    assert graded_early  # results were in the ledger and the journal when the kill came
    work = tmp_path / "o.json.work"
    assert (work / "ledger.sqlite3").is_file() and (work / "results.jsonl").stat().st_size > 0
    events: list[dict[str, Any]] = []
    evaluate_file(source, tmp_path / "o.json", run=RUN, resume=True, progress=events.append)
    receipt = json.loads((tmp_path / "o.json").read_text(encoding="utf-8"))
    # Killed in preflight: nothing counted as resumed, the journal rebuilt from the start.
    assert [entry["resumed_prompts"] for entry in receipt["execution"]["history"]] == [0]
    assert _masked(tmp_path / "o.json") == _masked(tmp_path / "clean.json")
    assert _journal(tmp_path / "o.json") == _journal(tmp_path / "clean.json")
    phases = [event["phase"] for event in events]
    firsts = [phase for i, phase in enumerate(phases) if i == 0 or phase != phases[i - 1]]
    assert firsts == ["validating", "validated", "grading", "finalizing", "complete"]
    grading = [event["completed_prompts"] for event in events if event["phase"] == "grading"]
    assert grading == list(range(PROMPTS + 1))  # one event per prompt, as a sequential run gives


@pytest.mark.parametrize("workers", [1, 2])
def test_overlapped_run_matches_sequential_bytes(
    tmp_path: Path, workers: int, graded_early: list[int]
) -> None:
    source = _write(tmp_path / "in.jsonl", _good_lines())
    evaluate_file(source, tmp_path / "o.json", run=RUN, workers=workers)
    assert graded_early
    with _Sequential(workers) as sequential:
        evaluate_file(source, tmp_path / "s.json", run=RUN, grader=sequential)
    assert _masked(tmp_path / "o.json") == _masked(tmp_path / "s.json")
    assert _journal(tmp_path / "o.json") == _journal(tmp_path / "s.json")
