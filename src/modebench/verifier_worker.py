"""Worker process main loop: warm up, then grade JSON-line requests under rlimits and deadlines.

Protocol (one JSON object per line, both directions):

* worker → parent, once after warm-up: ``{"ready": true}``.
* ``{"operation": "grade", "level", "domain", "answer", "text"}`` → one GradeResult line.
* ``{"operation": "reference", "level", "domain", "answer"}`` → ``correct`` + ``reference`` or
  ``invalid_reference``.
* ``{"operation": "batch", "level", "domain", "answer", "texts": [...]}`` → one GradeResult line per
  text, streamed as each finishes, each graded under its own deadline exactly as if sent alone.

After any unscorable reply (timeout, resource_limit, worker_failure) the worker exits, as the
reference does, so no possibly corrupted state is reused; the parent resends what is left.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import sys
import time
from typing import Any

from modebench.contracts import DOMAINS
from modebench.diagnostics import (
    DOMAIN_DEADLINE_SECONDS,
    MAX_REQUEST_BYTES,
    UNSCORABLE,
    WORKER_MEMORY_BYTES,
    result,
)
from modebench.domains import all_plugins, plugin
from modebench.domains._pipeline import ReferenceProblem, check_reference, grade_local, reply_guard

#: Batches carry up to this many bytes per line; each text inside is still held to the 1 MiB
#: single-request cap by the parent before it is sent.
MAX_BATCH_BYTES = 64 * MAX_REQUEST_BYTES

#: Test-only fault injection: active only when the parent sets this variable in the worker's
#: environment, so nothing in a model response can reach it.
FAULT_ENV = "MODEBENCH_WORKER_FAULT"
FAULT_TEXT = "\x00modebench-fault\x00"
_FAULT = os.environ.get(FAULT_ENV)  # read once: it is fixed for the worker's life


class _ResultCache:
    """Scorable results of (task, response) pairs: RL logs repeat the same answers many times.

    Grading is pure, so a remembered verdict is the verdict; only short responses are kept and
    the cache is bounded, so worker memory stays flat.
    """

    MAX_ENTRIES = 100_000
    MAX_TEXT = 2048

    def __init__(self) -> None:
        self._entries: dict[tuple[tuple[str, str, str], str], dict[str, Any]] = {}

    def get(self, task: tuple[str, str, str], text: Any) -> dict[str, Any] | None:
        if not isinstance(text, str) or len(text) > self.MAX_TEXT:
            return None
        return self._entries.get((task, text))

    def put(self, task: tuple[str, str, str], text: Any, reply: dict[str, Any]) -> None:
        if not isinstance(text, str) or len(text) > self.MAX_TEXT or reply["status"] in UNSCORABLE:
            return
        if len(self._entries) >= self.MAX_ENTRIES:
            self._entries.clear()  # cheap and bounded; a cold cache only costs speed
        self._entries[(task, text)] = reply


_RESULTS = _ResultCache()


class Deadline(BaseException):
    """Raised by SIGALRM; a BaseException so no domain ``except Exception`` can swallow it."""


_armed = False


def _on_alarm(signum: int, frame: Any) -> None:
    if _armed:
        raise Deadline


def _deadline_for(request: dict[str, Any]) -> float:
    """The plug-in's budget for grading, chosen by the raw domain string as in the reference.

    An unknown or aliased domain gets the general budget; reference checks always do.
    """
    domain = request.get("domain")
    if request.get("operation") in ("grade", "batch") and isinstance(domain, str) and domain in DOMAINS:
        return plugin(domain).deadline_seconds
    return DOMAIN_DEADLINE_SECONDS


def _guarded(seconds: float, action: Any, *args: Any) -> dict[str, Any]:
    """Run one operation under the wall deadline; map evaluator exceptions to statuses."""
    global _armed
    try:
        try:
            _armed = True
            signal.setitimer(signal.ITIMER_REAL, seconds)
            reply: dict[str, Any] = action(*args)
        finally:
            _armed = False
            signal.setitimer(signal.ITIMER_REAL, 0)
    except Deadline:
        return result("timeout", detail="worker execution deadline exceeded")
    except MemoryError:
        return result("resource_limit", detail="worker memory limit exceeded")
    except Exception as exc:  # the one broad guard: evaluator failures become a status
        return result("worker_failure", detail=f"unexpected {type(exc).__name__}")
    return reply


def _grade(level: Any, domain: Any, answer: Any, text: Any) -> dict[str, Any]:
    fault = _FAULT
    if fault and text == FAULT_TEXT:
        _inject(fault)
    return reply_guard(grade_local(level, domain, answer, text))


def _reference(level: Any, domain: Any, answer: Any) -> dict[str, Any]:
    fault = _FAULT
    if fault and answer == FAULT_TEXT:
        _inject(fault)
    try:
        parsed = check_reference(level, domain, answer)
    except ReferenceProblem as exc:
        return result("invalid_reference", detail=exc.detail)
    return result("correct", reference=parsed)


def _inject(kind: str) -> None:
    """Test-only faults (see FAULT_ENV)."""
    if kind == "exit":
        os._exit(17)
    if kind == "hang":  # a hang the worker's own timer cannot interrupt
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
        time.sleep(3600)
    if kind == "slow":
        while True:
            pass
    if kind == "garbage":
        sys.stdout.buffer.write(b"this is not json\n")
        sys.stdout.buffer.flush()
        time.sleep(3600)
    if kind == "oversize":
        sys.stdout.buffer.write(b'{"status": "' + b"x" * 300_000 + b'"}\n')
        sys.stdout.buffer.flush()
        time.sleep(3600)
    if kind == "memory":  # one allocation beyond the address-space cap
        bytearray(WORKER_MEMORY_BYTES)
    raise RuntimeError(f"unknown fault {kind}")


def _send(reply: dict[str, Any]) -> None:
    sys.stdout.buffer.write(json.dumps(reply, allow_nan=False).encode("ascii") + b"\n")
    sys.stdout.buffer.flush()


def _fatal(reply: dict[str, Any]) -> bool:
    """After these the worker exits (its state may be damaged); the parent resends the rest."""
    return reply["status"] in UNSCORABLE and reply["status"] != "invalid_reference"


def _grade_group(group: Any, replies: list[dict[str, Any]]) -> bool:
    """Grade one prompt's texts, streaming a reply per text; False once a fatal reply was sent."""
    if not isinstance(group, dict) or not isinstance(group.get("texts"), list):
        reply = result("worker_failure", detail="invalid worker request")
        _send(reply)
        replies.append(reply)
        return False
    seconds = _deadline_for({"operation": "batch", "domain": group.get("domain")})
    level, domain, answer = group.get("level"), group.get("domain"), group.get("answer")
    task = (json.dumps(level), json.dumps(domain), json.dumps(answer))
    for text in group["texts"]:
        remembered = _RESULTS.get(task, text)
        reply = (
            remembered if remembered is not None else _guarded(seconds, _grade, level, domain, answer, text)
        )
        _RESULTS.put(task, text, reply)
        _send(reply)
        replies.append(reply)
        if _fatal(reply):
            return False
    return True


def handle(request: dict[str, Any]) -> list[dict[str, Any]]:
    """Handle one request; replies are sent as they are produced and also returned.

    ``batch`` carries one prompt's texts; ``groups`` carries several prompts (a list of
    ``{level, domain, answer, texts}``), so a busy evaluation pays one round trip per group of
    prompts instead of one per prompt. Either way every text is graded exactly as if alone.
    """
    seconds = _deadline_for(request)
    operation = request.get("operation")
    replies: list[dict[str, Any]] = []
    if operation == "batch":
        _grade_group(request, replies)
        return replies
    if operation == "groups":
        groups = request.get("groups")
        if not isinstance(groups, list):
            reply = result("worker_failure", detail="invalid worker request")
            _send(reply)
            return [reply]
        for group in groups:
            if not _grade_group(group, replies):
                break
        return replies
    if operation == "grade":
        reply = _guarded(
            seconds,
            _grade,
            request.get("level"),
            request.get("domain"),
            request.get("answer"),
            request.get("text"),
        )
    elif operation == "reference":
        reply = _guarded(
            seconds, _reference, request.get("level"), request.get("domain"), request.get("answer")
        )
    else:
        reply = result("worker_failure", detail="invalid worker request")
    _send(reply)
    return [reply]


def _warm_up() -> None:
    # Import every domain (SymPy included) before any deadline is armed, so start-up cost never
    # turns into a spurious timeout.
    for found in all_plugins():
        if found.warm_up is not None:
            found.warm_up()


def main() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (WORKER_MEMORY_BYTES, WORKER_MEMORY_BYTES))
    signal.signal(signal.SIGALRM, _on_alarm)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when we stop
    _warm_up()
    if os.environ.get(FAULT_ENV) == "startup":
        os._exit(3)
    _send({"ready": True})
    stdin = sys.stdin.buffer
    while True:
        line = stdin.readline(MAX_BATCH_BYTES + 1)
        if not line:
            return
        if len(line) > MAX_BATCH_BYTES or not line.endswith(b"\n"):
            _send(result("resource_limit", detail="request byte limit exceeded"))
            return
        try:
            request = json.loads(line)
        except (ValueError, RecursionError):
            request = None
        if not isinstance(request, dict):
            _send(result("worker_failure", detail="invalid worker request"))
            return
        replies = handle(request)
        if replies and _fatal(replies[-1]):
            return


def guarded_handle(request: dict[str, Any]) -> list[dict[str, Any]]:
    """Compatibility name: ``handle`` already guards every operation."""
    return handle(request)


if __name__ == "__main__":
    main()
