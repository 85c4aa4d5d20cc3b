"""The recorder and bank state in a checkpoint directory (``modebench.rl.checkpoint``), the
``RolloutBank`` persistence protocol, evaluation rows kept apart, and the cross-rank gather's
failure path. No trainer here (``test_trl_eval_resume.py`` drives a real one)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from modebench.rl import BatchGrader, Completion, ModeBank, RolloutBank, RolloutRecorder, _engine, checkpoint
from modebench.rl.bank import write_json_atomic
from modebench.rl.checkpoint import BANK_FILE, STATE_FILE, CheckpointMismatch


def _needs(name: str) -> Any:
    """The rl extra's package ``name``: in CI (``CI=true``) a missing one fails, never skips."""
    if os.environ.get("CI") == "true":
        return __import__(name)
    return pytest.importorskip(name, reason="needs the rl extra: pip install -e '.[rl]'")


def _batch(records: list[dict[str, Any]], *, prompt_prefix: str = "") -> list[Completion]:
    out = []
    for record in records[:4]:
        for text in record["responses"][:3]:
            out.append(
                Completion(
                    record["level"], record["domain"], record["answer"], text, prompt_prefix + record["id"]
                )
            )
    return out


@pytest.fixture
def filled(records: list[dict[str, Any]], grader: BatchGrader) -> RolloutRecorder:
    recorder = RolloutRecorder(bank=ModeBank(capacity=3))
    batch = _batch(records)
    recorder.record(batch, grader.grade(batch))
    recorder.flush(1)
    recorder.bank.replay(2)  # type: ignore[union-attr]  # a cursor to carry over
    return recorder


def test_mode_bank_implements_the_protocol(tmp_path: Path, filled: RolloutRecorder):
    bank = filled.bank
    assert isinstance(bank, RolloutBank) and isinstance(bank, ModeBank)
    bank.save(tmp_path / "bank.json")
    assert not [p for p in tmp_path.iterdir() if p.name != "bank.json"]  # no temporary left
    other = ModeBank(capacity=3)
    other.load(tmp_path / "bank.json")
    assert other.state_dict() == bank.state_dict()
    assert other.identity() == bank.identity() == {"schema": "modebench-rl-bank-v1", "capacity": 3}
    # The protocol's extra offer fields are accepted and do not change ModeBank's rule.
    assert other.offer(
        "x", level=1, domain="countdown", answer={}, reference_sha256="s", text="t", status="correct",
        canonical_key="k", completion_ids=[1, 2], truncated=True,
    )  # fmt: skip
    assert other.modes("x") == ["k"]


def test_atomic_write_keeps_the_old_file_when_writing_fails(tmp_path: Path):
    target = tmp_path / "state.json"
    write_json_atomic(target, {"a": 1})
    with pytest.raises(ValueError):
        write_json_atomic(target, {"a": float("nan")})  # not JSON: fails mid-write
    assert json.loads(target.read_text()) == {"a": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["state.json"]


def test_save_and_restore_round_trip(tmp_path: Path, filled: RolloutRecorder, records, grader):
    identity = checkpoint.run_identity(filled)
    checkpoint.save(tmp_path, filled, identity, 7)
    assert {p.name for p in tmp_path.iterdir()} == {BANK_FILE, STATE_FILE}
    restored = RolloutRecorder(bank=ModeBank(capacity=3))
    checkpoint.restore(tmp_path, restored, identity, 7)
    assert restored.state_dict() == filled.state_dict()
    assert restored.bank.state_dict() == filled.bank.state_dict()  # type: ignore[union-attr]
    # The seen sets came back: the same batch again has no new modes, in both.
    batch = _batch(records)
    for recorder in (filled, restored):
        recorder.record(batch, grader.grade(batch))
    assert filled.flush(8).metrics == restored.flush(8).metrics  # type: ignore[union-attr]
    assert restored.last["modebench/all/new_modes"] == 0.0
    # The replay schedule continues where it was.
    assert restored.bank.replay(3) == filled.bank.replay(3)  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ("software", r"software\.package_source_sha256: saved"),
        ("prompts", r"prompts: saved"),
        ("capacity", r"bank\.capacity: saved 3, this run 5"),
        ("step", r"saved at step 7, but the trainer resumes at step 8"),
        ("bank file", r"is not the bank saved with"),
        ("missing", r"has no modebench_state\.json"),
        ("damaged", r"not a JSON state file"),
    ],
)
def test_another_runs_state_is_refused_and_nothing_changes(
    tmp_path: Path, filled: RolloutRecorder, monkeypatch: pytest.MonkeyPatch, change: str, message: str
):
    identity = checkpoint.run_identity(filled, [{"prompt_id": "a", "answer": "{}"}])
    checkpoint.save(tmp_path, filled, identity, 7)
    live = RolloutRecorder(bank=ModeBank(capacity=5 if change == "capacity" else 3))
    step = 8 if change == "step" else 7
    if change == "software":
        real = _engine.software()
        monkeypatch.setattr(_engine, "software", lambda: {**real, "package_source_sha256": "0" * 64})
    if change == "bank file":
        other = ModeBank(capacity=3)
        other.save(tmp_path / BANK_FILE)
    if change == "missing":
        os.remove(tmp_path / STATE_FILE)
    if change == "damaged":
        (tmp_path / STATE_FILE).write_text("{not json")
    dataset = (
        [{"prompt_id": "b", "answer": "{}"}] if change == "prompts" else [{"prompt_id": "a", "answer": "{}"}]
    )
    with pytest.raises(CheckpointMismatch, match=message):
        checkpoint.restore(tmp_path, live, checkpoint.run_identity(live, dataset), step)
    assert live.state_dict() == RolloutRecorder().state_dict()
    assert live.bank.state_dict()["prompts"] == {}  # type: ignore[union-attr]


def test_prompts_digest_is_a_set_digest():
    rows = [{"prompt_id": "a", "level": 1, "domain": "countdown", "answer": "{}"},
            {"prompt_id": "b", "level": 1, "domain": "countdown", "answer": "{}"}]  # fmt: skip
    assert checkpoint.prompts_digest(rows) == checkpoint.prompts_digest(rows[::-1] + rows)
    assert checkpoint.prompts_digest(rows) != checkpoint.prompts_digest(rows[:1])
    assert checkpoint.prompts_digest([{"text": "x"}]) is None
    datasets = _needs("datasets")
    assert checkpoint.prompts_digest(datasets.Dataset.from_list(rows)) == checkpoint.prompts_digest(rows)


def test_evaluation_rows_stay_out_of_training_state(records, grader):
    recorder = RolloutRecorder(bank=ModeBank())
    train = _batch(records[:2])
    recorder.record(train, grader.grade(train))
    recorder.flush(1)
    before = (recorder.state_dict(), recorder.bank.state_dict())  # type: ignore[union-attr]
    held_out = _batch(records[2:], prompt_prefix="eval/")
    recorder.evaluating = lambda: True
    recorder.record(held_out, grader.grade(held_out))
    assert recorder.flush(2) is None  # nothing for training
    record = recorder.flush_eval(2)
    assert record is not None and record.metrics["modebench/all/completions"] == len(held_out)
    assert record.metrics["modebench/all/bank_coverage"] == 0.0
    assert recorder.eval_steps == [record]
    after = recorder.state_dict()
    assert after["seen"] == before[0]["seen"] and after["steps"] == before[0]["steps"]
    assert recorder.bank.state_dict() == before[1]  # type: ignore[union-attr]


def test_load_bank_reads_the_checkpoint_file(tmp_path: Path, filled: RolloutRecorder):
    _needs("transformers")
    from modebench.rl import load_bank

    checkpoint.save(tmp_path, filled, checkpoint.run_identity(filled), 1)
    assert load_bank(tmp_path).state_dict() == filled.bank.state_dict()  # type: ignore[union-attr]
