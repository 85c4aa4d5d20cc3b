"""SIGKILL ``modebench generate`` mid-run, rerun the same command: only the missing draws are
sent and the published files are byte-identical to an uninterrupted run's."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tests.generate.test_generate import _tasks
from tests.signals import default_sigint

DRAWS = 40 * 4


def _command(directory: Path, tasks: Path, base_url: str) -> list[str]:
    return [
        sys.executable, "-m", "modebench", "generate", "--tasks", str(tasks), "--base-url", base_url,
        "--model", "test-model", "-k", "4", "--seed", "11", "--concurrency", "3",
        "--output", str(directory / "out.jsonl"), "--progress-every", "0",
    ]  # fmt: skip


def _recorded(ledger: Path) -> int:
    if not ledger.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{ledger}?mode=ro", uri=True) as db:
            return int(db.execute("SELECT count(*) FROM draws").fetchone()[0])
    except sqlite3.OperationalError:  # tables not created yet
        return 0


def _held_after(replies: int, endpoint: Any, tmp_path: Path) -> tuple[Any, Path]:
    # The server answers `replies` requests, then holds every further one until the test touches
    # the gate: a run cannot finish (nor send everything) before the signal, however fast or slow
    # the machine is.
    gate = tmp_path / "gate"
    return endpoint(delay=0.01, hold={"after": replies, "gate": str(gate)}), gate


def _held_after_a_clean_run(endpoint: Any, tmp_path: Path) -> tuple[Any, Path]:
    # A clean run and 40 requests of the run to be killed; one server, so both name the same URL.
    return _held_after(DRAWS + 40, endpoint, tmp_path)


def test_sigkill_then_rerun_is_byte_identical(endpoint: Any, tmp_path: Path) -> None:
    server, gate = _held_after_a_clean_run(endpoint, tmp_path)
    tasks = _tasks(tmp_path / "tasks.jsonl", 40)
    clean, killed = tmp_path / "clean", tmp_path / "killed"
    clean.mkdir()
    killed.mkdir()
    subprocess.run(_command(clean, tasks, server.base_url), check=True, capture_output=True, timeout=300)
    before = len(server.requests())
    assert before == DRAWS

    process = subprocess.Popen(_command(killed, tasks, server.base_url), stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while _recorded(killed / "out.ledger.sqlite") < 30:
        assert process.poll() is None, "generation finished before it could be killed"
        assert time.monotonic() < deadline
        time.sleep(0.02)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    gate.touch()  # the requests held at the kill are answered; the rerun is served in full
    assert not (killed / "out.jsonl").exists()
    recorded = _recorded(killed / "out.ledger.sqlite")
    assert 30 <= recorded < DRAWS

    resumed = subprocess.run(
        _command(killed, tasks, server.base_url), capture_output=True, timeout=300, text=True
    )
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["sent"] == DRAWS - recorded
    # Requests in flight at the kill (at most 3), and draws of the group not yet committed (those
    # of the last FLUSH_SECONDS: some 15 at this server's ~300 draws/s), are sent again.
    assert len(server.requests()) - before <= DRAWS + 3 + 32
    for name in ("out.jsonl", "out.run.json", "out.draws.jsonl"):
        assert (killed / name).read_bytes() == (clean / name).read_bytes(), name


def test_ctrl_c_keeps_finished_draws_and_says_how_to_resume(endpoint: Any, tmp_path: Path) -> None:
    server, gate = _held_after(12, endpoint, tmp_path)
    tasks = _tasks(tmp_path / "tasks.jsonl", 40)
    process = subprocess.Popen(
        _command(tmp_path, tasks, server.base_url),
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=default_sigint,  # even when the suite itself runs with SIGINT ignored
    )
    deadline = time.monotonic() + 300
    while _recorded(tmp_path / "out.ledger.sqlite") < 10:  # the ledger commits while requests wait
        assert process.poll() is None, "generation stopped before it was interrupted"
        assert time.monotonic() < deadline, "no draw was recorded"
        time.sleep(0.02)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=300)
    gate.touch()  # the rerun below is served in full
    assert process.returncode == 130
    assert "interrupted: finished draws are kept; rerun the same command to resume" in err
    assert "Traceback" not in err and not (tmp_path / "out.jsonl").exists()
    recorded = _recorded(tmp_path / "out.ledger.sqlite")
    resumed = subprocess.run(
        _command(tmp_path, tasks, server.base_url), capture_output=True, timeout=300, text=True
    )
    assert resumed.returncode == 0 and json.loads(resumed.stdout)["sent"] == DRAWS - recorded


def test_ledger_commits_groups_within_the_flush_interval(tmp_path: Path) -> None:
    from modebench.generate._ledger import FLUSH_DRAWS, FLUSH_SECONDS, Draw, DrawLedger

    path = tmp_path / "ledger.sqlite"
    ledger = DrawLedger(path, {"run": 1})
    ledger.record([Draw("a", 0, 1, True, "x")])
    assert _recorded(path) == 0  # waiting in the group
    time.sleep(FLUSH_SECONDS)
    ledger.tick()  # what the sending loop does while no request finishes
    assert _recorded(path) == 1
    ledger.record([Draw("a", d, 1, True, "x") for d in range(1, FLUSH_DRAWS + 1)])
    assert _recorded(path) == FLUSH_DRAWS + 1  # a full group is committed at once
    ledger.record([Draw("b", 0, 1, False, "", error="HTTP 500")])
    ledger.close()  # Ctrl-C and errors close the ledger: nothing that arrived is lost
    assert _recorded(path) == FLUSH_DRAWS + 2


def test_sigkill_of_a_sharded_run_stops_its_shards_and_resumes(endpoint: Any, tmp_path: Path) -> None:
    # Shards are forked from a fork server, not from the killed process: they must notice its death
    # through multiprocessing's handle on it, stop sending, and leave a ledger that resumes.
    server, gate = _held_after_a_clean_run(endpoint, tmp_path)
    tasks = _tasks(tmp_path / "tasks.jsonl", 40)
    clean, killed = tmp_path / "clean", tmp_path / "killed"
    clean.mkdir()
    killed.mkdir()
    subprocess.run(_command(clean, tasks, server.base_url), check=True, capture_output=True, timeout=300)
    sharded = [*_command(killed, tasks, server.base_url), "--processes", "2", "--concurrency", "4"]
    process = subprocess.Popen(sharded, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while _recorded(killed / "out.ledger.sqlite") < 30:
        assert process.poll() is None, "generation finished before it could be killed"
        assert time.monotonic() < deadline
        time.sleep(0.02)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    time.sleep(2)  # a shard checks on its parent every half second
    gate.touch()  # a shard that missed its parent's death would now send the rest of its draws
    time.sleep(2)
    sent = len(server.requests())
    time.sleep(1.5)
    assert len(server.requests()) == sent, "a shard kept sending after its parent was killed"
    assert sent < 2 * DRAWS

    resumed = subprocess.run(sharded, capture_output=True, timeout=300, text=True)
    assert resumed.returncode == 0, resumed.stderr
    for name in ("out.jsonl", "out.run.json", "out.draws.jsonl"):
        assert (killed / name).read_bytes() == (clean / name).read_bytes(), name
