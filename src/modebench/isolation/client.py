"""Public grading entry points that cross the isolation boundary.

``grade_response`` is the contract of ModeBench 0.4.0: parent-side checks here, everything that
touches model text inside one shared, lazily started worker process.
"""

from __future__ import annotations

import atexit
import threading
from typing import Any

from modebench.contracts import normalize_domain, normalize_level
from modebench.diagnostics import MAX_RESPONSE_CHARS, UNSCORABLE, VerifierExecutionError, result
from modebench.domains._pipeline import identity_hint, parent_precheck
from modebench.isolation.process import BoundedWorker
from modebench.validation import InputError, with_hint

#: The shared worker (0.4.0's name, ``verifier._SHARED``): started on first use, and read at
#: call time, so a caller that replaces it (0.4.0's tests do, to inject a faulty worker) is used.
_SHARED: BoundedWorker | None = None
_shared_lock = threading.Lock()


def _worker() -> BoundedWorker:
    global _SHARED
    worker = _SHARED
    if worker is not None:
        return worker
    with _shared_lock:
        if _SHARED is None:
            _SHARED = BoundedWorker()
        return _SHARED


def close_worker() -> None:
    """Stop the shared worker (it restarts on the next request)."""
    global _SHARED
    with _shared_lock:
        worker, _SHARED = _SHARED, None
    if worker is not None:
        worker.close()


atexit.register(close_worker)


def grade_with_worker(worker: BoundedWorker, level: Any, domain: Any, row: Any, text: Any) -> dict[str, Any]:
    """Grade one response with a given worker; never raises for evaluator problems."""
    early = parent_precheck(level, domain, row, text)
    if early is not None:
        return early
    payload = {"operation": "grade", "level": level, "domain": domain, "answer": row["answer"], "text": text}
    return worker.request(payload)


def grade_response(level: Any, domain: Any, row: Any, text: Any) -> dict[str, Any]:
    """Grade one saved response; returns ``status, verified, canonical_key, graded_text, detail``."""
    return grade_with_worker(_worker(), level, domain, row, text)


def reference_check(level: Any, domain: Any, answer: Any) -> dict[str, Any]:
    """Validate a reference; return the decoded answer object.

    Raises ``InputError`` for an invalid reference and ``VerifierExecutionError`` when the
    evaluator itself failed.
    """
    return reference_check_with(_worker(), level, domain, answer)


def reference_check_with(worker: BoundedWorker, level: Any, domain: Any, answer: Any) -> dict[str, Any]:
    """:func:`reference_check` on a given worker."""
    try:
        normalize_level(level)
        normalize_domain(domain)
    except ValueError as exc:
        raise with_hint(InputError(str(exc)), identity_hint(level, domain)) from None
    reply = worker.request({"operation": "reference", "level": level, "domain": domain, "answer": answer})
    if reply["status"] == "correct" and isinstance(reply.get("reference"), dict):
        parsed: dict[str, Any] = reply["reference"]
        return parsed
    if reply["status"] == "invalid_reference":
        raise with_hint(InputError(str(reply.get("detail"))), reply.get("hint"))
    if reply["status"] in UNSCORABLE:
        raise VerifierExecutionError(reply)
    raise VerifierExecutionError(result("worker_failure", detail="invalid reference reply"))


__all__ = ["MAX_RESPONSE_CHARS", "close_worker", "grade_response", "grade_with_worker", "reference_check"]
