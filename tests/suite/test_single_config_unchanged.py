"""A single ``--config`` keeps its outputs byte for byte: the golden values were recorded on the
code before several configs per run existed (``tests/suite/single_config.py``)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.suite.single_config import capture

GOLDEN = Path(__file__).with_name("single_config_golden.json")


def test_single_config_prepare_and_evaluate_are_unchanged(tmp_path: Path) -> None:
    assert capture(tmp_path) == json.loads(GOLDEN.read_text())
