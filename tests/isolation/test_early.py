"""The worker ``modebench evaluate`` starts before loading the evaluator (``isolation.early``)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from modebench.cli import main
from modebench.isolation import early
from modebench.isolation.process import BoundedWorker
from tests.samples import sample_row

#: A request every worker answers "correct" (a countdown reference check).
_REFERENCE_REQUEST = {
    "operation": "reference",
    "level": 1,
    "domain": "countdown",
    "answer": sample_row("countdown")["answer"],
}


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_a_parked_worker_is_adopted_and_grades() -> None:
    early.park()
    parked = early._parked
    assert parked is not None
    with BoundedWorker() as worker:
        worker.want(["countdown"])  # warmed by the warm request after the greeting
        reply = worker.request(_REFERENCE_REQUEST)
        assert reply["status"] == "correct"
        assert worker._process is parked[1] and worker.starts == 1
    assert early._parked is None
    parked[1].wait(5)


def test_a_worker_with_its_own_environment_starts_its_own() -> None:
    early.park()
    parked = early._parked
    assert parked is not None
    with BoundedWorker(env=dict(os.environ)) as worker:
        reply = worker.request(_REFERENCE_REQUEST)
        assert reply["status"] == "correct"
        assert worker._process is not parked[1]
    assert early._parked is parked  # still parked for the default worker
    early.discard()
    parked[1].wait(5)
    assert not _alive(parked[1].pid) or parked[1].poll() is not None


def test_a_usage_error_leaves_no_worker(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["evaluate", str(tmp_path / "missing.jsonl"), "--output", str(tmp_path / "out.json")])
    assert stopped.value.code == 2
    assert "missing.jsonl" in capsys.readouterr().err
    assert early._parked is None  # discarded when the command ended


def test_evaluate_with_a_parked_worker_matches_a_fresh_one(tmp_path: Path) -> None:
    source = tmp_path / "in.jsonl"
    source.write_text(
        "".join(
            json.dumps(
                {
                    "id": f"p{i}",
                    "level": 1,
                    "domain": "countdown",
                    "answer": sample_row("countdown")["answer"],
                    "responses": ["\\boxed{0}", "x"],
                }
            )
            + "\n"
            for i in range(3)
        )
    )
    assert main(["evaluate", str(source), "--output", str(tmp_path / "a.json")]) == 0
    assert main(["evaluate", str(source), "--output", str(tmp_path / "b.json"), "--backend", "local"]) == 0
    first = json.loads((tmp_path / "a.json").read_text())
    second = json.loads((tmp_path / "b.json").read_text())
    assert first["cells"] == second["cells"]
    assert early._parked is None


@pytest.mark.skipif(not hasattr(__import__("fcntl"), "F_GETPIPE_SZ"), reason="pipe sizes are Linux's")
def test_a_worker_has_wide_pipes_and_grades_through_them() -> None:
    import fcntl  # noqa: PLC0415 - Linux-only constants, behind the skip above

    with BoundedWorker() as worker:
        reply = worker.request(_REFERENCE_REQUEST)
        assert reply["status"] == "correct"
        process = worker._process
        assert process is not None and process.stdin is not None and process.stdout is not None
        for pipe in (process.stdin, process.stdout):
            assert fcntl.fcntl(pipe.fileno(), fcntl.F_GETPIPE_SZ) == early.PIPE_BYTES
