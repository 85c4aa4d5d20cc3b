"""SIGKILL the CLI at random moments during validation and grading, then resume.

Every resumed run must end with the same cells and byte-identical journal as an uninterrupted
run: nothing lost, nothing graded twice in the journal.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"
ANSWER = {"verifier": "countdown", "numbers": [2, 3, 4], "target": 9}


def _write_input(path: Path, prompts: int) -> None:
    rng = random.Random(5)
    texts = ["2+3+4", "4+3+2", "(2*3)+4-1", "3*4-2-1", "x", "", "\\boxed{9}", "2*4+3-2"]
    with open(path, "w") as handle:
        for index in range(prompts):
            responses = [rng.choice(texts) + " " * rng.randrange(3) for _ in range(8)]
            record = {
                "id": f"p{index}",
                "level": 1 + index % 5,
                "domain": "countdown",
                "answer": ANSWER,
                "responses": responses,
            }
            handle.write(json.dumps(record) + "\n")


def _cli(*args: str) -> subprocess.Popen[bytes]:
    env = dict(os.environ, PYTHONPATH=str(SRC))
    return subprocess.Popen(
        [sys.executable, "-m", "modebench", *args], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )


def _wait(process: subprocess.Popen[bytes]) -> tuple[int, str]:
    _, err = process.communicate(timeout=300)
    return process.returncode, err.decode()


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, object], bytes]:
    root = tmp_path_factory.mktemp("baseline")
    source = root / "in.jsonl"
    _write_input(source, 6000)
    code, err = _wait(
        _cli("evaluate", str(source), "--output", str(root / "clean.json"), "--progress-every", "0")
    )
    assert code == 0, err
    receipt = json.loads((root / "clean.json").read_text())
    return source, receipt, (root / "clean.json.work" / "results.jsonl").read_bytes()


@pytest.mark.parametrize("seed", range(6))
def test_sigkill_then_resume_matches_uninterrupted(
    seed: int, tmp_path: Path, baseline: tuple[Path, dict[str, object], bytes]
) -> None:
    source, clean, journal = baseline
    output = tmp_path / "out.json"
    args = ["evaluate", str(source), "--output", str(output), "--progress-every", "1"]
    rng = random.Random(seed)
    for attempt in range(3):
        resume = ["--resume"] if (tmp_path / "out.json.work" / "ledger.sqlite3").exists() else []
        process = _cli(*args, *resume, "--workers", str(1 + attempt % 2))
        assert process.stderr is not None
        # Kill after a random number of progress events: during validation (one event per 100
        # records) or anywhere in grading (one event per committed prompt).
        for _ in range(rng.randrange(1, 4000)):
            if not process.stderr.readline():
                break
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        process.stderr.close()
        if output.exists():  # finished before the kill landed: nothing to resume
            break
    else:
        code, err = _wait(_cli(*args[:-2], "--resume"))
        assert code == 0, err
    receipt = json.loads(output.read_text())
    assert receipt["cells"] == clean["cells"]  # type: ignore[index]
    assert (tmp_path / "out.json.work" / "results.jsonl").read_bytes() == journal
    lines = journal.decode().splitlines()
    assert [json.loads(line)["sequence"] for line in lines] == list(range(6000))
