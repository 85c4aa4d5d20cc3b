"""Regression tests of the second hardening round (issue "Hardening, round two").

Each test names the item it guards and was run against the code before its fix, where it failed.
Subprocess tests run the real CLI of the ``modebench`` package this test imported (so the same
test can be pointed at another checkout with ``PYTHONPATH``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import modebench

SRC = Path(modebench.__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
ANSWER = {"verifier": "countdown", "numbers": [1, 2, 3], "target": 6}


def _record(ident: Any, responses: list[str] | None = None) -> dict[str, Any]:
    return {
        "id": ident,
        "level": 1,
        "domain": "countdown",
        "answer": ANSWER,
        "responses": responses or ["1+2+3", "x"],
    }


def _write(path: Path, records: list[Any]) -> Path:
    path.write_text("".join(json.dumps(item) + "\n" for item in records))
    return path


def _cli(*args: str, timeout: float = 180, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "modebench", *args],
        env=dict(os.environ, PYTHONPATH=str(SRC), **env),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _children_peak_kib(peaks: dict[int, int]) -> None:
    """Record the peak resident memory (VmHWM) of every live child of this process by pid."""
    for task in Path(f"/proc/{os.getpid()}/task").iterdir():
        try:
            children = (task / "children").read_text().split()
        except OSError:
            continue
        for pid in children:
            try:
                status = Path(f"/proc/{pid}/status").read_text()
            except OSError:
                continue
            for line in status.splitlines():
                if line.startswith("VmHWM:"):
                    peaks[int(pid)] = max(peaks.get(int(pid), 0), int(line.split()[1]))


# -- item 1: the worker count never changes a result ------------------------------------------------
def test_worker_count_never_changes_a_journal_on_cache_filling_input(tmp_path: Path) -> None:
    """Property: one input built to fill the worker caches (700 prompts with ~56 KB graph
    references, many distinct responses) gives byte-identical journals with 1, 2 and 3 workers,
    every innocent response graded (no ``resource_limit``); peak worker memory is recorded."""
    from cache_fill import write_cache_filling_input
    from modebench.streaming import evaluate_file

    source = write_cache_filling_input(tmp_path / "big.jsonl", prompts=700)
    journals, peaks_mib = [], {}
    for workers in (1, 2, 3):
        peaks: dict[int, int] = {}
        output = tmp_path / f"w{workers}.json"
        evaluate_file(
            source, output, workers=workers, progress=lambda event, peaks=peaks: _children_peak_kib(peaks)
        )
        payload = json.loads(output.read_text())
        assert payload["evaluation"]["status"] == "completed", payload["evaluation"]
        journal = output.parent / payload["prompt_results"]["path"]
        journals.append(journal.read_bytes())
        peaks_mib[workers] = max(peaks.values(), default=0) // 1024
        lines = journal.read_bytes().splitlines()
        assert len(lines) == 700
        statuses = {a["status"] for line in lines for a in json.loads(line)["result"]["draws"][0]["attempts"]}
        assert statuses == {"correct", "incorrect"}, statuses
    print(f"peak worker VmHWM (MiB) by worker count: {peaks_mib}")
    assert journals[0] == journals[1] == journals[2]
    assert all(0 < peak < 512 for peak in peaks_mib.values()), peaks_mib


# -- item 2: plug-ins --------------------------------------------------------------------------------
PLUGIN_ROOT = Path(__file__).resolve().parent / "domains"
QUEENS_SITE = PLUGIN_ROOT / "plugin_site"
QUEENS_SRC = Path(__file__).resolve().parents[1] / "examples" / "domain-plugin" / "src"
QUEENS = {"verifier": "queens", "n": 5, "fixed": [[1, 1]]}
LONG_LITERAL = "\\boxed{1" + "0" * 5000 + "}"


def _plugin_site(root: Path, name: str, module_source: str, entry: str | None = None) -> Path:
    """An installed-looking distribution ``name`` whose module runs ``module_source`` at import."""
    site = root / f"site-{name}"
    info = site / f"{name}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[modebench.domains]\n{entry or name} = {name}_mod:PLUGIN\n")
    (site / f"{name}_mod.py").write_text(module_source)
    return site


def _plugin_cli(sites: list[Path], *args: str) -> subprocess.CompletedProcess[str]:
    path = os.pathsep.join(str(p) for p in [SRC, *sites, QUEENS_SITE, QUEENS_SRC])
    return subprocess.run(
        [sys.executable, "-m", "modebench", *args],
        env=dict(os.environ, PYTHONPATH=path),
        capture_output=True,
        text=True,
        timeout=180,
    )


def _statuses(receipt: Path) -> dict[str, list[str]]:
    payload = json.loads(receipt.read_text())
    journal = receipt.parent / payload["prompt_results"]["path"]
    return {
        (entry := json.loads(line))["result"]["id"]: [
            a["status"] for a in entry["result"]["draws"][0]["attempts"]
        ]
        for line in journal.read_text().splitlines()
    }


def test_a_plugin_run_loads_only_the_plugins_it_uses(tmp_path: Path) -> None:
    """An installed but unused plug-in is never imported, so its side effect (lifting CPython's
    4,300-digit limit) cannot flip the built-in Countdown verdict of a long literal."""
    marker = tmp_path / "imported"
    side = _plugin_site(
        tmp_path,
        "sideeffect",
        f"import sys, pathlib\npathlib.Path({str(marker)!r}).write_text('x')\nsys.set_int_max_str_digits(0)\nPLUGIN = None\n",
    )
    source = _write(
        tmp_path / "in.jsonl",
        [
            {"id": "q", "level": 1, "domain": "modebench_queens/queens", "answer": QUEENS,
             "responses": ["\\boxed{1,3,5,2,4}"]},
            _record("c", [LONG_LITERAL]),
        ],
    )  # fmt: skip
    done = _plugin_cli([side], "evaluate", str(source), "--output", str(tmp_path / "r.json"))
    assert done.returncode == 0, done.stderr
    assert not marker.exists(), "an unused plug-in was imported"
    assert _statuses(tmp_path / "r.json")["c"] == ["malformed"]


def test_a_used_plugins_import_side_effect_never_flips_a_builtin_verdict(tmp_path: Path) -> None:
    """A plug-in the run uses lifts the digit limit at import: the Countdown verdict in the same
    run is still the built-in one (``malformed``), as graded alone."""
    module = (
        "import sys, dataclasses\nsys.set_int_max_str_digits(0)\n"
        "from modebench_queens import PLUGIN as Q\n"
        "PLUGIN = dataclasses.replace(Q, name='digits_mod/digits')\n"
    )
    site = _plugin_site(tmp_path, "digits", module)
    source = _write(
        tmp_path / "in.jsonl",
        [
            {"id": "q", "level": 1, "domain": "digits_mod/digits", "answer": QUEENS,
             "responses": ["\\boxed{1,3,5,2,4}"]},
            _record("c", [LONG_LITERAL, "1+2+3"]),
        ],
    )  # fmt: skip
    done = _plugin_cli([site], "evaluate", str(source), "--output", str(tmp_path / "r.json"))
    assert done.returncode == 0, done.stderr
    statuses = _statuses(tmp_path / "r.json")
    assert statuses == {"q": ["correct"], "c": ["malformed", "correct"]}
    payload = json.loads((tmp_path / "r.json").read_text())
    assert set(payload["software"]["plugins"]) == {"digits_mod/digits"}  # what was loaded is recorded


@pytest.mark.parametrize("failure", ["raise SystemExit(0)", "raise SystemExit('bye')", "raise KeyError('k')"])
def test_a_plugin_failing_at_import_is_a_clean_error(tmp_path: Path, failure: str) -> None:
    site = _plugin_site(tmp_path, "quits", failure + "\n")
    source = _write(
        tmp_path / "in.jsonl",
        [{"id": "q", "level": 1, "domain": "quits_mod/quits", "answer": QUEENS, "responses": ["x"]}],
    )
    done = _plugin_cli([site], "evaluate", str(source), "--output", str(tmp_path / "r.json"))
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert "quits_mod/quits" in done.stderr and "Traceback" not in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl", "site-quits"]
