"""One verifier worker started before the parent has loaded the evaluator.

``modebench evaluate`` spends its first ~0.1 s importing the evaluator, hashing the package's
sources and reading git for the receipt's software identity; a worker needs about as long to
start (interpreter, imports). :func:`park` starts one worker at the top of the command, with
nothing but the standard library loaded, and the first :class:`~modebench.isolation.process.BoundedWorker`
that starts the default worker adopts it (:func:`adopt`) instead of spawning its own, so the two
start-ups overlap. A parked worker nobody adopts (another back end, a usage error) is stopped by
:func:`discard` when the command ends, or at exit; a parent that dies closes its pipes and the
worker, reading end of input, exits.

The worker is the very process ``BoundedWorker`` would start: same command, same pipes, own
process group, its environment the parent's (no domain named for warming: the pool's ``warm``
request does that, as for any worker whose domains arrive later).
"""

from __future__ import annotations

import atexit
import fcntl
import os
import signal
import subprocess
import sys
import threading

__all__ = ["BOOTSTRAP", "PACKAGE_PARENT", "adopt", "discard", "park", "popen"]

#: The directory holding this copy of the package: the worker imports this copy, not another.
PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BOOTSTRAP = (
    "import sys; sys.path.insert(0, sys.argv[1]); "
    "import runpy; runpy.run_module(sys.argv[2], run_name='__main__', alter_sys=True)"
)
DEFAULT_MODULE = "modebench.verifier_worker"
#: Buffer of each pipe to and from a worker (the Linux default is 64 KiB): see :func:`_widen_pipes`.
PIPE_BYTES = 256 * 1024

_lock = threading.Lock()
_parked: tuple[int, subprocess.Popen[bytes]] | None = None  # (owner pid, process)


def popen(command: list[str], env: dict[str, str]) -> subprocess.Popen[bytes]:
    """Start a worker process (raises OSError, ValueError or SubprocessError)."""
    process = subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        env=env,
        bufsize=0,
        close_fds=True,
    )
    _widen_pipes(process)
    return process


def _widen_pipes(process: subprocess.Popen[bytes]) -> None:
    """Give both pipes ``PIPE_BYTES`` of buffer where the system allows it (Linux), else keep them.

    With the default 64 KiB a worker writing a window of prepared lines blocks until the parent's
    reader thread, which shares the interpreter lock with the main thread, drains it; measured on
    the ``rl`` input, 256 KiB cut 5–6 % of a 10,000-prompt run and about 3 % of a 1,000-prompt one.
    Only throughput changes: replies and their order, deadlines and caps are read as before.
    """
    set_size = getattr(fcntl, "F_SETPIPE_SZ", None)
    if set_size is None:
        return
    for pipe in (process.stdin, process.stdout):
        if pipe is None:
            continue
        try:
            fcntl.fcntl(pipe.fileno(), set_size, PIPE_BYTES)
        except OSError:
            pass  # over the user's pipe quota (EPERM) or the system maximum: the default serves


def park() -> None:
    """Start the default worker now, for the evaluation this command is about to run."""
    global _parked
    with _lock:
        if _parked is not None:
            return
        command = [sys.executable, "-c", BOOTSTRAP, PACKAGE_PARENT, DEFAULT_MODULE]
        try:
            process = popen(command, dict(os.environ))
        except (OSError, ValueError, subprocess.SubprocessError):
            return  # the pool starts its own and reports what goes wrong then
        _parked = (os.getpid(), process)


def adopt(module: str) -> subprocess.Popen[bytes] | None:
    """The parked worker, if there is one for ``module`` in this process and it is alive."""
    global _parked
    with _lock:
        parked, _parked = _parked, None
    if parked is None:
        return None
    owner, process = parked
    if owner == os.getpid() and module == DEFAULT_MODULE and process.poll() is None:
        return process
    if owner == os.getpid():
        _stop(process)
    return None


def discard() -> None:
    """Stop a parked worker nobody adopted."""
    global _parked
    with _lock:
        parked, _parked = _parked, None
    if parked is not None and parked[0] == os.getpid():
        _stop(parked[1])


def _stop(process: subprocess.Popen[bytes]) -> None:
    for stream in (process.stdin, process.stdout):
        try:
            if stream is not None:
                stream.close()  # end of input: the worker leaves its loop
        except OSError:
            pass
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        process.wait(1.0)
    except subprocess.TimeoutExpired:
        pass


atexit.register(discard)
