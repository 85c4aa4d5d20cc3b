"""Locate the ModeBench 0.4.0 public reference data (read in place, never copied).

Every test that needs it skips with the one reason :data:`SKIP_REASON` when it is absent, by one of
the helpers below (``needs_reference`` on a test or a parameter, the ``reference_dir`` fixture of
``tests/conftest.py``, or :func:`reference_json` / :func:`require_reference` inside a test). The
end of the run counts those skips and says where to put the data (``tests/conftest.py``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = Path(os.environ.get("MODEBENCH_REFERENCE_DIR", ROOT.parent / "shared" / "reference"))
SPEC = Path(os.environ.get("MODEBENCH_SPEC_DIR", ROOT.parent / "shared" / "spec"))
#: The start of every such skip's reason; the run's summary counts the skips by it.
MISSING = "ModeBench 0.4.0 reference data not found"
SKIP_REASON = f"{MISSING} at {REFERENCE} (set MODEBENCH_REFERENCE_DIR)"
CONFORMANCE = Path("tests") / "fixtures" / "conformance-v1.json"


def have_reference() -> bool:
    """True when the reference data is where the tests look for it (its conformance fixtures)."""
    return (REFERENCE / CONFORMANCE).is_file()


#: Mark a test, or one ``pytest.param``, that needs the reference data (the ``reference`` marker;
#: ``tests/conftest.py`` skips what carries it when the data is absent).
needs_reference = pytest.mark.reference


def require_reference() -> Path:
    """Skip the calling test with the reason above unless the reference data is present."""
    if not have_reference():
        pytest.skip(SKIP_REASON)
    return REFERENCE


def reference_json(relative: str) -> Any:
    """Load a reference file, or skip the calling test with a clear reason when it is absent."""
    path = REFERENCE / relative
    if not path.is_file():
        pytest.skip(SKIP_REASON)
    return json.loads(path.read_text(encoding="utf-8"))


def conformance_fixtures() -> list[dict[str, Any]]:
    path = REFERENCE / CONFORMANCE
    if not path.is_file():
        return []
    fixtures: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))["fixtures"]
    return fixtures
