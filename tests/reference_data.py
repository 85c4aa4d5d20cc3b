"""Locate the ModeBench 0.4.0 public reference data (read in place, never copied)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = Path(os.environ.get("MODEBENCH_REFERENCE_DIR", ROOT.parent / "shared" / "reference"))
SPEC = Path(os.environ.get("MODEBENCH_SPEC_DIR", ROOT.parent / "shared" / "spec"))
SKIP_REASON = f"ModeBench 0.4.0 reference data not found at {REFERENCE} (set MODEBENCH_REFERENCE_DIR)"


def reference_json(relative: str) -> Any:
    """Load a reference file, or skip the calling test with a clear reason when it is absent."""
    path = REFERENCE / relative
    if not path.is_file():
        pytest.skip(SKIP_REASON)
    return json.loads(path.read_text(encoding="utf-8"))


def conformance_fixtures() -> list[dict[str, Any]]:
    path = REFERENCE / "tests" / "fixtures" / "conformance-v1.json"
    if not path.is_file():
        return []
    fixtures: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))["fixtures"]
    return fixtures
