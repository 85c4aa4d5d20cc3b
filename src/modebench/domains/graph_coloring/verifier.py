"""0.4.0's ``modebench.domains.graph_coloring.verifier``: reference validation."""

from __future__ import annotations

from modebench.compat.domain_modules import reference_validator

validate_reference = reference_validator("graph_coloring")

__all__ = ["validate_reference"]
