"""Grading statuses, resource limits and the evaluator-failure exception.

Model failures are *statuses* (``incorrect``, ``malformed``); evaluator failures are the four
unscorable statuses, which void every aggregate of a run instead of counting as wrong answers.
"""

from __future__ import annotations

from typing import Any, Final

#: Every status in contract order (for output: tables, counts); ``STATUSES`` is the set.
STATUS_ORDER: Final[tuple[str, ...]] = (
    "correct",
    "incorrect",
    "malformed",
    "timeout",
    "invalid_reference",
    "worker_failure",
    "resource_limit",
)
#: 0.4.0's value: a frozenset, so set operations work (``STATUSES - UNSCORABLE``).
STATUSES: Final[frozenset[str]] = frozenset(STATUS_ORDER)
_KNOWN: Final[frozenset[str]] = STATUSES
UNSCORABLE: Final[frozenset[str]] = frozenset(
    {"timeout", "invalid_reference", "worker_failure", "resource_limit"}
)

MAX_REQUEST_BYTES: Final = 1_048_576
MAX_REPLY_BYTES: Final = 262_144
MAX_REFERENCE_BYTES: Final = 65_536
MAX_RESPONSE_CHARS: Final = 131_072
WORKER_MEMORY_BYTES: Final = 1_073_741_824
PYTHON_DEADLINE_SECONDS: Final = 0.25
DOMAIN_DEADLINE_SECONDS: Final = 2.0
PARENT_DEADLINE_SECONDS: Final = 5.0

RESOURCE_POLICY: Final[dict[str, float | int]] = {
    "python_execution_seconds": PYTHON_DEADLINE_SECONDS,
    "other_execution_seconds": DOMAIN_DEADLINE_SECONDS,
    "worker_address_space_bytes": WORKER_MEMORY_BYTES,
    "request_bytes": MAX_REQUEST_BYTES,
    "reply_bytes": MAX_REPLY_BYTES,
    "reference_bytes": MAX_REFERENCE_BYTES,
    "response_chars": MAX_RESPONSE_CHARS,
    "parent_request_seconds": PARENT_DEADLINE_SECONDS,
}


def result(
    status: str, *, key: str | None = None, text: str = "", detail: str | None = None, **extra: Any
) -> dict[str, Any]:
    """Build a GradeResult dict with the five contract keys in contract order, then extras.

    A status outside ``STATUSES`` is a programming error: ``AssertionError``, as in 0.4.0 (raised
    explicitly, so ``python -O`` keeps the check).
    """
    if status not in _KNOWN:
        raise AssertionError
    out: dict[str, Any] = {
        "status": status,
        "verified": status == "correct",
        "canonical_key": key,
        "graded_text": text,
        "detail": detail,
    }
    out.update(extra)
    return out


class VerifierExecutionError(RuntimeError):
    """An evaluator failure where no structured status can be returned to the caller."""

    def __init__(self, diagnostic: dict[str, Any]) -> None:
        self.diagnostic = dict(diagnostic)
        super().__init__(f"verifier {diagnostic.get('status')}: {diagnostic.get('detail')}")


__all__ = [
    "DOMAIN_DEADLINE_SECONDS",
    "MAX_REFERENCE_BYTES",
    "MAX_REPLY_BYTES",
    "MAX_REQUEST_BYTES",
    "MAX_RESPONSE_CHARS",
    "PARENT_DEADLINE_SECONDS",
    "PYTHON_DEADLINE_SECONDS",
    "RESOURCE_POLICY",
    "STATUSES",
    "STATUS_ORDER",
    "UNSCORABLE",
    "VerifierExecutionError",
    "WORKER_MEMORY_BYTES",
    "result",
]
