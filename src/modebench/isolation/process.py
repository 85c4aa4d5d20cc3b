"""One bounded verifier worker: spawn in its own session, deadlines, reply caps, reap, restart.

The parent never evaluates model text itself. Each worker is a fresh interpreter that imports
this very copy of ``modebench`` (installed or a plain source checkout alike), warms up, and then
serves requests one at a time. Any timeout, protocol violation or crash kills the worker's whole
process group; the next request transparently starts a new one.
"""

from __future__ import annotations

import json
import math
import os
import select
import selectors
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from modebench.contracts import normalize_domain
from modebench.diagnostics import (
    MAX_REPLY_BYTES,
    MAX_REQUEST_BYTES,
    PARENT_DEADLINE_SECONDS,
    STATUSES,
    UNSCORABLE,
    result,
)
from modebench.domains._pipeline import encode_answer
from modebench.isolation import early
from modebench.isolation.protocol import WARM_ENV, decode_line, groups_request, item_reply, validate_reply

#: Start-up (interpreter + SymPy import) is bounded separately from request deadlines.
START_SECONDS = 60.0
#: A worker that dies while warming up is replaced this many times before the request fails:
#: no item is to blame for it, as for a worker found dead between requests.
START_ATTEMPTS = 3
#: How often a thread waiting on its worker looks at the cancel flag.
CANCEL_POLL_SECONDS = 0.05
_PACKAGE_PARENT = early.PACKAGE_PARENT
_BOOTSTRAP = early.BOOTSTRAP


#: The waits below use ``select.select`` unless a caller replaced ``selectors`` (or its default
#: selector's ``select``) on this module: 0.4.0 waited through ``selectors`` and its tests inject
#: faults there (``modebench.worker_process.selectors``). Compared by identity, at call time.
_SELECTORS = selectors
_DEFAULT_SELECT = selectors.DefaultSelector.select


def _wait(fd: int, write: bool, timeout: float) -> bool:
    """Whether ``fd`` became readable (writable) within ``timeout`` seconds."""
    chosen = selectors  # looked up per call (a fault-injection point of 0.4.0)
    if chosen is _SELECTORS and chosen.DefaultSelector.select is _DEFAULT_SELECT:
        ready = select.select([], [fd], [], timeout)[1] if write else select.select([fd], [], [], timeout)[0]
        return bool(ready)
    with chosen.DefaultSelector() as selector:
        selector.register(fd, chosen.EVENT_WRITE if write else chosen.EVENT_READ)
        return bool(selector.select(timeout))


class GradingCancelled(RuntimeError):
    """The pool was closed (interrupt or error elsewhere) while this worker was in use."""


class _WorkerError(Exception):
    """Parent-side failure talking to a worker; becomes a worker_failure/timeout status.

    ``located`` is False for silence and end of output: had the worker buffered item replies,
    the item it failed on may lie beyond the first one unanswered.
    """

    def __init__(self, status: str, detail: str, *, located: bool = True) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.located = located


def worker_command(module: str = "modebench.verifier_worker") -> list[str]:
    """The command line of a worker: this interpreter, importing this copy of the package."""
    return [sys.executable, "-c", _BOOTSTRAP, _PACKAGE_PARENT, module]


class BoundedWorker:
    """A lazily started worker process with per-request deadlines and size caps."""

    def __init__(
        self,
        *,
        timeout_seconds: float = PARENT_DEADLINE_SECONDS,
        module: str = "modebench.verifier_worker",
        env: Mapping[str, str] | None = None,
        cancel: threading.Event | None = None,
    ) -> None:
        if (
            isinstance(timeout_seconds, bool)
            or not isinstance(timeout_seconds, (int, float))
            or not math.isfinite(timeout_seconds)
            or timeout_seconds <= 0
        ):
            raise ValueError("timeout_seconds must be positive and finite")
        self.timeout_seconds = float(timeout_seconds)
        self.module = module
        self._env = dict(env) if env is not None else None
        self._process: subprocess.Popen[bytes] | None = None
        self._owner_pid = os.getpid()
        self._buffer = bytearray()
        self._lock = threading.Lock()
        self._warming = False
        # Domains the caller will send (``want``) and those this worker process has warmed.
        self._wanted: frozenset[str] = frozenset()
        self._warmed: frozenset[str] = frozenset()
        self._want_lock = threading.Lock()
        self._cancel = cancel
        self.starts = 0
        # True while the running process came from a replaced ``worker_command`` (see there).
        self._foreign = False

    def worker_command(self) -> list[str]:
        """The command line this worker is started from (0.4.0's method).

        A caller may replace it (on the instance or a subclass), as 0.4.0's tests do to get a worker
        that dies, hangs or answers garbage. Such a process is spoken to as 0.4.0 spoke to its
        worker: no start-up greeting is awaited, the request's own deadline covers everything,
        and a greeting it does send (a real worker's ``main``) is skipped.
        """
        return worker_command(self.module)

    def _command_replaced(self) -> bool:
        return getattr(self.worker_command, "__func__", None) is not _OWN_COMMAND

    # -- lifecycle ---------------------------------------------------------------------------
    def __enter__(self) -> BoundedWorker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop the worker's process group (TERM, then KILL) and forget it."""
        process, self._process = self._process, None
        self._buffer.clear()
        self._warming = False
        if process is None:
            return
        if self._owner_pid == os.getpid():
            _stop(process)
        for stream in (process.stdin, process.stdout):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass

    def spawn(self) -> None:
        """Start the worker now without waiting for it: its warm-up overlaps the caller's work."""
        with self._lock:
            if self._owner_pid == os.getpid() and self._process is not None and self._process.poll() is None:
                return
            self._ensure_spawned()

    def want(self, domains: Iterable[Any]) -> None:
        """Announce domains about to be graded: the worker warms them (SymPy for MathIR) before
        its next request, under the start-up deadline, never under a grading deadline.

        Every request announces its own domains, so callers need not; unknown names are skipped
        (the worker reports them)."""
        wanted = self._wanted
        new = set()
        for domain in domains:
            if domain not in wanted:
                try:
                    new.add(normalize_domain(domain))
                except (ValueError, TypeError):
                    continue
        if not new <= wanted:
            with self._want_lock:
                self._wanted = self._wanted | new

    def _ensure(self) -> subprocess.Popen[bytes]:
        for attempt in range(1, START_ATTEMPTS + 1):
            process = self._ensure_spawned()
            if self._foreign:
                self._warming = False  # 0.4.0's protocol: the request is the first line
                return process
            try:
                if self._warming:
                    self._warming = False
                    self._await_ready()
                missing = self._wanted - self._warmed
                if missing:
                    request = {"operation": "warm", "domains": sorted(missing)}
                    self._write(json.dumps(request).encode("ascii") + b"\n", time.monotonic() + START_SECONDS)
                    self._await_ready()
                    self._warmed = self._warmed | missing
                return process
            except (_WorkerError, ValueError) as exc:
                self.close()
                # A worker that died while starting is replaced (a few times); anything else fails.
                died = isinstance(exc, _WorkerError) and exc.status == "worker_failure" and not exc.located
                if not died or attempt == START_ATTEMPTS:
                    raise _WorkerError("worker_failure", f"worker start-up failed: {exc}") from None
        raise AssertionError("unreachable")

    def _check_cancel(self) -> None:
        if self._cancel is not None and self._cancel.is_set():
            raise GradingCancelled("grading cancelled")

    def kill(self) -> None:
        """Kill the worker's process group at once (any thread); its user sees end of output."""
        process = self._process
        if process is not None and self._owner_pid == os.getpid() and process.poll() is None:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass

    def _await_ready(self) -> None:
        if json.loads(self._read_line(time.monotonic() + START_SECONDS)) != {"ready": True}:
            raise ValueError("unexpected greeting")

    def _ensure_spawned(self) -> subprocess.Popen[bytes]:
        if self._owner_pid != os.getpid():
            # Inherited across fork: drop the parent's pipes, never signal its worker.
            self._process = None
            self._buffer.clear()
            self._owner_pid = os.getpid()
        process = self._process
        if process is not None and (self._warming or process.poll() is None):
            return process
        if process is not None:
            # Found dead between requests: not this request's fault; start afresh.
            self.close()
        return self._start()

    def _start(self) -> subprocess.Popen[bytes]:
        env = dict(os.environ if self._env is None else self._env)
        self._warmed = self._wanted  # warmed before the ready greeting
        env[WARM_ENV] = ",".join(sorted(self._warmed))
        foreign = self._command_replaced()
        adopted = early.adopt(self.module) if not foreign and self._env is None else None
        if adopted is not None:
            # Started at the top of the command (``early.park``) with no domain to warm: the
            # ``warm`` request of ``_ensure`` names this caller's domains after the greeting.
            self._warmed = frozenset()
        try:
            process = adopted or early.popen(
                self.worker_command() if foreign else worker_command(self.module), env
            )
        except (OSError, ValueError, subprocess.SubprocessError) as exc:
            # A worker that cannot start is a structured failure, never a traceback.
            raise _WorkerError(
                "worker_failure", f"worker start failed: {type(exc).__name__}: {exc}"
            ) from None
        self._foreign = foreign
        assert process.stdin is not None and process.stdout is not None
        os.set_blocking(process.stdout.fileno(), False)
        os.set_blocking(process.stdin.fileno(), False)
        self._process = process
        self._warming = True  # the ready line is read by the first request (see _ensure)
        self.starts += 1
        return process

    # -- I/O -----------------------------------------------------------------------------------
    def _write(self, data: bytes, deadline: float) -> None:
        process = self._process
        assert process is not None and process.stdin is not None
        fd = process.stdin.fileno()
        view = memoryview(data)
        while view:
            self._check_cancel()
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise _WorkerError("timeout", "parent request deadline exceeded")
            if not _wait(fd, True, min(remaining, CANCEL_POLL_SECONDS)):
                continue
            try:
                sent = os.write(fd, view[:65536])
            except BlockingIOError:
                continue
            except OSError as exc:
                raise _WorkerError("worker_failure", f"{type(exc).__name__}: {exc}") from None
            view = view[sent:]

    def _read_line(self, deadline: float) -> bytes:
        process = self._process
        assert process is not None and process.stdout is not None
        fd = process.stdout.fileno()
        while True:
            newline = self._buffer.find(b"\n")
            if newline >= 0:
                line = bytes(self._buffer[: newline + 1])
                del self._buffer[: newline + 1]
                if len(line) > MAX_REPLY_BYTES:
                    raise _WorkerError("worker_failure", "worker reply byte limit exceeded")
                return line
            if len(self._buffer) > MAX_REPLY_BYTES:
                raise _WorkerError("worker_failure", "worker reply byte limit exceeded")
            self._check_cancel()
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise _WorkerError("timeout", "parent request deadline exceeded", located=False)
            if not _wait(fd, False, min(remaining, CANCEL_POLL_SECONDS)):
                continue
            try:
                chunk = os.read(fd, 1 << 20)
            except BlockingIOError:
                continue
            if not chunk:
                raise _WorkerError("worker_failure", "OSError: worker closed stdout", located=False)
            self._buffer += chunk

    def _read_reply(self, deadline: float, operation: str, sent_text: Any) -> dict[str, Any]:
        line = self._read_line(deadline)
        try:
            decoded = decode_line(line)
            if self._foreign and decoded == _GREETING:  # a real worker started by a replaced command
                decoded = decode_line(self._read_line(deadline))
            if operation == "groups":
                return item_reply(decoded, sent_text)
            return validate_reply(decoded, operation)
        except (ValueError, RecursionError) as exc:
            raise _WorkerError("worker_failure", f"{type(exc).__name__}: {exc}") from None

    # -- requests ------------------------------------------------------------------------------
    def request(self, payload: Mapping[str, Any]) -> dict[str, Any]:
        """Send one single-reply request (``grade`` or ``reference``); always returns a result."""
        operation = str(payload.get("operation"))
        self.want((payload.get("domain"),))
        try:
            data = json.dumps(dict(payload), allow_nan=False).encode("ascii") + b"\n"
        except (TypeError, ValueError, RecursionError):
            return result("invalid_reference", detail="request is not finite JSON")
        if len(data) > MAX_REQUEST_BYTES:  # refused before any worker is started (0.4.0)
            return result("resource_limit", detail="request byte limit exceeded")
        with self._lock:
            process = self._process
            if (
                process is not None
                and not self._warming
                and self._owner_pid == os.getpid()
                and process.poll() is not None
            ):
                # 0.4.0's contract for a single request: a worker found dead between requests is
                # reported (never hidden), reaped, and the next request starts a new one. Batches
                # (grade_groups, our pools) replace it silently: no item of theirs was lost.
                self.close()
                return result("worker_failure", detail="OSError: worker exited between requests")
        return self._exchange(data, operation, [None])[0][0]

    def grade_batch(self, level: Any, domain: Any, answer: Any, texts: Sequence[Any]) -> list[dict[str, Any]]:
        """Grade several responses of one prompt; identical to grading them one by one."""
        try:
            answer_json = encode_answer(answer)
        except (TypeError, ValueError, RecursionError):
            return [result("invalid_reference", detail="request is not finite JSON") for _ in texts]
        return self.grade_groups([(level, domain, answer_json, texts)])[0]

    def grade_groups(
        self, groups: Sequence[tuple[Any, Any, str, Sequence[Any]]], data: bytes | None = None
    ) -> list[list[dict[str, Any]]]:
        """Grade the texts of several prompts in one round trip; identical to one by one.

        Each group is ``(level, domain, answer_json, texts)`` with ``answer_json`` from
        ``encode_answer``; ``data`` may carry ``groups_request(groups)`` already encoded. Each
        text has its own deadline window. After an unscorable item the worker is replaced and
        everything not yet graded is resent, exactly as separate requests would have been.
        """
        self.want({group[1] for group in groups if isinstance(group[1], str)})
        results: list[list[dict[str, Any]]] = [[] for _ in groups]
        position = 0  # first group that is not complete
        strict = False  # after a failure that buffered replies may hide: one reply per flush
        first: bytes | None = data  # the caller's encoding serves the first round only
        while position < len(groups):
            pending = [(index, len(results[index])) for index in range(position, len(groups))]
            pieces = [(*groups[i][:3], groups[i][3][done:]) for i, done in pending]
            sent = [text for piece in pieces for text in piece[3]]
            try:
                line = first if first is not None else groups_request(pieces, strict)
            except (TypeError, ValueError, RecursionError):
                failed = result("invalid_reference", detail="request is not finite JSON")
                return [
                    group_results + [dict(failed) for _ in group[3][len(group_results) :]]
                    for group, group_results in zip(groups, results)
                ]
            first = None
            answered, unlocated = self._exchange(line, "groups", sent, buffered=not strict)
            strict = unlocated
            replies = iter(answered)
            for index, _ in pending:
                want = len(groups[index][3])
                while len(results[index]) < want:
                    reply = next(replies, None)
                    if reply is None:
                        break
                    results[index].append(reply)
                if len(results[index]) < want:
                    break
            while position < len(groups) and len(results[position]) == len(groups[position][3]):
                position += 1
        return results

    def prompts(self, data: bytes, count: int, domains: Iterable[Any] = ()) -> tuple[list[list[bytes]], bool]:
        """Send a ``prompts`` request (:mod:`modebench.isolation.assemble`); its reply lines, raw.

        Returns each prompt's lines (item replies, then its ``A`` or ``N`` line) and True once all
        ``count`` prompts are answered. On any failure the worker is replaced and the lines read
        so far come back with False: the caller grades the rest with ``grade_groups``, which
        places and reports the failure exactly as a ``groups`` request does. ``domains``: the
        prompts' domains, warmed first as :meth:`want` says. A worker from a replaced
        ``worker_command`` speaks 0.4.0's protocol: nothing is sent, everything goes the
        ``grade_groups`` way."""
        if self._command_replaced():
            return [[]], False
        self.want(domains)
        with self._lock:
            self._check_cancel()
            answered: list[list[bytes]] = [[]]
            try:
                self._ensure()
                deadline = time.monotonic() + self.timeout_seconds
                self._write(data, deadline)
                while True:
                    line = self._read_line(deadline)
                    deadline = time.monotonic() + self.timeout_seconds
                    answered[-1].append(line)
                    if line[:1] in (b"A", b"N"):
                        if len(answered) == count:
                            return answered, True
                        answered.append([])
            except _WorkerError:
                self.close()
                return answered, False
            except BaseException:
                self.close()  # KeyboardInterrupt, cancellation: never leave a worker behind
                raise

    def lines(
        self,
        data: bytes,
        expected: int,
        seconds: float = START_SECONDS,
        decode: Callable[[bytes], Any] = decode_line,
    ) -> list[Any] | None:
        """Send one request line and return ``expected`` decoded reply lines, or None when the
        worker failed in any way (it is then replaced). For requests whose every reply the
        caller can also produce itself (``prepare``), so a failure needs no diagnostic.

        Each reply has ``seconds``: a ``prepare`` line may warm a domain (import SymPy) before
        its reference check, which the worker itself bounds by the reference deadline. ``decode``
        reads one reply line (a ValueError there counts as a failed worker). A worker
        from a replaced ``worker_command`` speaks 0.4.0's protocol, which has no such request:
        None, without sending it (its greeting or error reply was taken for prepared lines)."""
        if self._command_replaced():
            return None
        with self._lock:
            self._check_cancel()
            try:
                self._ensure()
                deadline = time.monotonic() + seconds
                self._write(data, deadline)
                replies: list[Any] = []
                while len(replies) < expected:
                    replies.append(decode(self._read_line(deadline)))
                    deadline = time.monotonic() + seconds
                return replies
            except (_WorkerError, ValueError, RecursionError):
                self.close()
                return None
            except BaseException:
                self.close()  # KeyboardInterrupt, cancellation: never leave a worker behind
                raise

    def _exchange(
        self, data: bytes, operation: str, sent: list[Any], buffered: bool = False
    ) -> tuple[list[dict[str, Any]], bool]:
        """Send one request line and read one reply per entry of ``sent`` (the texts sent,
        in order, or None for requests without a text shorthand).

        Returns the replies and whether the request ended in a failure that cannot be placed
        on an item (``buffered`` requests only): the caller then resends the unanswered items
        with one flushed reply each, so the failure lands exactly where it happens.
        """
        expected = len(sent)
        with self._lock:
            replies: list[dict[str, Any]] = []
            self._check_cancel()
            try:
                self._ensure()
            except _WorkerError as exc:
                # A worker that cannot start fails every item of this request alike.
                return [result(exc.status, detail=exc.detail) for _ in range(expected)], False
            except BaseException:
                self.close()  # interrupted while the worker started: never leave it behind
                raise
            try:
                deadline = time.monotonic() + self.timeout_seconds
                try:
                    self._write(data, deadline)
                except _WorkerError as exc:
                    if exc.status != "worker_failure":
                        raise
                    # Lost before it had read this request: no item is to blame. One fresh
                    # worker gets the request; failing again charges the first item as usual.
                    self.close()
                    self._ensure()
                    deadline = time.monotonic() + self.timeout_seconds
                    self._write(data, deadline)
                while len(replies) < expected:
                    reply = self._read_reply(deadline, operation, sent[len(replies)])
                    replies.append(reply)
                    deadline = time.monotonic() + self.timeout_seconds
                    if reply["status"] in UNSCORABLE and reply["status"] != "invalid_reference":
                        self.close()  # the worker exits by itself; reap it now
                        break
            except _WorkerError as exc:
                self.close()
                if buffered and not exc.located:
                    return replies, True
                replies.append(result(exc.status, detail=exc.detail))
            except BaseException:
                self.close()  # KeyboardInterrupt and friends: never leave a worker behind
                raise
            return replies, False


_OWN_COMMAND = BoundedWorker.worker_command
_GREETING = {"ready": True}


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is not None:
        return
    for sig, wait in ((signal.SIGTERM, 0.5), (signal.SIGKILL, 0.5)):
        try:
            os.killpg(process.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            process.wait(wait)
            return
        except subprocess.TimeoutExpired:
            continue


__all__ = [
    "MAX_REQUEST_BYTES",
    "STATUSES",
    "BoundedWorker",
    "GradingCancelled",
    "START_ATTEMPTS",
    "START_SECONDS",
    "worker_command",
]
