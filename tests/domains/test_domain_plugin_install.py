"""The example plug-in as a user meets it: pip-installed into a fresh virtual environment.

A new environment gets modebench (built from this checkout) and ``examples/domain-plugin``
through pip, then one JSONL file is evaluated by the ``modebench`` command and by
``modebench.api.evaluate_file``; both receipts must name the plug-in's distribution and version
and agree on every cell. Nothing is installed into the environment running the tests.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import venv
from importlib import metadata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "domain-plugin"
QUEENS = "modebench_queens/queens"
# Only what a build of the two distributions reads (the tests, caches and VCS data stay behind).
_SKIP = shutil.ignore_patterns(
    ".git", ".venv", "tests", "build", "dist", "*.egg-info", "__pycache__", ".*_cache", "demo-run", "ops"
)


def _run(*command: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [str(part) for part in command], cwd=cwd, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, (command, done.stdout[-2000:], done.stderr[-4000:])
    return done


def _share(distribution: str, farm: Path) -> None:
    """Link one installed distribution (its packages and metadata) into ``farm``."""
    found = metadata.distribution(distribution)
    site = Path(str(found.locate_file("")))
    for top in {Path(str(item)).parts[0] for item in found.files or ()}:
        if not top.endswith(".pth") and (site / top).exists() and not (farm / top).exists():
            (farm / top).symlink_to(site / top)


@pytest.fixture(scope="module")
def fresh_env(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("plugin-venv")
    checkout = base / "checkout"
    shutil.copytree(ROOT, checkout, ignore=_SKIP)  # builds write into the source tree: use a copy
    environment = base / "venv"
    # No pip inside (this interpreter's pip installs into it) and SymPy shared from this
    # environment rather than reinstalled: the slow parts of a fresh environment, none of the
    # behaviour under test. modebench and the plug-in are built and installed by pip as usual.
    venv.EnvBuilder(with_pip=False).create(environment)
    python = environment / "bin" / "python"
    farm = base / "shared"
    farm.mkdir()
    for name in ("sympy", "mpmath"):
        _share(name, farm)
    site = _run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])").stdout.strip()
    (Path(site) / "shared.pth").write_text(f"{farm}\n")
    _run(
        sys.executable,
        "-m",
        "pip",
        "--python",
        python,
        "install",
        "--quiet",
        "--no-compile",
        "--disable-pip-version-check",
        checkout,
        checkout / "examples" / "domain-plugin",
    )
    return environment


def _records() -> str:
    answer = {"verifier": "queens", "n": 5, "fixed": [[1, 1]]}
    lines = [
        {
            "id": "corner",
            "level": 1,
            "domain": QUEENS,
            "answer": answer,
            "responses": ["\\boxed{1,3,5,2,4}", "\\boxed{1,4,2,5,3}", "\\boxed{1,3,5,2,4}", "no idea"],
        },
        {
            "id": "open",
            "level": 3,
            "domain": QUEENS,
            "answer": {"verifier": "queens", "n": 6, "fixed": []},
            "responses": [
                "\\boxed{2,4,6,1,3,5}",
                "\\boxed{3,6,2,5,1,4}",
                "\\boxed{1,2,3,4,5,6}",
                "\\boxed{5,3,1,6,4,2}",
            ],
        },
    ]
    return "".join(json.dumps(line) + "\n" for line in lines)


def _version() -> str:
    found = re.search(r'^version = "([^"]+)"', (EXAMPLE / "pyproject.toml").read_text(), re.M)
    assert found is not None
    return found.group(1)


def test_cli_and_api_evaluate_with_the_installed_plugin(fresh_env: Path, tmp_path: Path) -> None:
    source = tmp_path / "responses.jsonl"
    source.write_text(_records())
    _run(
        fresh_env / "bin" / "modebench",
        "evaluate",
        source,
        "--output",
        tmp_path / "cli.json",
        "--min-defined-prompts",
        "1",
    )
    script = (
        "import sys\n"
        "from modebench.api import EvaluationOptions, evaluate_file\n"
        "receipt = evaluate_file(sys.argv[1], sys.argv[2], options=EvaluationOptions(min_defined_prompts=1))\n"
        "print(receipt.status, receipt.prompts, receipt.cells)\n"
    )
    done = _run(fresh_env / "bin" / "python", "-c", script, source, tmp_path / "api.json")
    assert done.stdout.split() == ["completed", "2", "2"]
    cli = json.loads((tmp_path / "cli.json").read_text())
    api = json.loads((tmp_path / "api.json").read_text())
    for receipt in (cli, api):
        origin = receipt["software"]["plugins"][QUEENS]
        assert (origin["distribution"], origin["version"]) == ("modebench-queens", _version())
        assert re.fullmatch(r"[0-9a-f]{64}", origin["source_sha256"])
        assert receipt["evaluation"]["status"] == "completed"
    assert cli["software"] == api["software"] and cli["cells"] == api["cells"]
    corner = next(cell for cell in cli["cells"] if cell["level"] == 1)
    assert (corner["accuracy"], corner["distinct_at_k"]) == (0.75, 2)
    journal = (tmp_path / "cli.json.work" / "results.jsonl").read_text().splitlines()
    assert all(json.loads(line)["plugin"] == cli["software"]["plugins"][QUEENS] for line in journal)


def test_an_unknown_domain_error_lists_the_installed_plugin(fresh_env: Path, tmp_path: Path) -> None:
    source = tmp_path / "typo.jsonl"
    source.write_text(_records().replace(QUEENS, "modebench_queens/queen", 1))
    done = subprocess.run(
        [
            str(fresh_env / "bin" / "modebench"),
            "evaluate",
            str(source),
            "--output",
            str(tmp_path / "out.json"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert (
        "line 1, prompt 'corner': unsupported ModeBench domain: modebench_queens/queen (valid domains: "
        "graph_coloring, countdown, python_factors, mathir, pantry_plan, modebench_queens/queens)"
    ) in done.stderr
    assert not (tmp_path / "out.json").exists() and not (tmp_path / "out.json.work").exists()


def test_the_test_only_metadata_matches_the_example() -> None:
    # tests/domains/plugin_site stands in for this install in the in-process contract tests.
    site = ROOT / "tests" / "domains" / "plugin_site" / f"modebench_queens-{_version()}.dist-info"
    assert f"Version: {_version()}" in (site / "METADATA").read_text()
    stanza = (EXAMPLE / "pyproject.toml").read_text().split('[project.entry-points."modebench.domains"]\n')[1]
    assert stanza.splitlines()[0].replace('"', "") in (site / "entry_points.txt").read_text()
