"""Preflight on the workers (``modebench.isolation.prepare``): the worker's prepared record is the parent's,
anything else is left to the parent, and a run's receipt, journal and errors do not change."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from modebench import streaming
from modebench.api_types import EvaluationOptions
from modebench.backends import unprepared
from modebench.engine import preflight as engine_preflight
from modebench.evaluation import Preflight
from modebench.identity import canonical, sha256_text
from modebench.isolation import prepare as _prepare
from modebench.parallel import ParallelGrader
from modebench.validation import InputError
from modebench.worker_process import BoundedWorker
from tests.samples import all_domains, sample_record

RUN = {
    "model": {"id": "m", "revision": "1"},
    "generation": {"temperature": 1.0},
    "prompt_condition": "registered_hints_v1",
}


def _in_process(number: int, record: dict[str, Any], run: dict[str, Any] | None) -> str:
    """The prepared text the parent's own path stores for ``record``."""
    with ParallelGrader(1) as grader:
        preflight = Preflight(EvaluationOptions(run=run), validate=grader.reference_check)
        prepared = preflight.accept(record, f"line {number}")
        raw_text = canonical(record)
        bound = preflight.bind(prepared)
        bound["record_sha256"] = sha256_text(raw_text)
        return streaming.prepared_text(bound, raw_text)


def test_worker_prepares_what_the_parent_would() -> None:
    records = [sample_record(index, domain) for index, domain in enumerate(all_domains())]
    lines = [(index + 1, json.dumps(record)) for index, record in enumerate(records)]
    with BoundedWorker() as worker:
        replies = worker.lines(_prepare.request_line(RUN, lines), len(lines), decode=_prepare.prepared_reply)
    assert replies is not None
    for (number, _), record, reply in zip(lines, records, replies):
        level, domain, rid, k, text, start, end = reply
        assert (level, domain, rid, k) == (1, record["domain"], record["id"], 2)
        assert text == _in_process(number, record, RUN)
        assert text[start:end] == canonical(record)


@pytest.mark.parametrize(
    "line",
    [
        "{not json",  # the parent reports the decoder's message
        json.dumps(sample_record(0, "countdown", run=RUN)),  # an inline run changes the parent's run state
        json.dumps({**sample_record(0, "countdown"), "answer": {"nonsense": True}}),  # refused reference
        json.dumps({**sample_record(0, "countdown"), "extra": 1}),  # unknown field
        json.dumps({**sample_record(0, "countdown"), "prompt_sha256": "0" * 64}),  # binding error
        "[1, 2]",
    ],
)
def test_worker_leaves_the_rest_to_the_parent(line: str) -> None:
    with BoundedWorker() as worker:
        replies = worker.lines(_prepare.request_line(RUN, [(1, line)]), 1, decode=_prepare.prepared_reply)
    assert replies == [None]


def _write(path: Path, records: list[Any]) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records))
    return path


def test_clean_input_is_prepared_on_the_workers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    decoded = engine_preflight.decoded

    def counting(number: int, line: bytes) -> Any:
        calls.append(number)
        return decoded(number, line)

    monkeypatch.setattr(engine_preflight, "decoded", counting)
    source = _write(tmp_path / "in.jsonl", [sample_record(i, d) for i, d in enumerate(all_domains() * 3)])
    summary = streaming.evaluate_file(source, tmp_path / "out.json", run=RUN, workers=2)
    assert summary["prompts"] == 15
    assert calls == []  # no line needed the in-process path


def _error(tmp_path: Path, records: list[Any], workers: int) -> str:
    source = _write(tmp_path / f"in-{workers}.jsonl", records)
    with pytest.raises(InputError) as caught:
        streaming.evaluate_file(source, tmp_path / f"out-{workers}.json", run=RUN, workers=workers)
    assert not (tmp_path / f"out-{workers}.json.work").exists()  # nothing left behind
    return str(caught.value)


@pytest.mark.parametrize(
    ("records", "expected"),
    [
        # The first error in input order wins, whichever worker prepared the later lines.
        ([sample_record(0, "countdown"), sample_record(0, "countdown"), "{broken"], "duplicate prompt"),
        ([sample_record(0, "countdown"), "{broken", sample_record(0, "countdown")], "line 2: invalid JSON"),
        ([sample_record(0, "countdown"), {**sample_record(1, "mathir"), "answer": {"x": 1}}], "line 2"),
        # A binding error is raised only after the whole input passed Phases A and B.
        (
            [{**sample_record(0, "countdown"), "prompt_sha256": "0" * 64}, sample_record(0, "countdown")],
            "duplicate",
        ),
    ],
)
def test_errors_are_the_in_process_errors(
    tmp_path: Path, records: list[Any], expected: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    messages = {_error(tmp_path, records, workers) for workers in (1, 2)}
    # the parent preflights every line, as with a back end whose workers do not prepare lines
    monkeypatch.setattr(ParallelGrader, "prepared_lines", lambda self, run, lines: unprepared(lines))
    (tmp_path / "in-1.jsonl").unlink()
    messages.add(_error(tmp_path, records, 1))
    assert len(messages) == 1
    assert expected in messages.pop()


@pytest.mark.parametrize("fault", ["slow", "memory", "exit"])
def test_a_hostile_reference_is_contained_in_the_worker(fault: str) -> None:
    """A reference that times out, exhausts memory or kills the worker costs that worker only:
    the parent gets no replies (and prepares those lines itself), the next request a fresh one."""
    from modebench.verifier_worker import FAULT_ENV, FAULT_TEXT

    hostile = json.dumps({**sample_record(0, "countdown"), "answer": FAULT_TEXT})
    clean = json.dumps(sample_record(1, "countdown"))
    with BoundedWorker(env={**os.environ, FAULT_ENV: fault}) as worker:
        assert (
            worker.lines(
                _prepare.request_line(RUN, [(1, clean), (2, hostile), (3, clean)]),
                3,
                decode=_prepare.prepared_reply,
            )
            is None
        )
        replies = worker.lines(_prepare.request_line(RUN, [(1, clean)]), 1, decode=_prepare.prepared_reply)
        assert replies is not None and replies[0] is not None
        assert worker.starts == 2
