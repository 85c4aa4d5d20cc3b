"""0.4.0's ``modebench.domains.mathir.grading``: grade an extracted candidate (in this process)."""

from __future__ import annotations

from modebench.compat.domain_modules import candidate_grader
from modebench.diagnostics import result

grade = candidate_grader("mathir")

__all__ = ["grade", "result"]
