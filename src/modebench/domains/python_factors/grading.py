"""0.4.0's ``modebench.domains.python_factors.grading``: run a candidate lambda on the cases.

Runs the candidate in *this* process, like 0.4.0's worker-side function: callers hand it only
from inside a worker (``verifier_worker``); everyone else uses ``verifier.grade_response``.
"""

from __future__ import annotations

from typing import Any

from modebench.compat.domain_modules import candidate_grader
from modebench.diagnostics import result


def grade(candidate: Any, spec: Any) -> dict[str, Any]:
    return candidate_grader("python_factors")(candidate, spec, candidate)


__all__ = ["grade", "result"]
