"""0.4.0 behaviours this project adopted for its drop-in surface (docs/compatibility.md)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

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
