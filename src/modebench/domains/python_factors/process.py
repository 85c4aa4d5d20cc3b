"""0.4.0's ``modebench.domains.python_factors.process`` (alias ``modebench.python_modebench_process``):
the Python factor verifier behind a bounded worker process."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from modebench.compat.domain_modules import PythonFactorValidation, bare_candidate
from modebench.diagnostics import UNSCORABLE, VerifierExecutionError
from modebench.worker_process import BoundedWorker

_LEVEL = 1  # the level plays no role in Python factor grading


class PythonFactorVerifierProcess(BoundedWorker):
    """A bounded worker that grades Python factor candidates."""

    def check(self, candidate: str, spec: Mapping[str, Any]) -> dict[str, Any]:
        """The worker's result dict for one candidate (no parent-side surface extraction)."""
        return self.request(
            {
                "operation": "grade",
                "level": _LEVEL,
                "domain": "python_factors",
                "answer": dict(spec),
                "text": candidate,
            }
        )

    def validate(self, candidate: str, spec: Mapping[str, Any]) -> PythonFactorValidation | None:
        """The validation of a verified candidate, None for a wrong one; raises on unscorable."""
        if not bare_candidate(candidate):
            return None
        outcome = self.check(candidate, spec)
        status = outcome.get("status")
        if status in UNSCORABLE:
            raise VerifierExecutionError(outcome)
        if status != "correct":
            return None
        outputs = outcome.get("outputs")
        key = outcome.get("canonical_key")
        if not isinstance(key, str) or not isinstance(outputs, list):
            raise VerifierExecutionError({"status": "worker_failure", "detail": "malformed worker output"})
        return PythonFactorValidation(key, tuple(outputs))


def validate_python_factor_function_external(candidate: Any, spec: Any) -> PythonFactorValidation | None:
    """Validate one candidate in a fresh bounded worker."""
    worker = PythonFactorVerifierProcess()
    try:
        return worker.validate(candidate, spec)
    finally:
        worker.close()


__all__ = [
    "BoundedWorker",
    "PythonFactorValidation",
    "PythonFactorVerifierProcess",
    "UNSCORABLE",
    "VerifierExecutionError",
    "validate_python_factor_function_external",
]
