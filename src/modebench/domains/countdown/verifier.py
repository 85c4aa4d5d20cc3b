"""0.4.0's ``modebench.domains.countdown.verifier``: reference validation."""

from __future__ import annotations

from modebench.compat.domain_modules import reference_validator

validate_reference = reference_validator("countdown")

__all__ = ["validate_reference"]
