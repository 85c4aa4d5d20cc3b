"""The layered import contract fails the lint on an up-arrow (``[tool.importlinter]``, ``make lint``).

The contract is run by import-linter itself over a copy of the package in which one module of a
lower floor imports a higher one; the real tree keeps the contract (``make lint`` checks that).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT = Path(sys.executable).with_name("lint-imports")


def _contract() -> str:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    return text[text.index("[tool.importlinter]") : text.index("[tool.mypy]")]


def _lint(tmp_path: Path, edit: tuple[str, str] | None) -> subprocess.CompletedProcess[str]:
    tree = tmp_path / "src"
    shutil.copytree(
        ROOT / "src" / "modebench", tree / "modebench", ignore=shutil.ignore_patterns("__pycache__")
    )
    if edit is not None:
        module, line = edit
        path = tree / "modebench" / module
        path.write_text(path.read_text(encoding="utf-8") + f"\n{line}\n", encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text(_contract(), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(tree)}
    return subprocess.run(
        [str(LINT), "--no-cache"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.mark.skipif(not LINT.exists(), reason="import-linter (dev extra) not installed")
def test_an_import_up_a_floor_fails_the_lint(tmp_path: Path) -> None:
    # receipt/ (floor 2, formats) must never import the engine (floor 3).
    result = _lint(tmp_path, ("receipt/tallies.py", "import modebench.engine.spec  # noqa"))
    assert result.returncode != 0
    assert "modebench.receipt is not allowed to import modebench.engine" in result.stdout


@pytest.mark.skipif(not LINT.exists(), reason="import-linter (dev extra) not installed")
def test_the_worker_side_may_not_import_the_engine(tmp_path: Path) -> None:
    result = _lint(tmp_path, ("isolation/client.py", "import modebench.engine.pipeline  # noqa"))
    assert result.returncode != 0
    assert "modebench.isolation is not allowed to import modebench.engine" in result.stdout
