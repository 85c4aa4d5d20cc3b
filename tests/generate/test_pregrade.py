"""``generate --evaluate`` grades each prompt as soon as its draws are in (``docs/generate.md``).

Against the loopback server through the real ``openai`` client: the receipt and journal equal
those of ``modebench evaluate OUTPUT --run OUTPUT.run.json`` (only timestamps differ), the
evaluation takes every prompt from the memo instead of grading it again, grading overlaps a slow
generation (seen in the progress events), failed draws grade as before, and a run killed with
SIGKILL and rerun still publishes the same receipt.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from modebench.api import iter_results
from modebench.api_types import EvaluationOptions
from modebench.backends.memo import GradeMemo, MemoGrader
from modebench.evaluation import Preflight
from modebench.parallel import ParallelGrader
from tests.generate.test_generate import ANSWERS, _tasks
from tests.generate.test_pipe import _comparable
from tests.generate.test_resume import _recorded

JOURNAL = "receipt.json.work/results.jsonl"


def _generate(tasks: Path, base_url: str, directory: Path, *extra: str) -> list[str]:
    return [
        sys.executable, "-m", "modebench", "generate", "--tasks", str(tasks), "--base-url", base_url,
        "--model", "test-model", "-k", "4", "--seed", "9", "--retries", "1",
        "--output", str(directory / "out.jsonl"), "--evaluate", str(directory / "receipt.json"),
        "--min-defined-prompts", "1", *extra,
    ]  # fmt: skip


def _evaluate_file(directory: Path, *extra: str) -> Path:
    """``modebench evaluate OUTPUT --run OUTPUT.run.json`` into ``directory/file/receipt.json``."""
    (directory / "file").mkdir()
    receipt = directory / "file" / "receipt.json"
    command = [
        sys.executable, "-m", "modebench", "evaluate", str(directory / "out.jsonl"),
        "--run", str(directory / "out.run.json"), "--output", str(receipt),
        "--min-defined-prompts", "1", "--progress-every", "0", *extra,
    ]  # fmt: skip
    subprocess.run(command, check=True, capture_output=True, timeout=300)
    return receipt


def _assert_same_as_evaluate(directory: Path, *extra: str) -> None:
    receipt = _evaluate_file(directory, *extra)
    assert _comparable(directory / "receipt.json") == _comparable(receipt)
    assert (directory / JOURNAL).read_bytes() == (directory / "file" / JOURNAL).read_bytes()


def test_receipt_and_journal_equal_evaluating_the_file_with_failed_draws(
    endpoint: Any, tmp_path: Path
) -> None:
    server = endpoint(answers=ANSWERS, always_fail="POISON")
    tasks = _tasks(tmp_path / "tasks.jsonl", 12, poison=3)
    done = subprocess.run(
        [*_generate(tasks, server.base_url, tmp_path), "--progress-every", "0"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["status"] == "completed" and summary["failed_draws"] == 4
    # Every prompt was graded ahead and the evaluation took all of them from the memo.
    assert summary["pregraded_prompts"] == 12
    assert (summary["memo_hits"], summary["memo_misses"]) == (12, 0)
    _assert_same_as_evaluate(tmp_path)
    # The failed draws are graded as before: empty responses, malformed.
    poisoned = list(iter_results(tmp_path / "receipt.json"))[3]
    assert [a["status"] for a in poisoned["draws"][0]["attempts"]] == ["malformed"] * 4


def test_frozen_split_is_graded_ahead_as_the_evaluation_validates_it(endpoint: Any, tmp_path: Path) -> None:
    server = endpoint(answers=ANSWERS)
    common = ["--config", "level1_countdown", "--registry", "bundled"]
    command = [
        sys.executable, "-m", "modebench", "generate", *common, "--base-url", server.base_url,
        "--model", "test-model", "-k", "2", "--seed", "4", "--output", str(tmp_path / "out.jsonl"),
        "--evaluate", str(tmp_path / "receipt.json"), "--min-defined-prompts", "1", "--progress-every", "0",
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert (summary["pregraded_prompts"], summary["memo_hits"], summary["memo_misses"]) == (32, 32, 0)
    _assert_same_as_evaluate(tmp_path, *common)


def test_grading_overlaps_a_slow_generation(endpoint: Any, tmp_path: Path) -> None:
    # 12 prompts × 2 draws, two requests in flight, 0.5 s per reply: prompts complete one after
    # another for about 6 s, and each is graded while later draws are still being sampled.
    server = endpoint(answers=ANSWERS, delay=0.5)
    tasks = _tasks(tmp_path / "tasks.jsonl", 12)
    command = _generate(tasks, server.base_url, tmp_path, "--progress-every", "1", "--concurrency", "2")
    command[command.index("-k") + 1] = "2"
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stderr.splitlines() if line.startswith("{")]
    generating = [e for e in events if e["phase"] == "generating"]
    assert generating[-1]["draws"] == generating[-1]["total_draws"] == 24
    # The memo held graded prompts before the last draw arrived.
    early = [e for e in generating if e["graded"] > 0 and e["draws"] < e["total_draws"]]
    assert early, generating
    summary = json.loads(done.stdout)
    assert summary["pregraded_while_generating"] >= 1
    assert (summary["pregraded_prompts"], summary["memo_hits"]) == (12, 12)
    _assert_same_as_evaluate(tmp_path)


def test_sigkill_then_rerun_grades_what_the_ledger_has_and_publishes_the_same_receipt(
    endpoint: Any, tmp_path: Path
) -> None:
    server = endpoint(answers=ANSWERS, delay=0.02)
    tasks = _tasks(tmp_path / "tasks.jsonl", 30)
    command = [*_generate(tasks, server.base_url, tmp_path, "--concurrency", "3"), "--progress-every", "0"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while _recorded(tmp_path / "out.ledger.sqlite") < 40:
        assert process.poll() is None, "generation finished before it could be killed"
        assert time.monotonic() < deadline
        time.sleep(0.02)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    assert not (tmp_path / "out.jsonl").exists() and not (tmp_path / "receipt.json").exists()
    recorded = _recorded(tmp_path / "out.ledger.sqlite")
    assert 40 <= recorded < 120

    resumed = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    summary = json.loads(resumed.stdout)
    assert summary["sent"] == 120 - recorded and summary["status"] == "completed"
    # The prompts complete in the ledger were graded ahead too: nothing was graded twice.
    assert (summary["pregraded_prompts"], summary["memo_hits"], summary["memo_misses"]) == (30, 30, 0)
    _assert_same_as_evaluate(tmp_path)


def test_memo_grader_answers_only_the_exact_inputs_and_keeps_input_order(tmp_path: Path) -> None:
    answer = {"verifier": "countdown", "numbers": [1, 2, 3], "target": 6}
    records = [
        {"id": f"p{i}", "level": 1, "domain": "countdown", "answer": answer, "responses": responses}
        for i, responses in enumerate(
            [["\\boxed{1+2+3}", "x"], ["\\boxed{2*3}", ""], ["\\boxed{1+2+3}", "y"], ["\\boxed{6}"]]
        )
    ]
    memo = GradeMemo()
    with MemoGrader(ParallelGrader(1), memo) as grader:
        preflight = Preflight(EvaluationOptions(), None, validate=grader.reference_check)
        prepared = [preflight.accept(record, f"record {i}") for i, record in enumerate(records)]
        direct = [attempts for _, _, attempts in grader.inner.results(enumerate(prepared))]
        # Memo entries for prompts 0 and 3, the latter deliberately wrong: it is served as is,
        # which shows the evaluation would really take it from the memo.
        memo.put(prepared[0], direct[0])
        planted = [{**direct[3][0], "status": "planted"}]
        memo.put(prepared[3], planted)
        # Same reference, different responses (prompt 2 differs from prompt 0 in one response):
        # no hit. Same responses under another reference: no hit either.
        other = {**prepared[0], "row": {**prepared[0]["row"], "answer": {**answer, "target": 5}}}
        assert memo.take(other) is None
        memo.hits = memo.misses = 0
        out = list(grader.results(enumerate(prepared)))
    assert [seq for seq, _, _ in out] == [0, 1, 2, 3]
    assert [attempts for _, _, attempts in out] == [direct[0], direct[1], direct[2], planted]
    assert (memo.hits, memo.misses) == (2, 2)


def _worker_children() -> list[str]:
    """Command lines of this process's live children that are grading workers."""
    found = []
    for task in Path("/proc/self/task").iterdir():
        for pid in (task / "children").read_text().split():
            try:
                command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            except FileNotFoundError:
                continue
            if "verifier_worker" in command:
                found.append(command)
    return found


def test_a_run_that_fails_stops_the_grading_thread_and_its_worker(endpoint: Any, tmp_path: Path) -> None:
    from modebench.generate import EndpointError, GenerationSettings, TaskFileSource, generate_responses

    server = endpoint(model="another-model")  # every request: 404, which stops the run
    tasks = _tasks(tmp_path / "tasks.jsonl", 4)
    before = _worker_children()
    settings = GenerationSettings(model="test-model", base_url=server.base_url, k=2, seed=1)
    try:
        generate_responses(
            TaskFileSource(tasks), tmp_path / "out.jsonl", settings, receipt=tmp_path / "receipt.json"
        )
    except EndpointError:
        pass
    else:
        raise AssertionError("the refusing endpoint did not stop the run")
    assert not (tmp_path / "receipt.json").exists()
    assert not [t for t in threading.enumerate() if t.name == "modebench-pregrade"]
    assert _worker_children() == before
