"""0.4.0's fault-injection points: a caller that replaces one of these names changes what happens.

The expectations are those of ModeBench 0.4.0's own worker-lifecycle tests
(``tests/test_verifier_lifecycle.py`` of liv-daliberti/modeBench) and of Re:Max's boundary tests
(``tests/test_verifier_workers.py``, ``test_actual_modebench_process_failure_reaches_reward_boundary``
of liv-daliberti/remax): ``verifier._SHARED``, ``BoundedWorker.worker_command``,
``worker_process.selectors``, ``worker_process.subprocess.Popen``, ``verifier_worker.handle`` and
``_timeout``, and the per-domain verifier steps 0.4.0's worker looked up at call time. Real
processes and pipes; each fault must give its status, never a verdict.
"""

from __future__ import annotations

import json
import signal
import sys
import time
from typing import Any

import pytest

from modebench import api, verifier
from modebench.diagnostics import MAX_REPLY_BYTES, MAX_REQUEST_BYTES, VerifierExecutionError, result
from modebench.domains.python_factors.process import PythonFactorVerifierProcess
from modebench.verifier_worker import guarded_handle
from modebench.worker_process import BoundedWorker
from tests.reference_data import reference_json

SPEC = {"verifier": "python_factor_function", "python_version": "factor-v1", "cases": [6, 10, 15]}
PYTHON = {"operation": "python", "candidate": "lambda n: 2 if n % 2 == 0 else 3", "spec": SPEC}
COUNTDOWN = {"verifier": "countdown", "numbers": [1, 2, 3], "target": 6}


def _faulty(monkeypatch: pytest.MonkeyPatch, worker: BoundedWorker, code: str) -> None:
    monkeypatch.setattr(worker, "worker_command", lambda: [sys.executable, "-I", "-c", code])


BAD_WORKERS = [
    pytest.param("import time; time.sleep(60)", "timeout", id="hangs"),
    pytest.param(
        "import sys, time; sys.stdin.readline(); sys.stdout.write('{'); sys.stdout.flush(); time.sleep(60)",
        "timeout",
        id="half-a-reply",
    ),
    pytest.param(
        "import sys; sys.stdin.readline(); print('not-json', flush=True)", "worker_failure", id="garbage"
    ),
    pytest.param("import os; os._exit(9)", "worker_failure", id="dies"),
    pytest.param(
        "import sys; sys.stdin.readline(); print('{}', flush=True)", "worker_failure", id="empty-object"
    ),
    pytest.param(
        f"import sys; sys.stdin.readline(); sys.stdout.write('x' * {MAX_REPLY_BYTES + 1}); sys.stdout.flush()",
        "worker_failure",
        id="256-KiB",
    ),
]


@pytest.mark.parametrize(("code", "status"), BAD_WORKERS)
def test_a_replaced_worker_command_starts_the_faulty_worker(
    monkeypatch: pytest.MonkeyPatch, code: str, status: str
) -> None:
    with BoundedWorker(timeout_seconds=0.5) as worker:
        _faulty(monkeypatch, worker, code)
        assert worker.request(PYTHON)["status"] == status
        assert worker._process is None  # reaped at once


def test_a_blocked_request_write_is_bounded_by_the_request_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    with BoundedWorker(timeout_seconds=0.25) as worker:
        _faulty(monkeypatch, worker, "import time; time.sleep(60)")
        assert worker.request({**PYTHON, "padding": "x" * 300_000})["status"] == "timeout"
        assert worker._process is None


def test_after_a_timeout_the_own_command_serves_again(monkeypatch: pytest.MonkeyPatch) -> None:
    worker = BoundedWorker(timeout_seconds=0.25)
    own = worker.worker_command
    _faulty(monkeypatch, worker, "import time; time.sleep(60)")
    child = worker._start()
    assert worker.request(PYTHON)["status"] == "timeout"
    assert child.poll() is not None and child.stdin is not None and child.stdin.closed
    monkeypatch.setattr(worker, "worker_command", own)
    worker.timeout_seconds = 30  # a loaded machine starts a worker slowly
    try:
        assert worker.request(PYTHON)["status"] == "correct"
    finally:
        worker.close()


def test_a_real_worker_from_a_replaced_command_is_answered_after_its_greeting(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """0.4.0's address-space test: a worker ``main`` whose ``handle`` exhausts memory."""
    code = (
        "from modebench import verifier_worker as worker\n"
        "from modebench.diagnostics import WORKER_MEMORY_BYTES\n"
        "worker.handle = lambda request: bytearray(WORKER_MEMORY_BYTES * 2)\n"
        "worker.main()\n"
    )
    with BoundedWorker(timeout_seconds=60) as process:
        monkeypatch.setattr(process, "worker_command", lambda: [sys.executable, "-c", code])
        assert process.request(PYTHON)["status"] == "resource_limit"
        assert process._process is None


def test_an_oversized_request_starts_no_worker() -> None:
    with BoundedWorker() as worker:
        assert worker.request({"padding": "x" * MAX_REQUEST_BYTES})["status"] == "resource_limit"
        assert worker._process is None and worker.starts == 0


def test_a_worker_that_cannot_start_is_a_structured_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise OSError("spawn unavailable")

    monkeypatch.setattr("modebench.worker_process.subprocess.Popen", refuse)
    with BoundedWorker() as worker:
        reply = worker.request(PYTHON)
    assert reply["status"] == "worker_failure" and "spawn unavailable" in reply["detail"]


def test_an_interrupt_inside_a_replaced_selector_leaves_no_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    worker = BoundedWorker()
    process = worker._start()

    def interrupt(*args: Any, **kwargs: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr("modebench.worker_process.selectors.EpollSelector.select", interrupt)
    with pytest.raises(KeyboardInterrupt):
        worker.request(PYTHON)
    assert worker._process is None and process.poll() is not None


def test_the_legacy_validator_raises_on_a_dead_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    worker = PythonFactorVerifierProcess(timeout_seconds=0.25)
    _faulty(monkeypatch, worker, "import os; os._exit(4)")
    with pytest.raises(VerifierExecutionError) as caught:
        worker.validate(PYTHON["candidate"], SPEC)
    assert caught.value.diagnostic["status"] == "worker_failure"


@pytest.mark.parametrize(("code", "status"), [pytest.param(*p.values, id=p.id) for p in BAD_WORKERS[:4]])
def test_a_replaced_shared_worker_grades_api_calls(
    monkeypatch: pytest.MonkeyPatch, code: str, status: str
) -> None:
    """Re:Max: ``verifier._SHARED`` replaced by a worker started from a faulty command; its
    ``api.grade`` calls see the fault, then the replaced worker recovers."""
    task = api.Task(id="one", level=1, domain="countdown", problem="", answer=COUNTDOWN)
    worker = BoundedWorker(timeout_seconds=0.5)
    monkeypatch.setattr(verifier, "_SHARED", worker)
    try:
        with monkeypatch.context() as patched:
            patched.setattr(worker, "worker_command", lambda: [sys.executable, "-c", code])
            assert api.grade(task, "1+2+3")["status"] == status
            assert worker._process is None
        worker.timeout_seconds = 60
        assert api.grade(task, "1+2+3")["status"] == "correct"
        assert worker._process is not None  # the replacement served, not a worker of our own
    finally:
        worker.close()


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (RuntimeError("bug"), "worker_failure"),
        (TimeoutError("late"), "timeout"),
        (MemoryError(), "resource_limit"),
    ],
)
def test_an_exception_in_a_replaced_handle_is_a_status(
    monkeypatch: pytest.MonkeyPatch, error: BaseException, status: str
) -> None:
    def fail(request: Any) -> Any:
        raise error

    monkeypatch.setattr("modebench.verifier_worker.handle", fail)
    assert guarded_handle(PYTHON)["status"] == status


def test_the_worker_timer_interrupts_a_stalled_handle(monkeypatch: pytest.MonkeyPatch) -> None:
    from modebench.verifier_worker import _timeout

    monkeypatch.setattr("modebench.verifier_worker.handle", lambda request: time.sleep(5))
    previous = signal.signal(signal.SIGALRM, _timeout)
    try:
        assert guarded_handle(PYTHON)["status"] == "timeout"
        assert signal.getitimer(signal.ITIMER_REAL)[0] == 0  # disarmed
    finally:
        signal.signal(signal.SIGALRM, previous)


def test_no_timer_is_armed_under_another_handler(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only 0.4.0's ``_timeout`` gets 0.4.0's deadline: with no handler an alarm would kill the
    caller, and another one's timer (a test runner's) must not be cancelled."""
    seen: list[float] = []

    def look(request: Any) -> Any:
        seen.append(signal.getitimer(signal.ITIMER_REAL)[0])
        return result("incorrect", text="x")

    monkeypatch.setattr("modebench.verifier_worker.handle", look)
    previous = signal.signal(signal.SIGALRM, lambda *args: None)
    try:
        signal.setitimer(signal.ITIMER_REAL, 600)  # another handler's timer, running
        assert guarded_handle(PYTHON)["status"] == "incorrect"
        assert 500 < seen[0] <= 600 and signal.getitimer(signal.ITIMER_REAL)[0] > 500  # untouched
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


BACKENDS = [
    ("countdown", "modebench.domains.countdown.verifier._countdown_eval_and_numbers"),
    ("graph_coloring", "modebench.domains.graph_coloring.verifier._verify_graph_coloring_colors"),
    ("python_factors", "modebench.python_modebench.execute_python_factor_candidate"),
    ("mathir", "modebench.mathir._execute_mathir_commands"),
    ("pantry_plan", "modebench.pantry_plan.validate_pantry_plan"),
]


def _grade_request(domain: str) -> dict[str, Any]:
    corpus = reference_json("tests/fixtures/conformance-v1.json")
    fixture = next(f for f in corpus["fixtures"] if f["level"] == 2 and f["domain"] == domain)
    witness = fixture["witnesses"][0]["response"] if fixture["witnesses"] else fixture["cases"][0]["response"]
    return {
        "operation": "grade",
        "level": 2,
        "domain": domain,
        "answer": fixture["row"]["answer"],
        "text": witness,
    }


@pytest.mark.parametrize(("domain", "target"), BACKENDS)
def test_a_replaced_verifier_step_that_raises_is_a_worker_failure(
    monkeypatch: pytest.MonkeyPatch, domain: str, target: str
) -> None:
    request = _grade_request(domain)
    assert guarded_handle(request)["status"] == "correct"  # the witness verifies untouched
    calls: list[Any] = []

    def broken(*args: Any, **kwargs: Any) -> Any:
        calls.append(args)
        raise RuntimeError("injected backend defect")

    monkeypatch.setattr(target, broken)
    assert guarded_handle(request) == result("worker_failure", detail="unexpected RuntimeError")
    assert calls


@pytest.mark.parametrize(
    ("error", "status"), [(TimeoutError(), "timeout"), (MemoryError(), "resource_limit")]
)
def test_a_replaced_verifier_step_s_timeout_and_memory_errors(
    monkeypatch: pytest.MonkeyPatch, error: BaseException, status: str
) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise error

    monkeypatch.setattr(BACKENDS[0][1], broken)
    assert guarded_handle(_grade_request("countdown"))["status"] == status


def test_the_verifier_steps_keep_0_4_0_s_arguments(monkeypatch: pytest.MonkeyPatch) -> None:
    """A replacement that wraps the original sees what 0.4.0 passed it and changes nothing."""
    from modebench.domains.countdown import verifier as countdown
    from modebench.domains.graph_coloring import verifier as graph

    seen: list[Any] = []
    original_eval, original_verify = (
        countdown._countdown_eval_and_numbers,
        graph._verify_graph_coloring_colors,
    )

    def spy_eval(node: Any) -> Any:
        seen.append(original_eval(node))
        return seen[-1]

    def spy_verify(colors: Any, spec: Any) -> Any:
        seen.append(original_verify(colors, spec))
        return seen[-1]

    monkeypatch.setattr(countdown, "_countdown_eval_and_numbers", spy_eval)
    monkeypatch.setattr(graph, "_verify_graph_coloring_colors", spy_verify)
    assert guarded_handle({"operation": "grade", "level": 1, "domain": "countdown", "answer": COUNTDOWN,
                           "text": "\\boxed{1+2+3}"})["status"] == "correct"  # fmt: skip
    assert seen == [(6, [1, 2, 3])]
    assert guarded_handle(_grade_request("graph_coloring"))["status"] == "correct"
    assert seen[-1] is True


def test_without_replacements_the_worker_grades_as_usual() -> None:
    """The fast path: the real worker, its own command, no greeting skipped, the same verdicts."""
    with BoundedWorker() as worker:
        assert worker._command_replaced() is False
        reply = worker.request({"operation": "grade", "level": 1, "domain": "countdown", "answer": COUNTDOWN,
                                "text": "\\boxed{1+2+3}"})  # fmt: skip
        assert reply["status"] == "correct" and worker._foreign is False
        assert json.loads(json.dumps(reply))["canonical_key"]


def _one_record(tmp_path: Any) -> Any:
    path = tmp_path / "input.jsonl"
    record = {"id": "one", "level": 1, "domain": "countdown", "answer": COUNTDOWN, "responses": ["1+2+3"]}
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    return path


def test_the_cli_writes_the_failure_receipt_when_grading_fails(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """0.4.0's ``main()`` (reading ``sys.argv``) exits 3 and the receipt withholds every score."""
    from modebench.cli import main

    output = tmp_path / "output.json"
    monkeypatch.setattr(
        "modebench.evaluation.grade_response", lambda *args: result("worker_failure", detail="x")
    )
    monkeypatch.setattr(
        sys, "argv", ["modebench", "evaluate", str(_one_record(tmp_path)), "--output", str(output)]
    )
    with pytest.raises(SystemExit) as caught:
        main()
    assert caught.value.code == 3
    receipt = json.loads(output.read_text(encoding="utf-8"))
    assert receipt["evaluation"]["status"] == "failed" and receipt["cells"][0]["accuracy"] is None


def test_the_cli_writes_the_failure_receipt_when_reference_validation_s_worker_fails(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from modebench.cli import main

    def fail(*args: Any) -> Any:
        raise VerifierExecutionError(result("worker_failure", detail="reference worker unavailable"))

    output = tmp_path / "output.json"
    monkeypatch.setattr("modebench.evaluation.validate_reference", fail)
    argv = ["evaluate", str(_one_record(tmp_path)), "--output", str(output)]
    assert main(argv) == 3  # with explicit arguments the code is returned
    receipt = json.loads(output.read_text(encoding="utf-8"))
    assert receipt["failure"]["status"] == "worker_failure" and "line 1" in receipt["failure"]["detail"]
    assert receipt["cells"] == []


def test_a_worker_found_dead_between_requests_is_reported_then_replaced() -> None:
    """0.4.0 and Re:Max: the request after a worker died is ``worker_failure`` (never hidden); the
    next one starts a new worker. Batches replace it silently (tests/test_hardening.py)."""
    with PythonFactorVerifierProcess() as worker:
        assert worker.check(PYTHON["candidate"], SPEC)["status"] == "correct"
        old = worker._process
        assert old is not None
        old.kill()
        old.wait(timeout=5)
        assert worker.check(PYTHON["candidate"], SPEC)["status"] == "worker_failure"
        assert worker._process is None
        assert worker.check(PYTHON["candidate"], SPEC)["status"] == "correct"
        assert worker._process is not None and worker._process.pid != old.pid
