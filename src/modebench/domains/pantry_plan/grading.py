"""0.4.0's ``modebench.domains.pantry_plan.grading``: grade an extracted candidate at a level
(Level 1 applies the support-mask projection, as in the graded path)."""

from __future__ import annotations

from typing import Any

from modebench.compat.domain_modules import candidate_grader
from modebench.diagnostics import result


def grade(level: Any, candidate: Any, spec: Any, text: Any) -> dict[str, Any]:
    return candidate_grader("pantry_plan", level)(candidate, spec, text)


__all__ = ["grade", "result"]
