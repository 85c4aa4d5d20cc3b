"""Regression tests of the second hardening round (issue "Hardening, round two").

Each test names the item it guards and was run against the code before its fix, where it failed.
Subprocess tests run the real CLI of the ``modebench`` package this test imported (so the same
test can be pointed at another checkout with ``PYTHONPATH``).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import modebench
from modebench.validation import InputError

SRC = Path(modebench.__file__).resolve().parents[1]
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


# -- item 1: the worker count never changes a result ------------------------------------------------
def test_worker_count_never_changes_a_journal_on_cache_filling_input(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Property: one input built to fill the worker caches (700 prompts with ~56 KB graph
    references, many distinct responses) gives byte-identical journals with 1 and 2 workers,
    every innocent response graded (no ``resource_limit``); peak worker memory is recorded.
    (Three workers on two cores add minutes and no new case: ``ops/benchmarks/cache_memory.py`` measures
    them.)"""
    from modebench.isolation import pool
    from modebench.streaming import evaluate_file
    from tests.cache_fill import children_peak_kib, write_cache_filling_input

    class Patient(pool.BoundedWorker):  # type: ignore[misc]
        """The parent's 5 s per-reply deadline is the contract's, and a timeout is a fair verdict
        on a starved machine; this property is about memory and identical journals, so a machine
        running two test suites at once (load 10-12: two requests for big references took over
        5 s there) must not fail it."""

        def __init__(self, **options: Any) -> None:
            super().__init__(**{"timeout_seconds": 300.0, **options})

    monkeypatch.setattr(pool, "BoundedWorker", Patient)

    source = write_cache_filling_input(tmp_path / "big.jsonl", prompts=700)
    journals, peaks_mib = [], {}
    for workers in (1, 2):
        peaks: dict[int, int] = {}
        output = tmp_path / f"w{workers}.json"
        evaluate_file(
            source, output, workers=workers, progress=lambda event, peaks=peaks: children_peak_kib(peaks)
        )
        payload = json.loads(output.read_text())
        unscored = [
            (json.loads(line)["result"]["id"], attempt["status"], attempt["detail"])
            for line in (output.parent / payload["prompt_results"]["path"]).read_text().splitlines()
            for attempt in json.loads(line)["result"]["draws"][0]["attempts"]
            if attempt["status"] not in ("correct", "incorrect")
        ]
        assert payload["evaluation"]["status"] == "completed", (workers, unscored)
        journal = output.parent / payload["prompt_results"]["path"]
        journals.append(journal.read_bytes())
        peaks_mib[workers] = max(peaks.values(), default=0) // 1024
        lines = journal.read_bytes().splitlines()
        assert len(lines) == 700
        statuses = {a["status"] for line in lines for a in json.loads(line)["result"]["draws"][0]["attempts"]}
        assert statuses == {"correct", "incorrect"}, statuses
    print(f"peak worker VmHWM (MiB) by worker count: {peaks_mib}")
    assert journals[0] == journals[1]
    # Below the worker's 1 GiB address-space limit with room to spare (measured: about 576 and 352
    # MiB for 1 and 2 workers; the caches themselves are budgeted at 64 MiB each).
    assert all(0 < peak < 768 for peak in peaks_mib.values()), peaks_mib


# -- item 2: plug-ins --------------------------------------------------------------------------------
PLUGIN_ROOT = Path(__file__).resolve().parents[1] / "domains"
QUEENS_SITE = PLUGIN_ROOT / "plugin_site"
QUEENS_SRC = Path(__file__).resolve().parents[2] / "examples" / "domain-plugin" / "src"
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


# -- item 11: the trajectory grading cache is keyed by the grader -----------------------------------
def test_trajectory_cache_regrades_after_the_grader_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("pyarrow")
    from modebench import identity
    from modebench.api import trajectory
    from modebench.cli import main
    from tests.ingest.conftest import chatml

    requests_path = tmp_path / "requests.jsonl"
    assert (
        main(
            [
                "prepare",
                "--registry",
                "bundled",
                "--config",
                "level1_countdown",
                "--output",
                str(requests_path),
            ]
        )
        == 0
    )
    requests = [json.loads(line) for line in requests_path.read_text().splitlines()]
    rollouts = tmp_path / "rollouts"
    rollouts.mkdir()
    for step in (1, 2):
        lines = [
            {"input": chatml(requests[i]["messages"]), "output": f"\\boxed{{{step}+1}}", "score": 0}
            for i in range(2)
        ]
        (rollouts / f"{step}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    run = {"model": {"id": "policy", "revision": "rl"}, "generation": {"draws_per_prompt": 1},
           "prompt_condition": "registered_hints_v1"}  # fmt: skip
    options: dict[str, Any] = {
        "registry": "bundled",
        "config": "level1_countdown",
        "grading_cache": tmp_path / "cache",
        "run": run,
    }
    assert trajectory([f"verl:{rollouts}"], **options).meta["grading"]["graded"] == 2
    assert trajectory([f"verl:{rollouts}"], **options).meta["grading"] == {
        "graded": 0,
        "cached": 2,
        "unmatched": 0,
    }
    # A verifier change (what a resume refuses): a new software identity grades afresh.
    changed = dict(identity._source_files())
    changed["domains/countdown/check.py"] = "0" * 64
    monkeypatch.setattr(identity, "_source_files", lambda: tuple(changed.items()))
    assert trajectory([f"verl:{rollouts}"], **options).meta["grading"] == {
        "graded": 2,
        "cached": 0,
        "unmatched": 0,
    }
    # Another data root: graded afresh too.
    data = tmp_path / "data"
    data.mkdir()
    key_a = identity.grader_identity(None)
    key_b = identity.grader_identity(data)
    assert key_a != key_b


# -- item 8: lone surrogates ------------------------------------------------------------------------
def test_a_lone_surrogate_in_a_response_grades_publishes_and_reports(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    source = tmp_path / "in.jsonl"
    source.write_text(
        '{"id": "a", "level": 1, "domain": "countdown", "answer": {"verifier": "countdown", "numbers": [1, 2, 3], '
        '"target": 6}, "responses": ["\\\\boxed{1+2+3}\\udfff", "1+2+3\\udfff", "\\udfff"]}\n'
    )
    done = _cli("evaluate", str(source), "--output", str(tmp_path / "r.json"), "--progress-every", "0")
    assert done.returncode == 0, done.stderr
    page = _cli("report", str(tmp_path / "r.json"), "--html", str(tmp_path / "r.html"))
    assert page.returncode == 0, page.stderr
    assert "\\udfff" in (tmp_path / "r.html").read_text(encoding="utf-8")  # shown as its escape


def test_a_lone_surrogate_in_a_prompt_id_is_refused_with_its_line(tmp_path: Path) -> None:
    source = tmp_path / "in.jsonl"
    good = json.dumps(_record("ok"))
    source.write_text(good + "\n" + good.replace('"ok"', '"bad\\udfff"') + "\n")
    done = _cli("evaluate", str(source), "--output", str(tmp_path / "r.json"), "--progress-every", "0")
    assert done.returncode == 2 and "line 2, prompt 'bad\\udfff'" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl"]


def test_ingest_names_file_and_line_of_a_lone_surrogate_id(tmp_path: Path) -> None:
    source = tmp_path / "samples_t.jsonl"
    line = {"doc_id": 0, "doc": {"id": "a"}, "arguments": [["p", {}]], "resps": [["x"]]}
    second = json.dumps({**line, "doc_id": 1}).replace('"a"', '"b\\udfff"')
    source.write_text(json.dumps(line) + "\n" + second + "\n")
    # The document's own id names the prompt (lm-eval's identity is the task and doc_id otherwise).
    done = _cli("ingest", "lm-eval", str(source), "--id-field", "id", "--output", str(tmp_path / "o.jsonl"))
    assert done.returncode == 2, done.stderr
    assert f"{source}: line 2" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "o.jsonl").exists()


def test_ingest_keeps_a_lone_surrogate_response_as_its_json_escape(tmp_path: Path) -> None:
    source = tmp_path / "samples_t.jsonl"
    row = {"id": "a", "level": 1, "domain": "countdown", "answer": ANSWER}
    source.write_text(
        json.dumps({"doc_id": 0, "doc": row, "arguments": [["p", {}]], "resps": [["1+2+3\udfff", "é"]]})
        + "\n"
    )
    done = _cli("ingest", "lm-eval", str(source), "--output", str(tmp_path / "o.jsonl"))
    assert done.returncode == 0, done.stderr
    [record] = [json.loads(x) for x in (tmp_path / "o.jsonl").read_text().splitlines()]
    assert record["responses"] == ["1+2+3\udfff", "é"]


# -- item 9: merge trusts no shard journal line ----------------------------------------------------
def _shards(tmp_path: Path) -> list[Path]:
    source = _write(tmp_path / "in.jsonl", [_record(f"p{i}") for i in range(4)])
    out = []
    for index in (1, 2):
        receipt = tmp_path / f"s{index}.json"
        done = _cli(
            "evaluate",
            str(source),
            "--output",
            str(receipt),
            "--shard",
            f"{index}/2",
            "--progress-every",
            "0",
        )
        assert done.returncode == 0, done.stderr
        out.append(receipt)
    return out


def _craft(receipt: Path, number: int, line: bytes) -> Path:
    """Replace journal line ``number`` (1-based) and re-hash the journal in the receipt."""
    payload = json.loads(receipt.read_text())
    journal = receipt.parent / payload["prompt_results"]["path"]
    lines = journal.read_bytes().splitlines(keepends=True)
    lines[number - 1] = line + b"\n"
    journal.write_bytes(b"".join(lines))
    payload["prompt_results"]["sha256"] = hashlib.sha256(journal.read_bytes()).hexdigest()
    receipt.write_text(json.dumps(payload))
    return journal


@pytest.mark.parametrize(
    "case", ["list", "sequence-only", "empty-result", "invalid-json", "result-missing-draws", "bool-sequence"]
)
def test_merge_names_file_and_line_of_a_crafted_shard_line(tmp_path: Path, case: str) -> None:
    first, second = _shards(tmp_path)
    original = json.loads(
        (tmp_path / json.loads(second.read_text())["prompt_results"]["path"]).read_text().splitlines()[1]
    )
    line = {
        "list": b"[]",
        "sequence-only": b'{"sequence": 3}',
        "empty-result": json.dumps({**original, "result": {}}).encode(),
        "invalid-json": b'{"sequence": 3,',
        "result-missing-draws": json.dumps({**original, "result": {"id": "p3"}}).encode(),
        "bool-sequence": json.dumps({**original, "sequence": True}).encode(),
    }[case]
    journal = _craft(second, 2, line)
    done = _cli("merge", str(first), str(second), "--output", str(tmp_path / "m.json"))
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert f"{journal} line 2" in done.stderr, done.stderr
    assert not (tmp_path / "m.json").exists() and not (tmp_path / "m.json.work").exists()


# -- Also: a receipt names only a journal below its own directory ------------------------------------
@pytest.mark.parametrize("path", ["/etc/hostname", "../elsewhere/results.jsonl", "a/../../results.jsonl"])
def test_a_receipt_journal_path_outside_its_directory_is_refused(tmp_path: Path, path: str) -> None:
    from modebench.reporting import read_report

    source = _write(tmp_path / "in.jsonl", [_record("p")])
    done = _cli("evaluate", str(source), "--output", str(tmp_path / "r.json"), "--progress-every", "0")
    assert done.returncode == 0, done.stderr
    payload = json.loads((tmp_path / "r.json").read_text())
    payload["prompt_results"]["path"] = path
    (tmp_path / "r.json").write_text(json.dumps(payload))
    with pytest.raises(InputError, match="must be relative to the receipt's directory"):
        read_report(tmp_path / "r.json")


# -- Also: worker_failure advice and pluralisation --------------------------------------------------
def test_failure_advice_says_when_the_response_caused_a_worker_failure(tmp_path: Path) -> None:
    from modebench.api import explain_unscorable

    deep = "\\boxed{" + "+".join(["1"] * 1000) + "}"  # RecursionError in the reference walk
    source = _write(tmp_path / "in.jsonl", [_record("p", [deep, "1+2+3"])])
    done = _cli("evaluate", str(source), "--output", str(tmp_path / "r.json"), "--progress-every", "0")
    assert done.returncode == 3, done.stderr
    text = explain_unscorable(tmp_path / "r.json").text()
    assert text.startswith("1 response could not be scored (worker_failure 1)"), text
    assert "worker_failure (caused by the response): the response itself" in text
    assert "an evaluator problem, not the model's" not in text


# -- item 4: one publishing rule -------------------------------------------------------------------
def test_ingest_never_overwrites_its_source(tmp_path: Path) -> None:
    source = tmp_path / "samples_t.jsonl"
    row = {"id": "a", "level": 1, "domain": "countdown", "answer": ANSWER}
    source.write_text(
        json.dumps({"doc_id": 0, "doc": row, "arguments": [["p", {}]], "resps": [["1+2+3"]]}) + "\n"
    )
    before = source.read_bytes()
    done = _cli("ingest", "lm-eval", str(source), "--output", str(source))
    assert done.returncode == 2 and "already exists" in done.stderr and str(source) in done.stderr, (
        done.stderr
    )
    assert source.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["samples_t.jsonl"]


def test_ingest_never_writes_through_a_planted_link(tmp_path: Path) -> None:
    source = tmp_path / "samples_t.jsonl"
    row = {"id": "a", "level": 1, "domain": "countdown", "answer": ANSWER}
    source.write_text(
        json.dumps({"doc_id": 0, "doc": row, "arguments": [["p", {}]], "resps": [["1+2+3"]]}) + "\n"
    )
    victim = tmp_path / "victim"
    victim.write_text("keep")
    (tmp_path / ".o.jsonl.partial").symlink_to(victim)  # the old predictable temporary name
    done = _cli("ingest", "lm-eval", str(source), "--output", str(tmp_path / "o.jsonl"))
    assert done.returncode == 0, done.stderr
    assert victim.read_text() == "keep"
    (tmp_path / "link.jsonl").symlink_to(victim)
    done = _cli("ingest", "lm-eval", str(source), "--output", str(tmp_path / "link.jsonl"))
    assert done.returncode == 2 and "symbolic link" in done.stderr and victim.read_text() == "keep"


@pytest.mark.parametrize("command", ["evaluate", "merge"])
def test_an_output_through_a_dangling_symlink_is_refused(tmp_path: Path, command: str) -> None:
    source = _write(tmp_path / "in.jsonl", [_record("p")])
    target = tmp_path / "elsewhere" / "planted.json"
    target.parent.mkdir()
    link = tmp_path / "out.json"
    link.symlink_to(target)
    args = ["evaluate", str(source)] if command == "evaluate" else ["merge", str(tmp_path / "none.json")]
    done = _cli(*args, "--output", str(link))
    assert done.returncode == 2 and "symbolic link" in done.stderr, done.stderr
    assert not target.exists() and not (tmp_path / "elsewhere" / "planted.json.work").exists()
    assert link.is_symlink() and not (tmp_path / "out.json.work").exists()


def test_temporaries_are_created_exclusively(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from modebench import publish

    monkeypatch.setattr(publish.secrets, "token_hex", lambda n: "ab" * n)
    victim = tmp_path / "victim"
    victim.write_text("keep")
    (tmp_path / f".out-{'ab' * 6}").symlink_to(victim)
    with pytest.raises(FileExistsError), publish.atomic_output(tmp_path / "out") as handle:
        handle.write("x")
    assert victim.read_text() == "keep" and not (tmp_path / "out").exists()


# -- item 5: every file read is a regular file within a cap -----------------------------------------
def test_hostile_files_campaign_reduced(tmp_path: Path) -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "hostile_files_campaign",
        Path(__file__).resolve().parents[2] / "ops" / "campaigns" / "hostile_files_campaign.py",
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.SRC = SRC
    summary = module.campaign(
        tmp_path, only=["evaluate --run", "evaluate --ids", "ingest inspect", "ingest lm-eval", "stats", "merge"],
        seconds=60, memory_mib=1024,
    )  # fmt: skip
    assert summary["cases"] == 6 * 8
    assert summary["all_ok"], summary["failure_details"]
