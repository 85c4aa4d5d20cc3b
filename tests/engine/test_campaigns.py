"""Reduced versions of the kill and malformed-input campaigns (``ops/``), run on every check.

The full campaigns (``ops/campaigns/kill_campaign.py``, ``ops/campaigns/malformed_campaign.py``) record their
results in ``evidence/``; these runs are small and fast but exercise the same code paths.
"""

from __future__ import annotations

import importlib.util
import signal
from pathlib import Path
from types import ModuleType

OPS = Path(__file__).resolve().parents[2] / "ops" / "campaigns"


def _script(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, OPS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_reduced_kill_campaign(tmp_path: Path) -> None:
    summary = _script("kill_campaign").campaign(tmp_path, prompts=400, kills=3, per_chain=3, seed=7)
    assert summary["sigkills"] >= 3
    assert summary["all_identical"], summary["details"]
    kills = [step for chain in summary["details"] for step in chain["kills"]]
    assert all(step["exit"] in (-signal.SIGKILL, 0) for step in kills)


def test_reduced_malformed_campaign(tmp_path: Path) -> None:
    summary = _script("malformed_campaign").campaign(tmp_path, files=60, subprocesses=2, seed=7, oversize=1)
    assert summary["files"] == 60
    assert summary["all_ok"], summary["failure_details"]
