"""0.4.0's worker-side grading core: one request graded without a process boundary."""

from __future__ import annotations

from typing import Any

from modebench.diagnostics import MAX_RESPONSE_CHARS, result
from modebench.domains._pipeline import grade_local as _grade_local
from modebench.domains.countdown.grading import grade as countdown_result
from modebench.domains.python_factors.grading import grade as python_result


def grade_local(level: Any, domain: Any, answer: Any, text: Any) -> dict[str, Any]:
    """Grade one JSON-clean request in this process (the worker's own step; trusted callers only)."""
    return _grade_local(level, domain, answer, text)


__all__ = ["MAX_RESPONSE_CHARS", "countdown_result", "grade_local", "python_result", "result"]
