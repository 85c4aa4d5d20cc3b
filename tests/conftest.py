"""Suite-wide settings: property tests are judged on correctness, never on wall-clock speed."""

from __future__ import annotations

from hypothesis import HealthCheck, settings

# CI machines are small and shared; a slow example is not a failure (speed has its own benchmarks).
settings.register_profile("modebench", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("modebench")
