"""0.4.0's ``verifier_worker.guarded_handle``: one request answered in this process, never raising.

Our worker streams replies (``verifier_worker.handle``); 0.4.0 exposed the single-reply step
that its loop wrapped in one broad ``except``. This is that step over the same pipeline
functions the worker uses; it writes nothing to stdout.

0.4.0's fault-injection points are honoured here, each compared by identity at call time so
nothing changes unless a caller replaced one: ``verifier_worker.handle`` (called instead, for one
reply) and the per-domain verifier steps of ``compat.backends`` (called with 0.4.0's arguments
before the domain grades; what they raise becomes the status, as in 0.4.0's worker).
"""

from __future__ import annotations

import ast
import json
import signal
import sys
import threading
from collections.abc import Callable
from typing import Any

from modebench.compat.backends import HOOKS, ORIGINALS
from modebench.diagnostics import DOMAIN_DEADLINE_SECONDS, PYTHON_DEADLINE_SECONDS, result
from modebench.domains import deadline_seconds
from modebench.domains._pipeline import ReferenceProblem, check_reference, grade_local, reply_guard


def _seconds(request: dict[str, Any]) -> float:
    # 0.4.0's deadlines: the Python factor check's for its direct 'python' operation, else the
    # graded domain's own budget (the plug-in's ``deadline_seconds``).
    operation = request.get("operation")
    if operation == "python":
        return PYTHON_DEADLINE_SECONDS
    seconds = deadline_seconds(request.get("domain")) if operation == "grade" else None
    return seconds if seconds is not None else DOMAIN_DEADLINE_SECONDS


def _timer_handled(home: Any) -> bool:
    """Whether 0.4.0's deadline is armed here: only when its handler, ``verifier_worker._timeout``
    (as looked up now), is the installed SIGALRM handler, in the main thread — as 0.4.0's worker
    and its tests install it. Any other handler (none would kill the process; a test runner's
    own timer, e.g. pytest-timeout's, would be cancelled) leaves the timer alone."""
    if threading.current_thread() is not threading.main_thread():
        return False
    handler = getattr(home, "_timeout", None)
    return handler is not None and signal.getsignal(signal.SIGALRM) is handler


def _replaced_backend(domain: Any) -> Any:
    """The caller's replacement of ``domain``'s 0.4.0 verifier step, or None."""
    where = HOOKS.get(domain) if isinstance(domain, str) else None
    if where is None:
        return None
    module = sys.modules.get(where[0])
    current = getattr(module, where[1], None) if module is not None else None
    return current if current is not None and current is not ORIGINALS.get(domain) else None


def _countdown_calls(level: Any, spec: dict[str, Any], candidate: str) -> list[tuple[Any, ...]]:
    """0.4.0 called Countdown's step once per ``=``-side, with the side's parsed (never evaluated)
    expression tree."""
    from modebench.domains.countdown.parse import normalise, sides  # noqa: PLC0415 - only when a test replaced a step

    calls: list[tuple[Any, ...]] = []
    for side in sides(normalise(candidate)):
        try:
            calls.append((ast.parse(side, mode="eval"),))  # parsed, never evaluated
        except SyntaxError:
            continue
    return calls


def _graph_coloring_calls(level: Any, spec: dict[str, Any], candidate: str) -> list[tuple[Any, ...]]:
    """0.4.0 called the colouring step with the colour vector read from the candidate."""
    from modebench.compat.legacy import _graph_coloring_from_candidate  # noqa: PLC0415 - only when a test replaced a step

    return [(_graph_coloring_from_candidate(candidate, spec), spec)]


def _pantry_plan_calls(level: Any, spec: dict[str, Any], candidate: str) -> list[tuple[Any, ...]]:
    """0.4.0's level 1 projected a support mask and never reached the plan validator."""
    return [] if level == 1 else [(candidate, spec)]


#: How 0.4.0's worker called each domain's replaceable step (``compat.backends.HOOKS``): the
#: argument tuples for one candidate. A domain not named here was called as ``(candidate, spec)``.
_CALLS: dict[str, Callable[[Any, dict[str, Any], str], list[tuple[Any, ...]]]] = {
    "countdown": _countdown_calls,
    "graph_coloring": _graph_coloring_calls,
    "pantry_plan": _pantry_plan_calls,
}


def _call_backend(hook: Any, level: Any, domain: str, answer: Any, text: Any) -> None:
    """Call a replaced verifier step with the arguments 0.4.0's worker passed it."""
    from modebench.compat.legacy import _extract_modebench_candidate  # noqa: PLC0415 - only when a test replaced a step

    spec = json.loads(answer) if isinstance(answer, str) else answer
    if not isinstance(spec, dict) or not isinstance(text, str):
        return  # 0.4.0 never reached the step for these
    candidate = _extract_modebench_candidate(text, spec)
    if candidate is None:
        return
    shape = _CALLS.get(domain)
    for arguments in shape(level, spec, candidate) if shape is not None else [(candidate, spec)]:
        hook(*arguments)


def _answer(request: dict[str, Any]) -> dict[str, Any]:
    operation = request.get("operation")
    if operation == "python":  # 0.4.0's direct Python factor check
        request = {
            "operation": "grade",
            "level": 1,
            "domain": "python_factors",
            "answer": request["spec"],
            "text": request["candidate"],
        }
        operation = "grade"
    if operation == "grade":
        args = (request["level"], request["domain"], request["answer"], request["text"])
        hook = _replaced_backend(request["domain"])
        if hook is not None:
            _call_backend(hook, *args)
        return reply_guard(grade_local(*args))
    if operation == "reference":
        try:
            answer = check_reference(request["level"], request["domain"], request["answer"])
        except ReferenceProblem as exc:
            return result("invalid_reference", detail=exc.detail)
        return {"status": "valid", "answer": answer}
    raise ValueError(f"unknown operation: {operation!r}")


def guarded_handle(request: Any) -> dict[str, Any]:
    """The reply to one ``grade``, ``python`` or ``reference`` request; evaluator failures
    become statuses (a timeout-like error ``timeout``, a memory error ``resource_limit``, any
    other ``worker_failure``), as in 0.4.0.

    ``verifier_worker.handle`` is looked up per call: a caller's replacement (0.4.0's hook, which
    returned one reply) is called instead, under the same guard. When 0.4.0's ``_timeout`` is the
    installed SIGALRM handler, the request runs under 0.4.0's deadline (0.25 s for Python factors,
    else 2 s).
    """
    home = sys.modules.get("modebench.isolation.worker_main")  # the module that imports this one
    hook = getattr(home, "handle", None)
    armed = isinstance(request, dict) and _timer_handled(home)
    try:
        if armed:
            signal.setitimer(signal.ITIMER_REAL, _seconds(request))
        try:
            if hook is not None and hook is not getattr(home, "OWN_HANDLE", hook):
                replaced: dict[str, Any] = hook(request)  # 0.4.0's single-reply contract
                return replaced
            if not isinstance(request, dict):
                raise ValueError("request must be an object")
            return _answer(request)
        finally:
            if armed:
                signal.setitimer(signal.ITIMER_REAL, 0)
    except TimeoutError:
        return result("timeout", detail="worker execution deadline exceeded")
    except MemoryError:
        return result("resource_limit", detail="worker memory limit exceeded")
    except Exception as exc:  # the worker's one broad guard: evaluator failure is a status
        return result("worker_failure", detail=f"unexpected {type(exc).__name__}")


__all__ = ["guarded_handle"]
