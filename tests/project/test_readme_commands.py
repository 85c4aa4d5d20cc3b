"""Every shell command of the README runs as written (``ops/checks/newcomer.py``, first-hour issue): a
newcomer's fresh directory, isolated HOME and caches, no network, exit codes checked."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "ops" / "checks" / "newcomer.py"


def _newcomer() -> ModuleType:
    spec = importlib.util.spec_from_file_location("newcomer", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["newcomer"] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_every_readme_command_runs_as_written() -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--json"], capture_output=True, text=True, timeout=900, cwd=ROOT
    )
    results = json.loads(done.stdout)
    failed = [r for r in results if not (r["outcome"] == "ok" or r["outcome"].startswith("skipped"))]
    assert failed == [] and done.returncode == 0, json.dumps(failed, indent=2)
    by_command = {r["command"]: r["outcome"] for r in results}
    # The Quick start: make demo runs; make check is skipped by the script, never recursed into.
    assert by_command["make demo"] == "ok"
    assert by_command["make check"] == "skipped: runs the test suite, which runs this script"
    ran = [r for r in results if r["outcome"] == "ok"]
    assert len(ran) >= 20
    assert any("--ids test.ids" in r["command"] for r in ran)  # tune on dev, report on test
    skipped = {r["outcome"] for r in results if r["outcome"].startswith("skipped")}
    assert all(len(reason) > len("skipped: ") + 10 for reason in skipped)  # every skip says why


def test_blocks_directives_and_exit_marks(tmp_path: Path) -> None:
    newcomer = _newcomer()
    readme = tmp_path / "README.md"
    readme.write_text(
        "intro\n\n```sh\necho one \\\n  two\n# a comment\nfalse   # fails on purpose: exit 1\n```\n\n"
        "```json\n{}\n```\n\n"
        "<!-- newcomer: checkout; setup=true; fixture=r.jsonl:custom; skip=needs a GPU; really -->\n"
        "```bash\nnvidia-smi\n```\n"
    )
    first, second = newcomer.blocks(readme.read_text())
    assert first.commands == ["echo one    two", "false   # fails on purpose: exit 1"]
    assert second.checkout and second.setup == ["true"] and second.fixtures == {"r.jsonl": ["custom"]}
    assert second.skip == "needs a GPU; really"
    assert newcomer.main(["--readme", str(readme)]) == 0  # `false` was expected to exit 1


def test_a_failing_command_fails_the_run(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text("```sh\nmodebench evaluate missing.jsonl --output out.json\n```\n")
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--readme", str(readme)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 1
    assert "FAILED: exit 2, expected 0" in done.stdout and "missing.jsonl" in done.stdout
    assert "0 commands ok, 1 failed, 0 skipped" in done.stdout


def test_install_hints_name_this_project() -> None:
    """``pip install 'modebench[x]'`` installs someone else's 0.4.0: no hint may say it."""
    offenders = [
        f"{path.relative_to(ROOT)}:{number}"
        for base in (ROOT / "src", ROOT / "docs")
        for path in base.rglob("*")
        if path.suffix in (".py", ".md")
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if "pip install modebench" in line or "pip install 'modebench[" in line
    ]
    assert offenders == []
    from modebench.data import DATA_EXTRA_MESSAGE

    assert DATA_EXTRA_MESSAGE.endswith("pip install -e '.[data]' in the modebench checkout")
