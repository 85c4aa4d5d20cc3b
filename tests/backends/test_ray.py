"""The Ray back end on a real local Ray cluster started by these tests (``ray start --head``).

Receipts and journals must equal ``--backend local``; a killed actor loses nothing; a killed
parent resumes to the same result; hostile responses are contained inside the actors' workers.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from modebench.api import evaluate_file
from modebench.verifier_worker import FAULT_BY_TEXT, FAULT_ENV, FAULT_TEXT
from tests.reference_data import SKIP_REASON, conformance_fixtures

from .inputs import normalized, write_mixed

ray = pytest.importorskip("ray", reason="the 'ray' extra is not installed (pip install -e '.[ray]')")

SRC = Path(__file__).resolve().parents[2] / "src"
RAY_CLI = Path(sys.executable).with_name("ray")
# The grammars leave candidates no way to loop or allocate without bound, so the worker's own
# test faults stand in for such responses: an endless busy loop and one allocation beyond the
# worker's address-space cap, each triggered by its response text (the cluster runs with
# MODEBENCH_WORKER_FAULT=by-text; no other response can reach them).
HOSTILE = [FAULT_TEXT + "slow", FAULT_TEXT + "memory"]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A two-CPU Ray head node on 127.0.0.1, stopped (with its workers) after the module."""
    env = dict(os.environ, PYTHONPATH=str(SRC), RAY_USAGE_STATS_ENABLED="0", **{FAULT_ENV: FAULT_BY_TEXT})
    # Ray gives its head node a fixed 30 s to register, which a busy machine can miss: try again
    # (a fresh port and directory) rather than fail the module on the machine's load.
    for _attempt in range(3):
        port = _free_port()
        temp = tmp_path_factory.mktemp("ray")
        session, started = _ray_start(env, port, temp)
        if started.returncode == 0 or "timed out during startup" not in started.stderr + started.stdout:
            break
        _stop_cluster(session)
    try:
        assert started.returncode == 0, started.stdout + started.stderr
        address = f"127.0.0.1:{port}"
        ray.init(address=address, log_to_driver=False)
        try:
            yield address
        finally:
            ray.shutdown()
    finally:
        _stop_cluster(session)


def _ray_start(env: dict[str, str], port: int, temp: Path) -> tuple[int, subprocess.CompletedProcess[str]]:
    """``ray start --head`` in a session of its own; the session's id and the command's outcome.

    Every process of the cluster stays in that session (Ray gives its workers process groups of
    their own, but not sessions), which is how ``_stop_cluster`` finds exactly this cluster.
    """
    command = [
        str(RAY_CLI),
        "start",
        "--head",
        "--num-cpus",
        "2",
        "--node-ip-address",
        "127.0.0.1",
        "--port",
        str(port),
        "--include-dashboard",
        "false",
        "--disable-usage-stats",
        "--temp-dir",
        str(temp),
    ]
    process = subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        stdout, stderr = process.communicate(timeout=180)
    except subprocess.TimeoutExpired:
        _stop_cluster(process.pid)
        stdout, stderr = process.communicate()
    return process.pid, subprocess.CompletedProcess(command, process.returncode, stdout, stderr)


def _session_members(session: int) -> list[int]:
    members = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.getsid(int(entry)) == session:
                    members.append(int(entry))
            except OSError:
                pass  # gone meanwhile
    return members


def _stop_cluster(session: int) -> None:
    """Stop this module's cluster and nothing else: every process of its session, TERM then KILL.

    Not ``ray stop --force``: it stops every Ray cluster on the machine by process name, so two
    test runs at once (two checkouts' ``make check``) killed each other's clusters, and the
    other run's pytest worker died with its driver ("GCS has been unavailable for more than 60
    seconds").
    """
    for sig, grace in ((signal.SIGTERM, 5), (signal.SIGKILL, 30)):
        for pid in _session_members(session):
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + grace
        while _session_members(session) and time.monotonic() < deadline:
            time.sleep(0.2)
        if not _session_members(session):
            return


def _journal(receipt: Path) -> bytes:
    return (receipt.parent / (receipt.name + ".work") / "results.jsonl").read_bytes()


def _same(a: Path, b: Path) -> None:
    assert normalized(a) == normalized(b)
    assert _journal(a) == _journal(b)


def _conformance_input(path: Path) -> Path:
    fixtures = conformance_fixtures()
    if not fixtures:
        pytest.skip(SKIP_REASON)
    with open(path, "w", encoding="utf-8") as handle:
        for index, fixture in enumerate(fixtures):
            record = {
                "id": f"c{index}",
                "level": fixture["level"],
                "domain": fixture["domain"],
                "answer": fixture["row"]["answer"],
                "responses": [case["response"] for case in fixture["cases"]],
            }
            handle.write(json.dumps(record) + "\n")
    return path


def test_ray_equals_local_on_conformance_rows(cluster: str, tmp_path: Path) -> None:
    source = _conformance_input(tmp_path / "conformance.jsonl")
    evaluate_file(source, tmp_path / "local" / "r.json", workers=2)
    evaluate_file(source, tmp_path / "ray" / "r.json", workers=2, backend="ray", cluster_address=cluster)
    _same(tmp_path / "local" / "r.json", tmp_path / "ray" / "r.json")


def test_ray_equals_local_on_mixed_input(cluster: str, tmp_path: Path) -> None:
    source = write_mixed(tmp_path / "mixed.jsonl", 400, seed=11, k=8)
    evaluate_file(source, tmp_path / "local" / "r.json", workers=1)
    receipt = evaluate_file(
        source, tmp_path / "ray" / "r.json", workers=2, backend="ray", cluster_address=cluster
    )
    assert receipt.status == "completed"
    _same(tmp_path / "local" / "r.json", tmp_path / "ray" / "r.json")


def _actor_pids() -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            title = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if b"GradingActor" in title:
            pids.append(int(entry.name))
    return pids


def test_killing_an_actor_mid_run_loses_nothing(cluster: str, tmp_path: Path) -> None:
    source = write_mixed(tmp_path / "mixed.jsonl", 3000, seed=12, k=8)
    evaluate_file(source, tmp_path / "local" / "r.json", workers=2)
    killed: list[int] = []

    def progress(event: dict[str, Any]) -> None:
        if event["phase"] == "grading" and event["completed_prompts"] >= 200 and not killed:
            pids = _actor_pids()
            assert pids, "no grading actor process found"
            os.kill(pids[0], signal.SIGKILL)
            killed.append(pids[0])

    evaluate_file(
        source,
        tmp_path / "ray" / "r.json",
        workers=2,
        backend="ray",
        cluster_address=cluster,
        progress=progress,  # type: ignore[arg-type]
    )
    assert killed
    _same(tmp_path / "local" / "r.json", tmp_path / "ray" / "r.json")


def test_hostile_responses_are_contained_in_actors(
    cluster: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(FAULT_ENV, FAULT_BY_TEXT)  # the local run's workers meet the same faults
    source = tmp_path / "hostile.jsonl"
    write_mixed(source, 60, seed=13)
    lines = source.read_text().splitlines()
    records = [json.loads(line) for line in lines]
    for record in records:
        if record["domain"] == "python_factors":
            record["responses"] = [*record["responses"], *HOSTILE]
    source.write_text("".join(json.dumps(record) + "\n" for record in records))
    evaluate_file(source, tmp_path / "local" / "r.json", workers=2)
    evaluate_file(source, tmp_path / "ray" / "r.json", workers=2, backend="ray", cluster_address=cluster)
    _same(tmp_path / "local" / "r.json", tmp_path / "ray" / "r.json")
    statuses = {
        attempt["status"]
        for line in _journal(tmp_path / "ray" / "r.json").splitlines()
        for attempt in json.loads(line)["result"]["draws"][0]["attempts"]
    }
    # Each hostile response became its own status (the actors' workers were stopped and
    # replaced) and every other response was graded exactly as in the local run above.
    assert {"timeout", "resource_limit"} <= statuses, statuses


def test_sigkill_of_the_parent_then_resume_is_identical(cluster: str, tmp_path: Path) -> None:
    source = write_mixed(tmp_path / "mixed.jsonl", 4000, seed=14, k=8)
    evaluate_file(source, tmp_path / "local" / "r.json", workers=2)
    env = dict(os.environ, PYTHONPATH=str(SRC))
    output = tmp_path / "ray" / "r.json"
    command = [
        sys.executable,
        "-m",
        "modebench",
        "evaluate",
        str(source),
        "--output",
        str(output),
        "--backend",
        "ray",
        "--ray-address",
        cluster,
        "--workers",
        "2",
        "--progress-every",
        "0",
    ]
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    ledger = output.parent / (output.name + ".work") / "results.jsonl"
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and process.poll() is None:
        if ledger.is_file() and ledger.stat().st_size > 0:
            break
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=60)
    finished = subprocess.run([*command, "--resume"], env=env, capture_output=True, text=True, timeout=600)
    assert finished.returncode == 0, finished.stderr
    _same(tmp_path / "local" / "r.json", output)


def test_missing_extra_gives_an_install_hint(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from modebench.backends import ray_pool
    from modebench.validation import InputError

    monkeypatch.setitem(sys.modules, "ray", None)  # import ray → ImportError
    with pytest.raises(InputError, match=r"requires the 'ray' extra: pip install"):
        ray_pool.import_ray()
