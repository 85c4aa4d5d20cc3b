"""Pipe mode: ``modebench generate --stdout | modebench evaluate -`` through a real shell pipe.

The receipt graded from standard input must be the receipt of the file with the same bytes (only
the creation and start timestamps differ between any two evaluations), a failing producer must
leave the reader nothing to publish, and a resume reads the spooled copy, never standard input.
"""

from __future__ import annotations

import hashlib
import json
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.generate.test_generate import _tasks

MODEBENCH = f"{shlex.quote(sys.executable)} -m modebench"


def _generate(tasks: Path, base_url: str, out: Path, *extra: str) -> str:
    args = [
        "generate", "--tasks", str(tasks), "--base-url", base_url, "--model", "test-model", "-k", "4",
        "--seed", "5", "--concurrency", "8", "--output", str(out), "--progress-every", "0", *extra,
    ]  # fmt: skip
    return f"{MODEBENCH} {shlex.join(args)}"


def _evaluate(source: str, run: Path, receipt: Path, *extra: str) -> list[str]:
    return [
        sys.executable, "-m", "modebench", "evaluate", source, "--run", str(run), "--output", str(receipt),
        "--min-defined-prompts", "1", "--progress-every", "0", *extra,
    ]  # fmt: skip


def _shell(command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-o", "pipefail", "-c", command], capture_output=True, text=True, timeout=300
    )


def _comparable(receipt: Path) -> dict[str, Any]:
    """The receipt without the two timestamps that differ between any two evaluations."""
    value: dict[str, Any] = json.loads(receipt.read_bytes())
    value.pop("created_at")
    for entry in value["execution"]["history"]:
        entry.pop("started_at")
    return value


def test_generate_piped_into_evaluate_stdin_equals_evaluating_the_file(endpoint: Any, tmp_path: Path) -> None:
    server = endpoint(answers=["\\boxed{1+2+3}", "\\boxed{3*2*1}", "no idea"])
    tasks = _tasks(tmp_path / "tasks.jsonl", 12)
    out, run = tmp_path / "out.jsonl", tmp_path / "out.run.json"
    (tmp_path / "pipe").mkdir()
    (tmp_path / "file").mkdir()
    piped_receipt, file_receipt = tmp_path / "pipe" / "receipt.json", tmp_path / "file" / "receipt.json"

    # The reader starts before the run metadata exists: it is read once standard input ends.
    pipe = _shell(
        f"{_generate(tasks, server.base_url, out, '--stdout')} | {shlex.join(_evaluate('-', run, piped_receipt))}"
    )
    assert pipe.returncode == 0, pipe.stderr
    summary = json.loads(pipe.stdout)
    assert summary["status"] == "completed" and summary["prompts"] == 12
    generated = json.loads(pipe.stderr.strip().splitlines()[-1])  # --stdout: the summary is on stderr
    assert generated["draws"] == 48 and generated["failed_draws"] == 0

    subprocess.run(_evaluate(str(out), run, file_receipt), check=True, capture_output=True, timeout=300)
    assert _comparable(piped_receipt) == _comparable(file_receipt)
    assert _comparable(piped_receipt)["input_sha256"] == hashlib.sha256(out.read_bytes()).hexdigest()
    journal = "receipt.json.work/results.jsonl"
    assert (tmp_path / "pipe" / journal).read_bytes() == (tmp_path / "file" / journal).read_bytes()
    # The spooled copy of standard input goes with the ledger once the receipt is published.
    assert sorted(p.name for p in (tmp_path / "pipe" / "receipt.json.work").iterdir()) == ["results.jsonl"]


def test_generate_evaluate_flag_equals_evaluating_the_file(endpoint: Any, tmp_path: Path) -> None:
    server = endpoint(answers=["\\boxed{1+2+3}", "\\boxed{2*3}", "no idea"])
    tasks = _tasks(tmp_path / "tasks.jsonl", 6)
    out, run = tmp_path / "out.jsonl", tmp_path / "out.run.json"
    (tmp_path / "inline").mkdir()
    (tmp_path / "file").mkdir()
    inline = tmp_path / "inline" / "receipt.json"
    done = _shell(
        _generate(tasks, server.base_url, out, "--evaluate", str(inline), "--min-defined-prompts", "1")
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["status"] == "completed"
    file_receipt = tmp_path / "file" / "receipt.json"
    subprocess.run(_evaluate(str(out), run, file_receipt), check=True, capture_output=True, timeout=300)
    assert _comparable(inline) == _comparable(file_receipt)


def test_a_failing_producer_leaves_the_reader_nothing_to_publish(endpoint: Any, tmp_path: Path) -> None:
    server = endpoint(model="another-model")  # every request: 404 model not found
    tasks = _tasks(tmp_path / "tasks.jsonl", 3)
    out, receipt = tmp_path / "out.jsonl", tmp_path / "receipt.json"
    pipe = _shell(
        f"{_generate(tasks, server.base_url, out, '--stdout')} | "
        f"{shlex.join(_evaluate('-', tmp_path / 'none.run.json', receipt))}"
    )
    assert pipe.returncode == 2
    assert "endpoint refused the request (404)" in pipe.stderr
    assert "Traceback" not in pipe.stderr
    assert not receipt.exists() and not (tmp_path / "receipt.json.work").exists()


def test_stdin_resume_reads_the_spool_and_refuses_an_incomplete_one(endpoint: Any, tmp_path: Path) -> None:
    server = endpoint()
    tasks = _tasks(tmp_path / "tasks.jsonl", 5)
    out, run = tmp_path / "out.jsonl", tmp_path / "out.run.json"
    assert _shell(_generate(tasks, server.base_url, out)).returncode == 0
    (tmp_path / "file").mkdir()
    (tmp_path / "resumed").mkdir()
    file_receipt = tmp_path / "file" / "receipt.json"
    subprocess.run(_evaluate(str(out), run, file_receipt), check=True, capture_output=True, timeout=300)

    # Killed after standard input was completely received: the resume grades the spool and
    # ignores standard input (here: nothing at all).
    resumed = tmp_path / "resumed" / "receipt.json"
    work = tmp_path / "resumed" / "receipt.json.work"
    work.mkdir()
    (work / "stdin.jsonl").write_bytes(out.read_bytes())
    done = subprocess.run(
        _evaluate("-", run, resumed, "--resume"),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert _comparable(resumed) == _comparable(file_receipt)
    assert not (work / "stdin.jsonl").exists()

    # Killed while standard input was still arriving: nothing to resume from, said plainly.
    partial = tmp_path / "partial.json"
    (tmp_path / "partial.json.work").mkdir()
    (tmp_path / "partial.json.work" / "stdin.jsonl.part").write_bytes(out.read_bytes()[:100])
    refused = subprocess.run(
        _evaluate("-", run, partial, "--resume"), input="", capture_output=True, text=True, timeout=300
    )
    assert refused.returncode == 2
    assert "cannot resume from standard input" in refused.stderr
    assert "remove it and run again" in refused.stderr
    # ... and a fresh run does not overwrite that checkpoint.
    fresh = subprocess.run(
        _evaluate("-", run, partial), input=out.read_text(), capture_output=True, text=True, timeout=300
    )
    assert fresh.returncode == 2 and "checkpoint already exists" in fresh.stderr


def test_bad_stdin_is_an_input_error_and_leaves_nothing(tmp_path: Path) -> None:
    receipt = tmp_path / "receipt.json"
    for text, message in (("", "no"), ('{"id": 1}\n', "line 1")):
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "modebench",
                "evaluate",
                "-",
                "--output",
                str(receipt),
                "--progress-every",
                "0",
            ],
            input=text,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 2, done.stderr
        assert message in done.stderr.splitlines()[-1] and "Traceback" not in done.stderr
        assert sorted(p.name for p in tmp_path.iterdir()) == []
