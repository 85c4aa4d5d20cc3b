"""Worker process main loop: warm up, then grade JSON-line requests under rlimits and deadlines.

Protocol (one JSON line per message, both directions; see :mod:`modebench.isolation.protocol`):

* worker → parent, once after warm-up: ``{"ready": true}``.
* ``{"operation": "grade", "level", "domain", "answer", "text"}`` → one GradeResult line.
* ``{"operation": "reference", "level", "domain", "answer"}`` → ``correct`` + ``reference`` or
  ``invalid_reference``.
* ``{"operation": "groups", "groups": [{"level", "domain", "answer_json", "texts": [...]}, ...]}``
  (optionally ``"flush": "each"``) → one compact item reply per text, in order, each graded
  under its own deadline exactly as if sent alone (see ``_ItemOutput`` for when lines are
  flushed).
* ``{"operation": "prompts", "policy", "prompts": [[seq, prepared record], ...]}`` → for each
  prompt the item replies of its distinct texts, as ``groups`` sends them, then the prompt's
  assembled result (:mod:`modebench.isolation.assemble`).

After any unscorable reply (timeout, resource_limit, worker_failure) the worker exits, as the
reference does, so no possibly corrupted state is reused; the parent resends what is left.
"""

from __future__ import annotations

import json
import os
import resource
import select
import signal
import sys
import time
from typing import Any, BinaryIO

from modebench import domains
from modebench.bounded_cache import ResultCache
from modebench.compat.worker import guarded_handle as guarded_handle  # 0.4.0's single-reply step
from modebench.contracts import normalize_domain
from modebench.diagnostics import (
    DOMAIN_DEADLINE_SECONDS,
    MAX_REQUEST_BYTES,
    UNSCORABLE,
    WORKER_MEMORY_BYTES,
    result,
)
from modebench.diagnostics import PYTHON_DEADLINE_SECONDS as PYTHON_DEADLINE_SECONDS
from modebench.domains._interpreter import settle
from modebench.domains._pipeline import (
    REFERENCES,
    ReferenceProblem,
    check_reference,
    grade_local,
    grade_text,
    invalid_reference,
    reply_guard,
    resolve,
)
from modebench.domains._untimed import install as untimed_install
from modebench.isolation.protocol import WARM_ENV, item_line, reply_line
from modebench.receipt.schema import MAX_RESPONSES_PER_PROMPT

#: Batches carry up to this many bytes per line; each text inside is still held to the 1 MiB
#: single-request cap by the parent before it is sent.
MAX_BATCH_BYTES = 64 * MAX_REQUEST_BYTES

#: Test-only fault injection: active only when the parent sets this variable in the worker's
#: environment, so nothing in a model response can reach it.
FAULT_ENV = "MODEBENCH_WORKER_FAULT"
FAULT_TEXT = "\x00modebench-fault\x00"
_FAULT = os.environ.get(FAULT_ENV)  # read once: it is fixed for the worker's life
#: With this value the fault is named by the text itself (``FAULT_TEXT + kind``), so one worker
#: can meet several kinds (a test sends an endless loop and a memory bomb through one cluster).
FAULT_BY_TEXT = "by-text"


def _fault_kind(text: Any) -> str | None:
    if not _FAULT or not isinstance(text, str) or not text.startswith(FAULT_TEXT):
        return None
    if text == FAULT_TEXT:
        return _FAULT
    return text[len(FAULT_TEXT) :] if _FAULT == FAULT_BY_TEXT else None


_RESULTS = ResultCache()  # bounded in bytes: see modebench.bounded_cache


class Deadline(BaseException):
    """Raised by SIGALRM; a BaseException so no domain ``except Exception`` can swallow it."""


def _timeout(*_args: Any) -> None:
    """0.4.0's SIGALRM handler (``verifier_worker._timeout``): a ``TimeoutError``.

    Kept for callers that install it (0.4.0's tests arm a timer around ``guarded_handle``). Our
    own loop installs ``_on_alarm`` instead, unless this name was replaced before ``main`` ran:
    then the replacement is the handler, as in 0.4.0.
    """
    raise TimeoutError("worker execution deadline exceeded")


_OWN_TIMEOUT = _timeout


_armed = False
_expires = 0.0  # time.monotonic() at which the armed item's window closes
#: time.monotonic() at which the interval timer, as last set here, fires; 0.0 once it has fired
#: or was stopped here. Only the items of one group rely on it (``_item_guard``).
_timer_due = 0.0


def _on_alarm(signum: int, frame: Any) -> None:
    # Between the items of a request the timer is left running (the next item re-arms it, and
    # the request disarms it at the end), which saves a system call per item. An expiry of an
    # earlier item's window can therefore reach the handler while a later item is armed: it is
    # recognised by the clock, and the timer is set again for what is left of that item's window.
    global _timer_due
    _timer_due = 0.0
    if not _armed:
        return
    remaining = _expires - time.monotonic()
    if remaining > 0.001:
        _timer_due = _expires
        signal.setitimer(signal.ITIMER_REAL, remaining)
        return
    raise Deadline


def _untimed(action: Any) -> None:
    """A plug-in's one-off load met inside an item (MathIR's SymPy, ``domains._untimed``): the
    item's clock stops around it, as warm-up never runs under a deadline. Replies already made
    are flushed first, so the parent's per-reply window restarts before the load."""
    global _armed, _expires, _timer_due
    if not _armed:
        action()
        return
    _output().flush()
    remaining = _expires - time.monotonic()
    _armed = False
    signal.setitimer(signal.ITIMER_REAL, 0)
    _timer_due = 0.0
    try:
        action()
    finally:
        remaining = max(remaining, 0.001)
        _expires = _timer_due = time.monotonic() + remaining
        _armed = True
        signal.setitimer(signal.ITIMER_REAL, remaining)


def _deadline_for(operation: Any, domain: Any) -> float:
    """The plug-in's budget for grading, chosen by the raw domain string as in the reference.

    An unknown or aliased domain gets the general budget; reference checks always do. This runs
    before any deadline is armed, so a third-party plug-in is imported (and warmed up) here, for
    whichever operation names it first: under the worker's rlimits, never inside a grading window.
    """
    seconds = domains.deadline_seconds(domain)
    if seconds is None:
        return DOMAIN_DEADLINE_SECONDS
    _warm([domain])
    return seconds if operation in ("grade", "groups") else DOMAIN_DEADLINE_SECONDS


def _guarded(seconds: float, action: Any, *args: Any) -> dict[str, Any]:
    """Run one operation under its own wall deadline; map evaluator exceptions to statuses."""
    global _armed, _expires, _timer_due
    settle()  # interpreter settings from before any plug-in: no plug-in flips a built-in verdict
    try:
        try:
            _expires = _timer_due = time.monotonic() + seconds
            signal.setitimer(signal.ITIMER_REAL, seconds)  # a fresh window for this item
            _armed = True
            reply: dict[str, Any] = action(*args)
        finally:
            _armed = False
    except (Deadline, TimeoutError):  # a verifier's own timeout-like error is a timeout too (0.4.0)
        return _failed("timeout")
    except MemoryError:
        return _failed("resource_limit")
    except Exception as exc:  # the one broad guard: evaluator failures become a status
        return result("worker_failure", detail=f"unexpected {type(exc).__name__}")
    return reply


def _failed(status: str) -> dict[str, Any]:
    """The result of an item stopped by its deadline or by the memory limit."""
    if status == "timeout":
        return result("timeout", detail="worker execution deadline exceeded")
    return result("resource_limit", detail="worker memory limit exceeded")


def _item_guard(seconds: float, grade: Any) -> Any:
    """``_guarded(seconds, grade, text)`` for the texts of one group, one after another.

    Each text gets the same fresh window of ``seconds`` with the same exception mapping; what
    differs is only how the window is enforced. The interval timer set for an earlier text is
    left running when it fires no later than this text's window closes: ``_on_alarm`` then sets
    it again for what is left of the window (and raises only once the window has closed), so
    most texts need no system call. The group's first text always sets the timer, since the
    end of the previous request stopped it (``handle``).
    """
    global _timer_due
    _timer_due = 0.0

    def guarded(text: Any) -> dict[str, Any]:
        global _armed, _expires, _timer_due
        settle()
        try:
            try:
                # The window is open (``_armed``) before the running timer is judged, so an
                # expiry that lands in between is carried over to this window by the handler.
                _expires = expires = time.monotonic() + seconds
                _armed = True
                if not 0.0 < _timer_due <= expires:
                    _timer_due = expires
                    signal.setitimer(signal.ITIMER_REAL, seconds)
                reply: dict[str, Any] = grade(text)
            finally:
                _armed = False
        except (Deadline, TimeoutError):  # as in ``_guarded``: a verifier's timeout-like error too
            return _failed("timeout")
        except MemoryError:
            return _failed("resource_limit")
        except Exception as exc:  # the one broad guard, as in ``_guarded``
            return result("worker_failure", detail=f"unexpected {type(exc).__name__}")
        return reply

    return guarded


def _grade(level: Any, domain: Any, answer: Any, text: Any) -> dict[str, Any]:
    fault = _fault_kind(text)
    if fault is not None:
        _inject(fault)
    return reply_guard(grade_local(level, domain, answer, text))


def _reference(level: Any, domain: Any, answer: Any) -> dict[str, Any]:
    fault = _FAULT
    if fault and answer == FAULT_TEXT:
        _inject(fault)
    try:
        parsed = check_reference(level, domain, answer)
    except ReferenceProblem as exc:
        # The hint travels only in this reply (a reference check), never in a graded result.
        extra = {"hint": exc.hint} if exc.hint is not None else {}
        return result("invalid_reference", detail=exc.detail, **extra)
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
        _send(b"this is not json\n")
        time.sleep(3600)
    if kind == "oversize":
        _send(b'{"status": "' + b"x" * 300_000 + b'"}\n')
        time.sleep(3600)
    if kind == "memory":  # one allocation beyond the address-space cap
        bytearray(WORKER_MEMORY_BYTES)
    raise RuntimeError(f"unknown fault {kind}")


#: The reply channel, opened by ``main``: our own buffered writer on fd 1, because
#: ``sys.stdout.buffer`` is unbuffered when PYTHONUNBUFFERED is set (common in CI), and then
#: every write would be a system call.
_OUT: BinaryIO | None = None


def _output() -> BinaryIO:
    return _OUT if _OUT is not None else sys.stdout.buffer


def _send(line: bytes) -> None:
    out = _output()
    out.write(line)
    out.flush()


#: In a buffered ``groups`` request, item replies are flushed every FLUSH_ITEMS replies, so the
#: parent decodes them while later items are graded, and at least every FLUSH_SECONDS, so it
#: sees progress well within its 5 s per-item window (and at the end of the request).
FLUSH_ITEMS = 16
FLUSH_SECONDS = 0.02


class _ItemOutput:
    """Where a ``groups`` request's item replies go: flushed each, or buffered.

    Buffering saves a write and a parent wake-up per item. Its one cost: if the worker dies
    outright, replies still in the buffer are lost and the parent cannot tell which item was
    running, so it resends the unanswered items with ``"flush": "each"`` (``strict``), where
    every reply is flushed before the next item starts, and the failure lands on its item.
    """

    def __init__(self, strict: bool) -> None:
        self._every = 1 if strict else FLUSH_ITEMS
        self._out = _output()
        self._flushed = time.monotonic()
        self._waiting = 0

    def send(self, line: bytes, last: bool = False) -> None:
        """Write one reply line; ``last`` (a fatal reply) is always flushed at once."""
        self._out.write(line)
        self._waiting += 1
        if last or self._waiting >= self._every:
            self._flush()
            return
        now = time.monotonic()
        if now - self._flushed >= FLUSH_SECONDS:
            self._flush(now)

    def _flush(self, now: float | None = None) -> None:
        self._out.flush()
        self._waiting = 0
        self._flushed = time.monotonic() if now is None else now

    def close(self) -> None:
        self._out.flush()


def _fatal(reply: dict[str, Any]) -> bool:
    """After these the worker exits (its state may be damaged); the parent resends the rest."""
    return reply["status"] in UNSCORABLE and reply["status"] != "invalid_reference"


def _group_grader(level: Any, domain: Any, answer_json: str) -> Any:
    """Grade texts of one prompt; the reference is resolved once, by the first text graded.

    Resolution happens inside that text's deadline, exactly where a lone ``grade`` request
    would validate (or find cached) its reference.
    """
    reference: tuple[int, Any, Any] | ReferenceProblem | None = None

    def grade(text: Any) -> dict[str, Any]:
        nonlocal reference
        if _FAULT:  # test-only (FAULT_ENV): tested first, so grading a text pays nothing for it
            fault = _fault_kind(text)
            if fault is not None:
                _inject(fault)
        current = reference
        if current is None:
            try:
                number, found = resolve(level, domain)
                current = (number, found, REFERENCES.get_encoded(number, found, answer_json)[1])
            except ReferenceProblem as exc:
                current = exc
            reference = current
        if isinstance(current, ReferenceProblem):
            return invalid_reference(current, text)
        number, found, parsed = current
        return reply_guard(grade_text(number, found, parsed, text))

    return grade


def _grade_group(group: Any, replies: list[dict[str, Any]], output: _ItemOutput) -> bool:
    """Grade one prompt's texts, a reply line per text; False once a fatal reply was sent."""
    if (
        not isinstance(group, dict)
        or not isinstance(group.get("texts"), list)
        or not isinstance(group.get("answer_json"), str)
    ):
        reply = result("worker_failure", detail="invalid worker request")
        output.send(item_line(reply, None), last=True)
        replies.append(reply)
        return False
    level, domain, answer_json = group.get("level"), group.get("domain"), group["answer_json"]
    _warm_for(domain)
    seconds = _deadline_for("groups", domain)
    guarded = _item_guard(seconds, _group_grader(level, domain, answer_json))
    task = (json.dumps(level), json.dumps(domain), answer_json)
    for text in group["texts"]:
        reply = _RESULTS.grade(task, text, guarded)
        fatal = _fatal(reply)
        output.send(item_line(reply, text), last=fatal)
        replies.append(reply)
        if fatal:
            return False
    return True


def handle(request: dict[str, Any]) -> list[dict[str, Any]]:
    """Handle one request; replies are sent as they are produced and also returned.

    ``groups`` carries several prompts (a list of ``{level, domain, answer_json, texts}``), so a
    busy evaluation pays one round trip per group of prompts instead of one per response;
    every text is still graded exactly as if alone.
    """
    try:
        return _handle(request)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)  # the one disarm per request (see _on_alarm)


#: ``handle`` as defined here; ``guarded_handle`` calls a caller's replacement instead (0.4.0's hook).
OWN_HANDLE = handle


def _handle(request: dict[str, Any]) -> list[dict[str, Any]]:
    operation = request.get("operation")
    if operation == "warm":
        _warm(request.get("domains"))
        _send(reply_line({"ready": True}))
        return []
    _warm_for(request.get("domain"))
    seconds = _deadline_for(operation, request.get("domain"))
    replies: list[dict[str, Any]] = []
    if operation == "groups":
        groups = request.get("groups")
        if not isinstance(groups, list):
            reply = result("worker_failure", detail="invalid worker request")
            _send(item_line(reply, None))
            return [reply]
        output = _ItemOutput(strict=request.get("flush") == "each")
        try:
            for group in groups:
                if not _grade_group(group, replies, output):
                    break
        finally:
            output.close()
        return replies
    if operation == "prepare":
        return _prepare(request)
    if operation == "prompts":
        return _prompts(request)
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
    elif operation == "python":  # 0.4.0's direct Python factor check (``python_result``)
        reply = _guarded(
            PYTHON_DEADLINE_SECONDS,
            _grade,
            1,
            "python_factors",
            request.get("spec"),
            request.get("candidate"),
        )
    else:
        reply = result("worker_failure", detail="invalid worker request")
    _send(reply_line(reply))
    return [reply]


def _prompts(request: dict[str, Any]) -> list[dict[str, Any]]:
    """Grade prompts and assemble each one's result here (:mod:`modebench.isolation.assemble`)."""
    # Imported when a prompts request arrives (or while a fresh worker waits: _preload_while_idle).
    from modebench.isolation.assemble import worker_prompts  # noqa: PLC0415 - worker start-up: only a prompts request needs it

    output = _ItemOutput(strict=False)
    try:
        return worker_prompts(request, _grade_group, output)
    finally:
        output.close()


def _check_reference(level: Any, domain: Any, answer: Any) -> dict[str, Any]:
    """A reference check exactly as a ``reference`` request runs it (warm-up outside the deadline)."""
    _warm_for(domain)
    return _guarded(_deadline_for("reference", domain), _reference, level, domain, answer)


def _prepare(request: dict[str, Any]) -> list[dict[str, Any]]:
    """Preflight a window of input lines (:mod:`modebench.isolation.prepare`); one reply line per line."""
    # Imported when a prepare request arrives (or while a fresh worker waits: _preload_while_idle).
    from modebench.isolation.prepare import Fatal, prepare_lines  # noqa: PLC0415 - worker start-up: only a prepare request needs it

    out = _output()
    try:
        for count, line in enumerate(prepare_lines(request, _check_reference, MAX_RESPONSES_PER_PROMPT), 1):
            out.write(line)
            if count % FLUSH_ITEMS == 0:
                out.flush()
    except Fatal:
        out.flush()
        return [result("worker_failure", detail="reference check failed during preflight")]  # we exit
    out.flush()
    return []


_WARMED: set[str] = set()


def _warm(names: Any) -> None:
    """Warm the named domains (SymPy for MathIR) that are not warm yet; unknown names are ignored.

    Warm-up runs before any deadline is armed, so its cost never turns into a spurious timeout,
    and only for domains the input uses, so a run without MathIR never imports SymPy. A
    third-party plug-in is imported here too, before any of its responses is timed.
    """
    if not isinstance(names, (list, tuple, set, frozenset)):
        return
    for name in names:
        if isinstance(name, str) and name not in _WARMED and domains.is_registered(name):
            found = domains.plugin(name)
            if found.warm_up is not None:
                found.warm_up()
            _WARMED.add(name)


def _warm_for(domain: Any) -> None:
    """Fallback for requests the parent did not announce: warm the domain before its deadline."""
    if isinstance(domain, str) and domain not in _WARMED:
        try:
            _warm([normalize_domain(domain)])
        except ValueError:
            pass  # grading reports the unknown domain


def _warm_up() -> None:
    _warm(os.environ.get(WARM_ENV, "").split(","))


def _preload_while_idle(stdin: BinaryIO) -> None:
    """Import the evaluation's worker side (preflight, assembly) if no request is waiting yet.

    A worker is started before its parent needs it (the parent goes on with the software
    identity, the input's hash and the checkpoint): these imports, about 30 ms that the first
    ``prepare`` request would otherwise pay on the run's critical path, fill that wait. Modules
    only: no domain is warmed (a run without MathIR still never loads its table or SymPy).
    """
    if select.select([stdin.fileno()], [], [], 0)[0]:
        return  # a request is already there: it comes first
    import modebench.isolation.assemble  # noqa: PLC0415, F401 - see above
    import modebench.isolation.prepare  # noqa: PLC0415, F401 - see above


def main() -> None:
    global _OUT
    _OUT = open(1, "wb", buffering=1 << 16, closefd=False)  # noqa: SIM115 - lives as long as we do
    resource.setrlimit(resource.RLIMIT_AS, (WORKER_MEMORY_BYTES, WORKER_MEMORY_BYTES))
    signal.signal(signal.SIGALRM, _on_alarm if _timeout is _OWN_TIMEOUT else _timeout)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when we stop
    untimed_install(_untimed)
    _warm_up()
    if os.environ.get(FAULT_ENV) == "startup":
        os._exit(3)
    _send(reply_line({"ready": True}))
    stdin = sys.stdin.buffer
    _preload_while_idle(stdin)
    while True:
        line = stdin.readline(MAX_BATCH_BYTES + 1)
        if not line:
            return
        if len(line) > MAX_BATCH_BYTES or not line.endswith(b"\n"):
            _send(reply_line(result("resource_limit", detail="request byte limit exceeded")))
            return
        try:
            request = json.loads(line)
        except (ValueError, RecursionError):
            request = None
        if not isinstance(request, dict):
            _send(reply_line(result("worker_failure", detail="invalid worker request")))
            return
        if handle is not OWN_HANDLE:
            # 0.4.0's hook: a replaced ``handle`` returns one reply, called under the guard.
            reply = guarded_handle(request)
            _send(reply_line(reply))
            if _fatal(reply):
                return
            continue
        replies = handle(request)
        if replies and _fatal(replies[-1]):
            return


if __name__ == "__main__":
    main()
