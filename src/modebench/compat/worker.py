"""0.4.0's ``verifier_worker.guarded_handle``: one request answered in this process, never raising.

Our worker streams replies (``verifier_worker.handle``); 0.4.0 exposed the single-reply step
that its loop wrapped in one broad ``except``. This is that step over the same pipeline
functions the worker uses; it writes nothing to stdout.
"""

from __future__ import annotations

import sys
from typing import Any

from modebench.diagnostics import result
from modebench.domains._pipeline import ReferenceProblem, check_reference, grade_local, reply_guard


def guarded_handle(request: Any) -> dict[str, Any]:
    """The reply to one ``grade`` or ``reference`` request; evaluator failures become statuses.

    ``verifier_worker.handle`` is looked up per call: a caller's replacement (0.4.0's hook, which
    returned one reply) is called instead, under the same guard.
    """
    home = sys.modules.get("modebench.isolation.worker_main")  # the module that imports this one
    hook = getattr(home, "handle", None)
    try:
        if hook is not None and hook is not getattr(home, "OWN_HANDLE", hook):
            replaced: dict[str, Any] = hook(request)  # 0.4.0's single-reply contract
            return replaced
        if not isinstance(request, dict):
            raise ValueError("request must be an object")
        operation = request.get("operation")
        if operation == "grade":
            args = (request["level"], request["domain"], request["answer"], request["text"])
            return reply_guard(grade_local(*args))
        if operation == "reference":
            try:
                answer = check_reference(request["level"], request["domain"], request["answer"])
            except ReferenceProblem as exc:
                return result("invalid_reference", detail=exc.detail)
            return {"status": "valid", "answer": answer}
        raise ValueError(f"unknown operation: {operation!r}")
    except Exception as exc:  # the worker's one broad guard: evaluator failure is a status
        return result("worker_failure", detail=f"unexpected {type(exc).__name__}")


__all__ = ["guarded_handle"]
