"""The isolation boundary: faults, deadlines, caps, restart, batching, no orphans."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from modebench.diagnostics import MAX_RESPONSE_CHARS
from modebench.verifier import close_worker, grade_response
from modebench.verifier_worker import FAULT_ENV, FAULT_TEXT
from modebench.worker_process import BoundedWorker
from tests.samples import all_domains, sample_row

DOMAINS = all_domains()


def worker_with(fault: str | None = None, timeout: float = 5.0) -> BoundedWorker:
    env = dict(os.environ)
    env.pop(FAULT_ENV, None)
    if fault is not None:
        env[FAULT_ENV] = fault
    return BoundedWorker(timeout_seconds=timeout, env=env)


def grade_request(domain: str, text: Any) -> dict[str, Any]:
    return {
        "operation": "grade",
        "level": 1,
        "domain": domain,
        "answer": sample_row(domain)["answer"],
        "text": text,
    }


FAULTS = [
    ("exit", "worker_failure", "OSError: worker closed stdout"),
    ("slow", "timeout", "worker execution deadline exceeded"),
    ("hang", "timeout", "parent request deadline exceeded"),
    ("garbage", "worker_failure", "JSONDecodeError: Expecting value"),
    ("oversize", "worker_failure", "worker reply byte limit exceeded"),
    ("memory", "resource_limit", "worker memory limit exceeded"),
    ("startup", "worker_failure", "worker start-up failed"),
]


@pytest.mark.parametrize("domain", DOMAINS)
@pytest.mark.parametrize(("fault", "status", "detail"), FAULTS, ids=[f[0] for f in FAULTS])
def test_fault_ends_in_status_and_pool_recovers(domain: str, fault: str, status: str, detail: str) -> None:
    with worker_with(fault, timeout=3.0) as worker:
        started = time.monotonic()
        reply = worker.request(grade_request(domain, FAULT_TEXT))
        assert reply["status"] == status, reply
        assert detail in (reply["detail"] or "")
        assert reply["graded_text"] == "" and reply["canonical_key"] is None and reply["verified"] is False
        # The status says which deadline ended it; the bound only catches a wait for the fault's
        # hour-long sleep (generous: a busy machine starts workers slowly).
        assert time.monotonic() - started < 60.0
        assert worker._process is None  # the failed worker was reaped
    with worker_with(None) as healthy:
        reply = healthy.request(grade_request(domain, "not a solution"))
        assert reply["status"] in ("malformed", "incorrect"), reply


def test_worker_is_replaced_after_failure() -> None:
    with worker_with("exit") as worker:
        first = worker.request(grade_request("countdown", FAULT_TEXT))
        assert first["status"] == "worker_failure"
        second = worker.request(grade_request("countdown", "not a solution"))
        assert second["status"] == "malformed"
        assert worker.starts == 2


def test_batch_equals_one_by_one_and_recovers_mid_batch() -> None:
    domain = "countdown"
    row = sample_row(domain)
    texts = ["x", FAULT_TEXT, "1+1", "not a solution", FAULT_TEXT, ""]
    with worker_with("exit") as worker:
        batch = worker.grade_batch(1, domain, row["answer"], texts)
        single = [worker.request(grade_request(domain, text)) for text in texts]
    assert [r["status"] for r in batch] == [r["status"] for r in single]
    assert batch[1]["status"] == "worker_failure" and batch[2]["status"] != "worker_failure"


def test_timeout_argument_is_validated() -> None:
    for wrong in (0, -1, float("inf"), float("nan"), True, "5"):
        with pytest.raises(ValueError, match="timeout_seconds must be positive and finite"):
            BoundedWorker(timeout_seconds=wrong)  # type: ignore[arg-type]


HOSTILE = [
    "(" * 50_000 + "1" + ")" * 50_000,
    "\\boxed{" + "(" * 5000 + "1" + ")" * 5000 + "}",
    "\\boxed{" + "9" * 100_000 + "}",
    "\\boxed{" + "9**9**9**9" + "}",
    "\\boxed{" + "{" * 60_000 + "}",
    "é" * MAX_RESPONSE_CHARS,
    "\U0001f600" * 90_000,
    "\\" * MAX_RESPONSE_CHARS,
    "\x00\udc80 lone surrogate",
]


@pytest.mark.parametrize("domain", DOMAINS)
def test_hostile_responses_end_in_structured_status(domain: str) -> None:
    row = sample_row(domain)
    try:
        for text in HOSTILE + ["x" * (1024 * 1024)]:
            started = time.monotonic()
            reply = grade_response(1, domain, row, text)
            assert reply["status"] in (
                "correct",
                "incorrect",
                "malformed",
                "timeout",
                "worker_failure",
                "resource_limit",
            ), reply
            assert set(reply) >= {"status", "verified", "canonical_key", "graded_text", "detail"}
            assert time.monotonic() - started < 60.0  # deadlines hold; generous for a busy machine
        assert grade_response(1, domain, row, "not a solution")["status"] in ("malformed", "incorrect")
    finally:
        close_worker()


def test_bad_python_objects_never_crash() -> None:
    row = sample_row("countdown")
    odd: list[Any] = [None, 3, b"bytes", ["list"], {"a": 1}, float("nan"), object()]
    for value in odd:
        reply = grade_response(1, "countdown", row, value)
        assert reply["status"] in ("malformed", "invalid_reference"), reply
    for bad_row in (None, 3, {}, {"answer": object()}, {"answer": float("inf")}, {"answer": "{"}):
        assert grade_response(1, "countdown", bad_row, "1")["status"] == "invalid_reference"
    for level in (0, 6, True, 1.0, "L1", " 1", None):
        assert grade_response(level, "countdown", row, "1")["status"] == "invalid_reference"
    assert grade_response(1, "chess", row, "1")["status"] == "invalid_reference"
    close_worker()


def test_no_orphan_worker_after_parent_sigkill(tmp_path: Path) -> None:
    src = Path(__file__).resolve().parents[2] / "src"
    script = textwrap.dedent(
        f"""
        import sys, time
        sys.path.insert(0, {str(src)!r})
        from modebench.worker_process import BoundedWorker
        worker = BoundedWorker()
        reply = worker.request({{"operation": "grade", "level": 1, "domain": "countdown",
                                 "answer": {{"verifier": "countdown", "numbers": [1, 2], "target": 3}},
                                 "text": "1+2"}})
        print(worker._process.pid, flush=True)
        time.sleep(60)
        """
    )
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None
    worker_pid = int(parent.stdout.readline())
    os.kill(worker_pid, 0)  # alive while the parent lives
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(worker_pid, 0)
        except ProcessLookupError:
            return
        # A zombie reaped by init also counts as gone; check /proc state.
        stat = Path(f"/proc/{worker_pid}/stat")
        if stat.exists() and ") Z " in stat.read_text():
            return
        time.sleep(0.1)
    pytest.fail(f"worker {worker_pid} survived its parent")


@pytest.mark.parametrize(
    "values",
    [
        (1, "countdown", {"a": [1, 2]}, "text"),
        ("level3", "pantry", '{"x": 1}', 'é\U0001f600\\"\n'),
        (5, "mathir", {"k": "v" * 100}, ""),
    ],
)
def test_request_size_formula_is_exact(values: tuple[Any, ...]) -> None:
    import json

    from modebench.domains._pipeline import _GRADE_ENVELOPE, encoded_size

    level, domain, answer, text = values
    request = {"operation": "grade", "level": level, "domain": domain, "answer": answer, "text": text}
    assert _GRADE_ENVELOPE + sum(encoded_size(v) for v in values) == len(json.dumps(request)) + 1


def test_groups_recover_mid_request_exactly_like_single_requests() -> None:
    """Several prompts in one request: a fault in the middle is isolated to its own item."""
    rows = [sample_row(domain) for domain in DOMAINS]
    from modebench.domains._pipeline import encode_answer

    groups = [
        (1, domain, encode_answer(row["answer"]), ["not a solution", FAULT_TEXT if index % 2 else "x", ""])
        for index, (domain, row) in enumerate(zip(DOMAINS, rows))
    ]
    with worker_with("exit") as worker:
        grouped = worker.grade_groups(groups)
        single = [[worker.request(grade_request(g[1], text)) for text in g[3]] for g in groups]
    assert [[r["status"] for r in g] for g in grouped] == [[r["status"] for r in g] for g in single]
    assert grouped[1][1]["status"] == "worker_failure" and grouped[1][2]["status"] != "worker_failure"


def test_requests_are_split_to_fit_the_worker_line_cap() -> None:
    from modebench.parallel import REQUEST_BUDGET, _requests

    big = "x" * 100_000
    groups = [
        (1, "countdown", {}, [big] * 20),
        (1, "countdown", {}, ["a", "b"]),
        (1, "countdown", {}, [big] * 30),
    ]
    requests = _requests(groups, [10, 10, 10])
    covered: dict[int, list[tuple[int, int]]] = {}
    for request in requests:
        cost = sum(12 * len(t) + 64 for index, start, stop in request for t in groups[index][3][start:stop])
        assert cost <= REQUEST_BUDGET
        for index, start, stop in request:
            covered.setdefault(index, []).append((start, stop))
    for index, group in enumerate(groups):  # every text exactly once, in order
        spans = covered[index]
        assert spans[0][0] == 0 and spans[-1][1] == len(group[3])
        assert all(a[1] == b[0] for a, b in zip(spans, spans[1:]))


# The worker's own deadline (0.25 s for python_factors, 2 s for countdown; the detail says it was
# the worker's, not the parent's 5 s). Upper bounds are generous for a busy machine but still tell
# the two domains apart: python_factors stays under countdown's 2 s.
@pytest.mark.parametrize(("domain", "low", "high"), [("python_factors", 0.2, 1.9), ("countdown", 1.9, 5.0)])
def test_worker_deadline_follows_the_domain(domain: str, low: float, high: float) -> None:
    with worker_with("slow", timeout=5.0) as worker:
        worker.request(grade_request(domain, "warm up"))
        started = time.monotonic()
        reply = worker.request(grade_request(domain, FAULT_TEXT))
        elapsed = time.monotonic() - started
    assert reply["status"] == "timeout" and reply["detail"] == "worker execution deadline exceeded"
    assert low <= elapsed <= high, elapsed


def test_worker_command_puts_this_copy_of_the_package_first() -> None:
    """A worker imports the very tree its parent runs (a benchmark's ``--src``, a checkout beside
    an installed copy): the path its bootstrap inserts holds this ``modebench`` package."""
    import subprocess
    import sys
    from pathlib import Path

    import modebench
    from modebench.isolation.process import worker_command

    command = worker_command()
    assert (Path(command[3]) / "modebench" / "__init__.py").resolve() == Path(modebench.__file__).resolve()
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; sys.path.insert(0, sys.argv[1]); import modebench; print(modebench.__file__)",
            command[3],
        ],
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": "/usr/bin:/bin"},
        cwd="/",
    )
    assert Path(done.stdout.strip()).resolve() == Path(modebench.__file__).resolve()
