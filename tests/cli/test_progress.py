"""Progress (first-hour item 8): --progress-every holds while validating, sparse events off a
terminal by default, a bar with total and ETA for every phase on a terminal (a real pty)."""

from __future__ import annotations

import io
import json
import os
import pty
import subprocess
import sys
import time
from pathlib import Path

from modebench.cli import _progress

SRC = Path(__file__).resolve().parents[2] / "src"
ANSWER = {"verifier": "countdown", "numbers": [1, 2, 3], "target": 6}
KEYS = ["phase", "completed_prompts", "total_prompts", "elapsed_seconds"]


def _input(path: Path, prompts: int) -> Path:
    record = {"level": 1, "domain": "countdown", "answer": ANSWER, "responses": ["1+2+3"]}
    path.write_text("".join(json.dumps({"id": str(i), **record}) + "\n" for i in range(prompts)))
    return path


def _evaluate(tmp_path: Path, name: str, *flags: str, stderr: int | None = None) -> subprocess.Popen[bytes]:
    source = tmp_path / "in.jsonl"
    if not source.exists():
        _input(source, 3000)
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "modebench",
            "evaluate",
            str(source),
            "--output",
            str(tmp_path / name),
            *flags,
        ],
        env=dict(os.environ, PYTHONPATH=str(SRC)),
        stdout=subprocess.PIPE,
        stderr=stderr if stderr is not None else subprocess.PIPE,
    )


def _events(process: subprocess.Popen[bytes]) -> list[dict[str, object]]:
    out, err = process.communicate(timeout=300)
    assert process.returncode == 0, err
    events = [json.loads(line) for line in err.decode().splitlines()]
    assert all(list(event) == KEYS for event in events)  # the contractual shape, unchanged
    return events


def test_progress_every_holds_while_validating(tmp_path: Path) -> None:
    events = _events(_evaluate(tmp_path, "a.json", "--progress-every", "1000"))
    validating = [e["completed_prompts"] for e in events if e["phase"] == "validating"]
    grading = [e["completed_prompts"] for e in events if e["phase"] == "grading"]
    assert validating == [0, 1000, 2000, 3000]  # 0.4.0 printed 31: one per 100 records
    assert grading == [0, 1000, 2000, 3000]
    assert [e["phase"] for e in events if e["phase"] not in ("validating", "grading")] == [
        "validated",
        "finalizing",
        "complete",
    ]


def test_default_off_a_terminal_is_sparse(tmp_path: Path) -> None:
    started = time.monotonic()
    events = _events(_evaluate(tmp_path, "b.json"))
    elapsed = time.monotonic() - started
    phases = [e["phase"] for e in events]
    # The first event of each phase; a phase repeats only every 10 s (a loaded machine may take that
    # long), so the repeats are bounded by the run's duration and never change the phase order.
    firsts = [phase for i, phase in enumerate(phases) if i == 0 or phase != phases[i - 1]]
    assert firsts == ["validating", "validated", "grading", "finalizing", "complete"]
    assert len(phases) - len(firsts) <= elapsed // 10
    assert events[1]["total_prompts"] == 3000


def test_progress_every_zero_prints_nothing(tmp_path: Path) -> None:
    assert _events(_evaluate(tmp_path, "c.json", "--progress-every", "0")) == []


def test_terminal_bar_with_total_and_eta_for_every_phase(tmp_path: Path) -> None:
    primary, secondary = pty.openpty()
    process = _evaluate(tmp_path, "d.json", stderr=secondary)
    os.close(secondary)
    chunks = []
    while True:
        try:
            data = os.read(primary, 65536)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(primary)
    out, _ = process.communicate(timeout=300)
    assert process.returncode == 0
    assert json.loads(out)["prompts"] == 3000  # stdout stays machine-readable
    screen = b"".join(chunks).decode()
    assert "{" not in screen  # no JSON events on a terminal
    frames = [frame.strip() for frame in screen.replace("\n", "\r").split("\r") if frame.strip()]
    assert any(f.startswith("validating") and "/~3000 prompts" in f and "ETA" in f for f in frames)
    assert any(f.startswith("validating") and "3000/3000 prompts" in f and "took" in f for f in frames)
    assert any(f.startswith("grading") and "/3000 prompts" in f and "ETA" in f for f in frames)
    assert any(f.startswith("publishing") and "3000/3000" in f for f in frames)


def test_default_is_time_spaced_for_a_long_run() -> None:
    """40,000 prompts graded over 400 s: about 40 events, not 400 (one per 100)."""
    printed = _progress.EventFilter(None, lambda event: int(event["completed_prompts"]))
    shown = [
        done for done in range(40_001) if printed({"phase": "grading", "completed_prompts": done}, done / 100)
    ]
    assert 40 <= len(shown) <= 42
    assert shown[0] == 0


def test_bar_eta_and_estimated_total() -> None:
    stream = io.StringIO()
    bar = _progress.Bar(stream, "prompts")
    bar.update("validating", 0, 400, 0.0, estimated=True)
    bar.update("validating", 100, 400, 10.0, estimated=True)
    assert "100/~400 prompts" in stream.getvalue() and "ETA 0:30" in stream.getvalue()
    bar.update("validating", 400, 400, 40.0, final=True)
    assert stream.getvalue().endswith("took 0:40\n")


def test_count_lines_skips_blank_lines(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_bytes(b'{"a": 1}\n\n   \n{"b": 2}\n{"c": 3}')
    assert _progress.count_lines(path) == 3
    assert _progress.count_lines(tmp_path / "missing") is None
