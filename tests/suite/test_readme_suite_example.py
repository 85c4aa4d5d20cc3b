"""The guide's suite example (docs/guide.md, moved there from the README) runs as written, offline, in a fresh directory."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guide.md"


def test_readme_suite_block_runs(tmp_path: Path) -> None:
    text = GUIDE.read_text()
    section = text[text.index("### Whole suites") :]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block is not None
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(
        ["bash", "-e", "-c", block.group(1)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    assert "Suite completed: 2 of 2 configurations completed (split eval)" in done.stdout
    assert sorted(p.name for p in (tmp_path / "suite-demo" / "results").iterdir()) == [
        "level1_countdown.json",
        "level1_countdown.json.work",
        "level2_mathir.json",
        "level2_mathir.json.work",
        "suite.json",
    ]
