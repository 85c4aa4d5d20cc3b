"""0.4.0's per-domain verifier steps that its tests replace at call time (a registry of originals).

0.4.0's worker looked these functions up when it graded, so a test that replaced one (to make it
raise) injected a fault: ``domains.countdown.verifier._countdown_eval_and_numbers``,
``domains.graph_coloring.verifier._verify_graph_coloring_colors``,
``domains.mathir.verifier._execute_mathir_commands``, ``domains.pantry_plan.verifier.
validate_pantry_plan`` and ``domains.python_factors.verifier.execute_python_factor_candidate``.
Each module registers its own function here when it is imported; ``compat.worker.guarded_handle``
compares the module attribute with it by identity, so nothing changes unless one was replaced.
This module imports nothing, so any module can register without an import cycle.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

#: domain → (module path, attribute name) of its call-time verifier step.
HOOKS: dict[str, tuple[str, str]] = {
    "countdown": ("modebench.domains.countdown.verifier", "_countdown_eval_and_numbers"),
    "graph_coloring": ("modebench.domains.graph_coloring.verifier", "_verify_graph_coloring_colors"),
    "mathir": ("modebench.domains.mathir.verifier", "_execute_mathir_commands"),
    "pantry_plan": ("modebench.domains.pantry_plan.verifier", "validate_pantry_plan"),
    "python_factors": ("modebench.domains.python_factors.verifier", "execute_python_factor_candidate"),
}
#: domain → the function its module defined (registered at import).
ORIGINALS: dict[str, Any] = {}


def backend(domain: str) -> Callable[[F], F]:
    """Register ``function`` as ``domain``'s original call-time verifier step."""

    def register(function: F) -> F:
        ORIGINALS[domain] = function
        return function

    return register


__all__ = ["HOOKS", "ORIGINALS", "backend"]
