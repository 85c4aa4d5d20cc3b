"""Real receipts and their HTML pages for the report tests, made through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from modebench.cli import main
from tests.stats.conftest import evaluate_records, walkthrough_records

HOSTILE_ID = '<script>alert("id")</script>&'


@pytest.fixture(scope="session")
def report_receipts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """``walkthrough`` (``modebench walkthrough`` then ``evaluate``); ``collapsed`` (each prompt's
    second correct mode replaced by the first); ``failed`` (one response over the size limit:
    resource_limit voids the run); ``hostile`` (a prompt id full of HTML)."""
    root = tmp_path_factory.mktemp("report")
    directory = root / "walk"
    assert main(["walkthrough", "--directory", str(directory)]) == 0
    walkthrough = root / "walkthrough.json"
    code = main(["evaluate", str(directory / "responses.jsonl"), "--run", str(directory / "run.json"),
                 "--output", str(walkthrough)])  # fmt: skip
    assert code == 0
    records = walkthrough_records()
    collapsed = []
    for record in records:
        first, _, wrong, malformed = record["responses"]
        collapsed.append({**record, "responses": [first, first, wrong, malformed]})
    failed_records = [dict(r) for r in records]
    failed_records[1] = {
        **failed_records[1],
        "responses": ["x" * 131_073, *failed_records[1]["responses"][1:]],
    }
    source = root / "failed.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in failed_records), encoding="utf-8")
    failed = root / "failed.json"
    from modebench.streaming import evaluate_file

    assert evaluate_file(source, failed)["status"] == "failed"
    hostile = [dict(r) for r in records]
    hostile[0] = {**hostile[0], "id": HOSTILE_ID}
    return {
        "walkthrough": walkthrough,
        "collapsed": evaluate_records(root / "c", "collapsed", collapsed),
        "failed": failed,
        "hostile": evaluate_records(root / "h", "hostile", hostile),
    }


@pytest.fixture(scope="session")
def pages(report_receipts: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The HTML report of the walkthrough, of the failed run and of the two-run comparison."""
    root = tmp_path_factory.mktemp("pages")
    found = {}
    for name, receipts, code in (
        ("walkthrough", [report_receipts["walkthrough"]], 0),
        ("failed", [report_receipts["failed"]], 3),
        ("comparison", [report_receipts["walkthrough"], report_receipts["collapsed"]], 0),
    ):
        output = root / f"{name}.html"
        assert main(["report", *map(str, receipts), "--html", str(output)]) == code
        found[name] = output
    output = root / "trajectory.html"
    assert main(["trajectory", *trajectory_runs(report_receipts), "--html", str(output)]) == 0
    found["trajectory"] = output
    return found


def trajectory_runs(report_receipts: dict[str, Path]) -> list[str]:
    """Three training steps: the walkthrough, its collapsed copy (modes lost), the walkthrough again."""
    walk, collapsed = report_receipts["walkthrough"], report_receipts["collapsed"]
    return [f"0={walk}", f"100={collapsed}", f"200={walk}"]
