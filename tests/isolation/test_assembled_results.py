"""Results assembled on the workers (``modebench.isolation.assemble``) are the parent's, byte for byte.

The engine's local pool sends stored prompts in ``prompts`` requests and takes each prompt's
journal line, packed result and tally from the worker. These runs compare that path with the
``groups`` path (the same pool behind a grader that is not a ``ParallelGrader``, so the parent
plans, assembles and tallies every prompt itself) on what can go wrong inside a request: a worker
that exits, answers garbage, answers over the reply cap, runs out of memory or past its deadline in
the middle of a chunk, results over the reply cap (the worker answers ``N``), a prompt with no
text to send, and the policy that counts unscorable attempts as incorrect.
"""

from __future__ import annotations

import base64
import json
import zlib
from pathlib import Path
from typing import Any

import pytest

from modebench.diagnostics import MAX_RESPONSE_CHARS
from modebench.isolation import assemble, pool
from modebench.streaming import evaluate_file
from modebench.verifier_worker import FAULT_BY_TEXT, FAULT_ENV, FAULT_TEXT
from tests.opaque_grader import OpaqueLocalGrader

COUNTDOWN = {"verifier": "countdown", "numbers": [1, 2, 3], "target": 6}
RUN = {
    "model": {"id": "m", "revision": "r"},
    "generation": {"temperature": 0.7},
    "prompt_condition": "registered_hints_v1",
}


def _record(ident: str, responses: list[str]) -> dict[str, Any]:
    return {"id": ident, "level": 1, "domain": "countdown", "answer": COUNTDOWN, "responses": responses}


def _input(path: Path, special: dict[int, list[str]], prompts: int = 40) -> Path:
    lines = [
        json.dumps(_record(f"p{i}", special.get(i, ["1+2+3", "3*2*1", "bad", f"{i}", "1+2+3"])))
        for i in range(prompts)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


#: The local pool behind a grader the engine does not recognise: the parent assembles.
_GroupsPath = OpaqueLocalGrader


@pytest.fixture
def outcomes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """How each prompt of the assembled path was finished: ``A`` (worker) or ``P`` (parent)."""
    seen: list[str] = []
    monkeypatch.setattr(pool.OrderedResults, "BALANCE", False)  # every chunk offered to the worker
    original = pool.PromptsChunk.grade

    def grade(self: pool.PromptsChunk, worker: Any) -> list[Any]:
        out = original(self, worker)
        seen.extend("A" if isinstance(item, assemble.Assembled) else "P" for item in out)
        return out

    monkeypatch.setattr(pool.PromptsChunk, "grade", grade)
    return seen


def _both(tmp_path: Path, source: Path, **options: Any) -> tuple[Path, Path]:
    ours, theirs = tmp_path / "assembled.json", tmp_path / "groups.json"
    evaluate_file(source, ours, run=RUN, **options)
    with _GroupsPath() as grader:
        evaluate_file(source, theirs, run=RUN, grader=grader, **options)
    return ours, theirs


def _same(ours: Path, theirs: Path) -> dict[str, Any]:
    def masked(path: Path) -> dict[str, Any]:
        receipt = json.loads(path.read_text(encoding="utf-8"))
        for key in ("created_at", "execution", "software"):
            receipt.pop(key)
        receipt["prompt_results"].pop("path")
        return receipt

    assert masked(ours) == masked(theirs)
    journal = ours.parent / (ours.name + ".work") / "results.jsonl"
    assert journal.read_bytes() == (theirs.parent / (theirs.name + ".work") / "results.jsonl").read_bytes()
    return masked(ours)


@pytest.mark.parametrize("kind", ["exit", "garbage", "oversize", "memory"])
def test_a_worker_failing_mid_chunk_is_reported_as_on_the_groups_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str, outcomes: list[str]
) -> None:
    monkeypatch.setenv(FAULT_ENV, FAULT_BY_TEXT)
    # Prompt 20 sits in the middle of the second chunk (16 prompts, then twice as many); its
    # third text kills the worker.
    first = pool.CHUNK_PROMPTS
    second = first + min(2 * first, pool.MAX_CHUNK_PROMPTS)
    assert first < 20 < second
    source = _input(
        tmp_path / "in.jsonl", {20: ["1+2+3", "bad", FAULT_TEXT + kind, "3*2*1"]}, prompts=second + 8
    )
    receipt = _same(*_both(tmp_path, source))
    assert receipt["evaluation"]["status"] == "failed"  # the unscorable attempt is there, as before
    # Replies still in the dead worker's buffer are lost: those prompts are graded again.
    assert outcomes[:first] == ["A"] * first
    assert outcomes[20:second] == ["P"] * (second - 20) and outcomes[second:] == ["A"] * 8


def test_a_deadline_missed_mid_chunk_is_reported_as_on_the_groups_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, outcomes: list[str]
) -> None:
    monkeypatch.setenv(FAULT_ENV, FAULT_BY_TEXT)
    source = _input(tmp_path / "in.jsonl", {5: ["1+2+3", FAULT_TEXT + "slow", "3*2*1"]}, prompts=10)
    receipt = _same(*_both(tmp_path, source))
    assert receipt["evaluation"]["status_counts"]["timeout"] == 1
    assert outcomes[:5] == ["A"] * 5 and outcomes[5:] == ["P"] * 5


def test_results_over_the_reply_cap_are_assembled_by_the_parent(tmp_path: Path, outcomes: list[str]) -> None:
    # Eight distinct malformed texts of 40,000 characters: the journal line exceeds a reply line.
    big = [f"{index}" + "x" * 40_000 for index in range(8)]
    too_long = ["y" * (MAX_RESPONSE_CHARS + 1), "1+2+3"]  # caught before sending, as by the parent
    source = _input(tmp_path / "in.jsonl", {3: big, 7: too_long, 9: [FAULT_TEXT * 0]}, prompts=12)
    _same(*_both(tmp_path, source))
    assert outcomes[3] == "P" and outcomes.count("P") == 1 and len(outcomes) == 12


def test_counted_policy_is_applied_on_the_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, outcomes: list[str]
) -> None:
    monkeypatch.setenv(FAULT_ENV, FAULT_BY_TEXT)
    # A memory bomb: resource_limit, which this policy scores as incorrect.
    source = _input(tmp_path / "in.jsonl", {2: ["1+2+3", FAULT_TEXT + "memory"]}, prompts=20)
    receipt = _same(*_both(tmp_path, source, unscorable="count-as-incorrect"))
    assert receipt["evaluation"]["counted_as_incorrect"] == {"resource_limit": 1}
    # The rest of a failed request goes the groups way; the next request is assembled again.
    assert outcomes[2:16] == ["P"] * 14 and outcomes[16:] == ["A"] * 4
    assert receipt["evaluation"]["status"] == "completed"


def test_balanced_single_worker_run_is_byte_identical(tmp_path: Path) -> None:
    # One worker: chunks go to whichever side is free (OrderedResults.BALANCE); same bytes.
    source = _input(tmp_path / "in.jsonl", {}, prompts=300)
    _same(*_both(tmp_path, source))


def test_assembled_line_round_trip() -> None:
    prepared_json = json.dumps(
        {
            "binding": {"prompt_profile": None, "prompt_sha256": None, "reference_sha256": "r"},
            "domain": "countdown",
            "id": "p",
            "level": 1,
            "raw": {"responses": ["a", "a"]},
            "record_sha256": "0" * 64,
            "row": {"answer": COUNTDOWN},
        }
    )
    prepared = json.loads(prepared_json)
    plan = assemble.Plan(prepared)
    texts = list(plan.pending)
    reply = {
        "status": "malformed",
        "verified": False,
        "canonical_key": None,
        "graded_text": "a",
        "detail": "x",
    }
    line = assemble.assembled_reply(4, prepared, plan, texts, [reply], "fail-run")
    parsed = assemble.parse_assembled(line)
    result = json.loads(zlib.decompress(parsed.packed))
    assert parsed.line.endswith(
        ',"schema":"modebench-prompt-result-v1","sequence":4}\n'
    ) or parsed.line.endswith('"sequence":4}\n')
    assert f'"result":{json.dumps(result, sort_keys=True, separators=(",", ":"))}' in parsed.line
    assert [attempt["status"] for attempt in result["draws"][0]["attempts"]] == ["malformed", "malformed"]
    assert parsed.status_counts == {"malformed": 2} and parsed.cell == (1, "countdown", 2)
    assert (parsed.accuracy, parsed.pass_at_k, parsed.distinct_at_k, parsed.pcmd) == (0.0, 0.0, 0, None)
    with pytest.raises(ValueError):
        assemble.parse_assembled(b"A[1]\t{}\n")
    assert base64.b64encode(parsed.packed)  # the ledger's bytes, as set_result packs them


def test_a_replaced_worker_command_goes_the_groups_way(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, outcomes: list[str]
) -> None:
    # 0.4.0's tests replace BoundedWorker.worker_command; such a worker is spoken to as 0.4.0 spoke
    # (modebench.isolation.process): no prompts request is sent to it, the parent assembles.
    from modebench.isolation import process

    source = _input(tmp_path / "in.jsonl", {}, prompts=20)
    evaluate_file(source, tmp_path / "plain.json", run=RUN)
    plain = outcomes[:]
    outcomes.clear()
    monkeypatch.setattr(
        process.BoundedWorker, "worker_command", lambda self: process.worker_command(self.module)
    )
    evaluate_file(source, tmp_path / "replaced.json", run=RUN)
    assert plain == ["A"] * 20 and outcomes == ["P"] * 20
    _same(tmp_path / "replaced.json", tmp_path / "plain.json")
