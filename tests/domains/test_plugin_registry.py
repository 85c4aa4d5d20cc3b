"""Third-party domains: discovery, broken plug-ins, and what a run that used one records."""

from __future__ import annotations

import json
import os
import shutil
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from modebench import api, domains
from modebench.contracts import DOMAINS, normalize_domain
from modebench.domains._registry import discover
from modebench.evaluation import evaluate
from modebench.reporting import summarize
from modebench.streaming import evaluate_file
from modebench.validation import InputError
from tests.domains.plugin_example import EXAMPLE, SITE, forget_plugins

QUEENS = "modebench_queens/queens"
ANSWER = {"verifier": "queens", "n": 5, "fixed": [[1, 1]]}
# The two placements of five queens with a queen in the corner, one clash, one bad grammar.
RESPONSES = ["\\boxed{1,3,5,2,4}", "\\boxed{1,4,2,5,3}", "\\boxed{1,2,3,4,5}", "\\boxed{1 3 5 2 4}"]


def _distribution(site: Path, name: str, entry_points: str, modules: dict[str, str]) -> None:
    """Write an installed-looking distribution: its dist-info and its modules, under ``site``."""
    info = site / f"{name.replace('-', '_')}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[modebench.domains]\n" + entry_points)
    for module, source in modules.items():
        (site / f"{module}.py").write_text(textwrap.dedent(source))


@pytest.fixture
def broken_site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, example_plugin: str) -> Path:
    site = tmp_path / "site"
    site.mkdir()
    reuse = "from modebench_queens import PLUGIN as Q\nimport dataclasses\n"
    _distribution(
        site, "boom", "boom = boom_mod:PLUGIN\n", {"boom_mod": "raise ImportError('no numpy here')\n"}
    )
    _distribution(
        site, "not-a-plugin", "thing = thing_mod:PLUGIN\n", {"thing_mod": "PLUGIN = {'name': 'x'}\n"}
    )
    _distribution(
        site,
        "shadow",
        "countdown = shadow_mod:PLUGIN\n",
        {"shadow_mod": reuse + "PLUGIN = dataclasses.replace(Q, name='countdown')\n"},
    )
    _distribution(
        site,
        "slow",
        "slow = slow_mod:PLUGIN\n",
        {
            "slow_mod": reuse
            + "PLUGIN = dataclasses.replace(Q, name='slow_mod/slow', deadline_seconds=60.0)\n"
        },
    )
    _distribution(site, "missing", "gone = missing_mod:PLUGIN\n", {"missing_mod": "OTHER = 1\n"})
    monkeypatch.syspath_prepend(str(site))
    forget_plugins()
    return site


def test_builtin_lookups_never_read_entry_points(monkeypatch: pytest.MonkeyPatch) -> None:
    forget_plugins()

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("entry points read for a built-in domain")

    monkeypatch.setattr("importlib.metadata.entry_points", refuse)
    for name in (*DOMAINS, "pantry"):
        assert domains.plugin(name).name == normalize_domain(name)
        assert domains.origin(normalize_domain(name)) is None
    assert domains.origins(DOMAINS) == {}
    forget_plugins()


def test_example_plugin_is_discovered_under_its_namespaced_name(example_plugin: str) -> None:
    assert example_plugin == QUEENS
    assert domains.names() == (*DOMAINS, QUEENS)
    assert domains.is_registered(QUEENS) and not domains.is_certified(QUEENS)
    assert normalize_domain(QUEENS) == QUEENS
    origin = domains.origin(QUEENS)
    assert origin is not None
    assert (origin["distribution"], origin["version"]) == ("modebench-queens", "0.1.0")
    assert len(origin["source_sha256"]) == 64
    assert domains.deadline_seconds(QUEENS) == 2.0
    assert domains.deadline_seconds("pantry") is None  # an alias gets the general budget, as in 0.4.0


def test_broken_plugins_are_reported_by_name_and_never_stop_discovery(broken_site: Path) -> None:
    found = discover()
    assert sorted(found.plugins) == [QUEENS]  # the good one still loads
    assert found.broken == {
        "boom: boom": "cannot be loaded: ImportError: no numpy here",
        "missing: gone": "cannot be loaded: AttributeError: module 'missing_mod' has no attribute 'PLUGIN'",
        "not-a-plugin: thing": "thing_mod:PLUGIN is a dict, not a DomainPlugin",
        "shadow: countdown": "plug-in name 'countdown' must be 'shadow_mod/countdown' (lower-case package/name)",
        "slow: slow": "deadline_seconds must be in (0, 2.0]",
    }
    assert domains.plugin("countdown").deadline_seconds == 2.0  # the built-in is untouched
    message = domains.unsupported("chess")
    assert message.startswith(
        "unsupported ModeBench domain: chess (valid domains: graph_coloring, countdown, python_factors, "
        "mathir, pantry_plan, modebench_queens/queens; broken plug-in boom: boom: cannot be loaded"
    )
    with pytest.raises(InputError, match="broken plug-in slow: slow"):
        evaluate([{"id": 1, "level": 1, "domain": "slow_mod/slow", "answer": ANSWER, "responses": ["x"]}])


def test_a_name_claimed_twice_is_refused_for_both(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    site.mkdir()
    for name in ("queens-a", "queens-b"):
        _distribution(site, name, "queens = modebench_queens:PLUGIN\n", {})
    monkeypatch.syspath_prepend(str(EXAMPLE / "src"))
    monkeypatch.syspath_prepend(str(site))
    forget_plugins()
    try:
        found = discover()
        assert found.plugins == {}
        assert found.broken == {
            "queens-a: queens": f"duplicate domain name {QUEENS}",
            "queens-b: queens": f"duplicate domain name {QUEENS}",
        }
    finally:
        monkeypatch.undo()
        forget_plugins()


def test_without_plugins_the_unknown_domain_message_is_unchanged(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("importlib.metadata.entry_points", lambda group: [])
    forget_plugins()
    try:
        assert domains.unsupported("chess") == "unsupported ModeBench domain: chess"
    finally:
        monkeypatch.undo()
        forget_plugins()


def _worker_path(monkeypatch: pytest.MonkeyPatch, *paths: Path) -> None:
    # Workers are fresh interpreters: they find the plug-in the way an installed one is found.
    monkeypatch.setenv("PYTHONPATH", ":".join(str(path) for path in paths))


def test_receipt_and_journal_record_the_plugin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, example_plugin: str
) -> None:
    _worker_path(monkeypatch, SITE, EXAMPLE / "src")
    source = tmp_path / "in.jsonl"
    lines = [
        {"id": "q", "level": 1, "domain": QUEENS, "answer": ANSWER, "responses": RESPONSES},
        {
            "id": "c",
            "level": 1,
            "domain": "countdown",
            "answer": {"verifier": "countdown", "numbers": [1, 2, 3], "target": 6},
            "responses": ["1+2+3"],
        },
    ]
    source.write_text("".join(json.dumps(line) + "\n" for line in lines))
    evaluate_file(source, tmp_path / "out.json", min_defined_prompts=1)
    receipt = json.loads((tmp_path / "out.json").read_text())
    origin = domains.origin(QUEENS)
    assert receipt["software"]["plugins"] == {QUEENS: origin}
    assert receipt["evaluation"]["status_counts"] == {"correct": 3, "incorrect": 1, "malformed": 1}
    journal = (tmp_path / "out.json.work" / "results.jsonl").read_text().splitlines()
    first, second = (json.loads(line) for line in journal)
    assert first["plugin"] == origin and "plugin" not in second
    keys = [a["canonical_key"] for a in first["result"]["draws"][0]["attempts"]]
    assert keys == ["1,3,5,2,4", "1,4,2,5,3", None, None]
    cell = next(c for c in receipt["cells"] if c["domain"] == QUEENS)
    assert cell["distinct_at_k"] == 2
    # The in-memory evaluator records the same origin.
    assert evaluate(lines[:1], min_defined_prompts=1)["software"]["plugins"] == {QUEENS: origin}
    # The receipt stays readable where the plug-in is not installed: it records the domain itself.
    monkeypatch.undo()
    forget_plugins()
    assert not domains.is_registered(QUEENS)
    report = api.read_report(tmp_path / "out.json")
    assert [cell.domain for cell in report.cells] == ["countdown", QUEENS]
    assert [result["id"] for result in api.iter_results(tmp_path / "out.json")] == ["q", "c"]
    assert "modebench_queens/queens" in summarize(json.loads((tmp_path / "out.json").read_text()))
    receipt["software"]["plugins"] = {}
    (tmp_path / "forged.json").write_text(json.dumps(receipt))
    with pytest.raises(InputError, match="unsupported ModeBench domain: modebench_queens/queens"):
        api.read_report(tmp_path / "forged.json")


def test_builtin_only_receipts_carry_no_plugin_block(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, example_plugin: str
) -> None:
    record = {
        "id": 1,
        "level": 1,
        "domain": "countdown",
        "answer": {"verifier": "countdown", "numbers": [1, 2, 3], "target": 6},
        "responses": ["1+2+3"],
    }
    assert "plugins" not in evaluate([record])["software"]
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps(record) + "\n")
    evaluate_file(source, tmp_path / "out.json")
    assert "plugins" not in json.loads((tmp_path / "out.json").read_text())["software"]
    assert '"plugin"' not in (tmp_path / "out.json.work" / "results.jsonl").read_text()


def test_resume_refuses_a_changed_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    copy = tmp_path / "plugin-src"
    shutil.copytree(EXAMPLE / "src", copy)
    monkeypatch.syspath_prepend(str(copy))
    monkeypatch.syspath_prepend(str(SITE))
    _worker_path(monkeypatch, SITE, copy)
    forget_plugins()
    try:
        source = tmp_path / "in.jsonl"
        lines = [
            {"id": i, "level": 1, "domain": QUEENS, "answer": ANSWER, "responses": RESPONSES}
            for i in range(3)
        ]
        source.write_text("".join(json.dumps(line) + "\n" for line in lines))

        def stop(event: dict[str, Any]) -> None:
            if event["phase"] == "grading":
                raise KeyboardInterrupt

        with pytest.raises(KeyboardInterrupt):
            evaluate_file(source, tmp_path / "out.json", progress=stop)
        with (copy / "modebench_queens" / "board.py").open("a") as handle:
            handle.write("\n# a changed plug-in\n")
        forget_plugins()
        with pytest.raises(InputError, match="resume identity mismatch"):
            evaluate_file(source, tmp_path / "out.json", resume=True)
    finally:
        monkeypatch.undo()
        forget_plugins()


def test_workers_hold_a_plugin_to_its_deadline_and_the_memory_cap(tmp_path: Path) -> None:
    from modebench.worker_process import BoundedWorker

    site = tmp_path / "site"
    site.mkdir()
    hostile = """
        import dataclasses
        from modebench_queens import PLUGIN as Q

        def grade(level, reference, text):
            if text == "spin":
                while True:
                    pass
            if text == "hog":
                return bytearray(2 * 1024 ** 3)
            return Q.grade(level, reference, text)

        PLUGIN = dataclasses.replace(Q, name="hostile_mod/hostile", deadline_seconds=0.25, grade=grade)
    """
    _distribution(site, "hostile", "hostile = hostile_mod:PLUGIN\n", {"hostile_mod": hostile})
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(site), str(SITE), str(EXAMPLE / "src")]))
    with BoundedWorker(timeout_seconds=5.0, env=env) as worker:

        def grade(text: str) -> dict[str, Any]:
            request = {"operation": "grade", "level": 1, "domain": "hostile_mod/hostile", "answer": ANSWER}
            return worker.request({**request, "text": text})

        assert grade(RESPONSES[0])["status"] == "correct"
        started = time.monotonic()
        spun = grade("spin")
        assert (spun["status"], spun["detail"]) == ("timeout", "worker execution deadline exceeded")
        assert time.monotonic() - started < 5.0  # the plug-in's 0.25 s, not the parent's 5 s
        hog = grade("hog")
        assert (hog["status"], hog["detail"]) == ("resource_limit", "worker memory limit exceeded")
        assert grade(RESPONSES[1])["canonical_key"] == "1,4,2,5,3"  # a fresh worker carries on
