"""0.4.0 behaviours this project adopted for its drop-in surface (docs/compatibility.md)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from modebench import dataset_cache, streaming
from modebench.validation import InputError, json_value, loads


@pytest.mark.parametrize(
    ("config", "split", "message"),
    [
        ("../../escape", "eval", "unknown dataset selection: ../../escape/eval; use datasets list"),
        ("level1_countdown", "nope", "unknown dataset selection: level1_countdown/nope; use datasets list"),
        (None, "nope", "unknown dataset selection: */nope; use datasets list"),
    ],
)
def test_discover_refuses_a_selection_that_matches_nothing(
    config: str | None, split: str, message: str
) -> None:
    with pytest.raises(InputError) as caught:
        dataset_cache.discover(config, split)
    assert str(caught.value) == message


def test_discover_still_lists_what_exists() -> None:
    assert [r["split"] for r in dataset_cache.discover("level1_countdown", "eval")] == ["eval"]


def test_atomic_output_on_an_existing_file_is_a_file_exists_error_and_keeps_the_file(tmp_path: Path) -> None:
    target = tmp_path / "out.json"
    target.write_text("old", encoding="utf-8")
    with pytest.raises(FileExistsError) as caught:
        with streaming.atomic_output(target) as handle:
            handle.write("new")
    assert isinstance(caught.value, InputError)  # our callers' (and the CLI's) error type
    assert str(caught.value) == f"output already exists: {target}"
    assert target.read_text(encoding="utf-8") == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]  # no temporary left behind


def test_python_dash_m_modebench_cli_runs() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "modebench.cli", "--version"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0
    assert "0.5.0" in done.stdout + done.stderr


def test_json_value_validates_like_0_4_0() -> None:
    assert json_value({"a": [1, "x", None]}) is None
    with pytest.raises(InputError, match="^run must contain only JSON values$"):
        json_value({"a": (1, 2)}, "run")


def test_loads_names_a_duplicate_field() -> None:
    with pytest.raises(InputError, match="^duplicate JSON field: a$"):
        loads('{"a": 1, "a": 2}')


def test_token_prefix_mask_needs_torch_and_says_so() -> None:
    from modebench.templates import build_response_token_prefix_mask

    try:
        import torch
    except ImportError:
        with pytest.raises(ImportError, match="pip install torch"):
            build_response_token_prefix_mask(None, None)
        return
    masks = torch.tensor([[0, 1, 1, 1, 0], [1, 1, 0, 1, 1]], dtype=torch.bool)
    mask = build_response_token_prefix_mask(masks, torch.tensor([2, 3]))
    assert mask.tolist() == [[False, True, True, False, False], [True, True, False, True, False]]


def _surface_script() -> Any:
    path = Path(__file__).resolve().parents[2] / "ops" / "fidelity" / "surface_vs_040.py"
    spec = importlib.util.spec_from_file_location("surface_vs_040", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_surface_comparison_reruns_calls_answered_with_a_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    """A parent deadline hit on a loaded machine is re-run, not reported as a difference."""
    script = _surface_script()
    timeout = {"value": {"$dict": [["status", "timeout"], ["verified", False]]}}
    graded = {"value": {"$dict": [["status", "incorrect"], ["verified", False]]}}
    raised = {"error": ["VerifierExecutionError", "verifier timeout: parent request deadline exceeded"]}
    assert script.timed_out(timeout) and script.timed_out(raised) and not script.timed_out(graded)
    answers = {"theirs": [timeout, graded], "ours": [graded]}

    def replay(python: str, calls: list[dict[str, Any]], cwd: str) -> dict[int, dict[str, Any]]:
        side = "ours" if python == sys.executable else "theirs"
        return {call["id"]: {"id": call["id"], **answers[side].pop(0)} for call in calls}

    monkeypatch.setattr(script, "replay", replay)
    items = [{"id": 0}, {"id": 1}]
    ours = {0: {"id": 0, **graded}, 1: {"id": 1, **raised}}
    theirs = {0: {"id": 0, **timeout}, 1: {"id": 1, **graded}}
    counts = script.retry_timeouts(items, ours, theirs, "/reference/python", 3)
    assert counts == {"0.4.0": 1, "ours": 1, "left": 0}
    assert theirs[0]["value"] == graded["value"] and ours[1]["value"] == graded["value"]
