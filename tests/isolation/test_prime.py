"""The first preflight request sent ahead (``ParallelGrader.prime``): taken when it is the very
request preflight would send, dropped otherwise, and a run's bytes do not change either way."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from modebench import streaming
from modebench.isolation import pool
from modebench.isolation.pool import ParallelGrader
from tests.samples import all_domains, sample_record

RUN = {
    "model": {"id": "m", "revision": "1"},
    "generation": {"temperature": 1.0},
    "prompt_condition": "registered_hints_v1",
}
OTHER_RUN = {**RUN, "generation": {"temperature": 0.5}}


def _lines(count: int, tag: str = "p") -> list[tuple[int, bytes]]:
    domains = all_domains()
    return [
        (
            index + 1,
            (json.dumps(sample_record(index, domains[index % len(domains)], tag)) + "\n").encode("utf-8"),
        )
        for index in range(count)
    ]


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """Every ``prepare`` request a pool sends, in the order sent."""
    requests: list[bytes] = []
    original = ParallelGrader._prepare

    def recording(self: ParallelGrader, data: bytes, expected: int) -> Any:
        requests.append(data)
        return original(self, data, expected)

    monkeypatch.setattr(ParallelGrader, "_prepare", recording)
    return requests


def _prepared(run: dict[str, Any], lines: list[tuple[int, bytes]], primed: Any = None) -> list[Any]:
    with ParallelGrader(1) as grader:
        if primed is not None:
            grader.prime(*primed)
        return list(grader.prepared_lines(run, lines))


def test_primed_request_is_taken_not_sent_again(sent: list[bytes]) -> None:
    lines = _lines(150)
    plain = _prepared(RUN, lines)
    unprimed = list(sent)
    sent.clear()
    primed = _prepared(RUN, lines, (RUN, lines))
    assert primed == plain and all(reply is not None for _, _, reply in primed)
    assert sent == unprimed  # the same requests, each sent once: the first one ahead of time
    assert len(sent) == 2 and sent[0].count(b'\\"responses\\"') == pool.PREPARE_LINES


@pytest.mark.parametrize("changed", ["run", "lines"])
def test_a_primed_request_that_differs_is_dropped(sent: list[bytes], changed: str) -> None:
    lines = _lines(80)
    primed_with = (OTHER_RUN, lines) if changed == "run" else (RUN, _lines(80, tag="q"))
    plain = _prepared(RUN, lines)
    sent.clear()
    assert _prepared(RUN, lines, primed_with) == plain
    assert len(sent) == 3  # the primed request, then preflight's own two


def test_an_evaluation_primes_its_pool_and_keeps_its_bytes(
    tmp_path: Path, sent: list[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "in.jsonl"
    source.write_bytes(b"".join(line for _, line in _lines(100)))
    primed: list[int] = []
    original = ParallelGrader.prime

    def counting(self: ParallelGrader, run: Any, lines: Any) -> None:
        primed.append(1)
        original(self, run, lines)

    monkeypatch.setattr(ParallelGrader, "prime", counting)
    streaming.evaluate_file(source, tmp_path / "a.json", run=RUN)
    assert primed == [1] and len(sent) == len(set(sent)) == 2  # no request sent twice
    monkeypatch.setattr(ParallelGrader, "prime", lambda self, run, lines: None)
    streaming.evaluate_file(source, tmp_path / "b.json", run=RUN)
    journals = [(tmp_path / f"{name}.json.work" / "results.jsonl").read_bytes() for name in "ab"]
    assert journals[0] == journals[1]
