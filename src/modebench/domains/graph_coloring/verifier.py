"""0.4.0's ``modebench.domains.graph_coloring.verifier``: reference validation."""

from __future__ import annotations

from modebench.compat.backends import backend
from modebench.compat.domain_modules import reference_validator
from modebench.compat.legacy import _graph_coloring_from_candidate, _verify_graph_coloring_colors

validate_reference = reference_validator("graph_coloring")
# 0.4.0's colouring check, looked up at call time by ``verifier_worker.guarded_handle``.
backend("graph_coloring")(_verify_graph_coloring_colors)

__all__ = ["_graph_coloring_from_candidate", "_verify_graph_coloring_colors", "validate_reference"]
