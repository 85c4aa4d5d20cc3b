"""Shared data of the rl tests: the walkthrough's five-domain records (certified witnesses and
hand-picked failures), and one batch grader for the module."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from modebench.rl import BatchGrader

WALKTHROUGH = Path(__file__).resolve().parents[2] / "src" / "modebench" / "walkthrough.json"


@pytest.fixture(scope="session")
def records() -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = json.loads(WALKTHROUGH.read_text(encoding="utf-8"))["records"]
    return data


@pytest.fixture(scope="module")
def grader() -> Iterator[BatchGrader]:
    with BatchGrader(2) as pool:
        yield pool
