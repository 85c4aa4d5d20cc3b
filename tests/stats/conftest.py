"""Real receipts for the statistics tests: evaluated from the walkthrough and the conformance rows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from modebench.streaming import evaluate_file
from modebench.walkthrough import bundle
from tests.reference_data import conformance_fixtures
from tests.samples import all_domains, sample_row

RUN = {
    "model": {"id": "stats-test", "revision": "0"},
    "generation": {"temperature": 1.0},
    "prompt_condition": "registered_hints_v1",
}


def evaluate_records(directory: Path, name: str, records: list[dict[str, Any]]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    source = directory / f"{name}.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    output = directory / f"{name}.json"
    summary = evaluate_file(source, output, run=RUN)
    assert summary["status"] == "completed"
    return output


def journal_draws(receipt: Path) -> dict[str, list[str | None]]:
    """Each prompt's draws as mode keys (None for an unverified draw), read through the public API:
    the independent side of the exactness checks."""
    from modebench import api

    found: dict[str, list[str | None]] = {}
    for result in api.iter_results(receipt):
        attempts = [a for group in result["draws"] for a in group["attempts"]]  # type: ignore[index]
        found[result["id"]] = [a["canonical_key"] if a["verified"] else None for a in attempts]
    return found


def walkthrough_records() -> list[dict[str, Any]]:
    return [dict(record) for record in bundle()["records"]]


def generated_records() -> list[dict[str, Any]]:
    """Rows of the project's own generators (no reference data): every domain at levels 1-3, three
    seeds each, answered with the walkthrough's four responses for that domain."""
    responses = {record["domain"]: record["responses"] for record in walkthrough_records()}
    rows = []
    for domain in all_domains():
        for level in (1, 2, 3):
            for seed in (1, 2, 3):
                row = sample_row(domain, level, seed)
                rows.append(
                    {
                        "id": f"generated/{domain}/{level}/{seed}",
                        "level": level,
                        "domain": domain,
                        "problem": row["problem"],
                        "answer": row["answer"],
                        "responses": list(responses[domain]),
                    }
                )
    return rows


@pytest.fixture(scope="session")
def receipts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """``walkthrough``; ``collapsed`` (each prompt's second correct mode replaced by the first);
    ``subset`` (three of the collapsed prompts); ``altered`` (the first prompt's reference changed,
    same id); ``generated`` (generated rows of every domain and level, see ``generated_records``);
    ``conformance`` (every conformance row, its cases as the saved responses; only when the 0.4.0
    reference data is present)."""
    root = tmp_path_factory.mktemp("receipts")
    records = walkthrough_records()
    collapsed = []
    for record in records:
        first, _, wrong, malformed = record["responses"]
        collapsed.append({**record, "responses": [first, first, wrong, malformed]})
    rows = []
    for number, fixture in enumerate(conformance_fixtures()):
        rows.append(
            {
                "id": f"{fixture['config']}/conformance/{number}",
                "level": fixture["level"],
                "domain": fixture["domain"],
                "problem": fixture["row"]["problem"],
                "answer": fixture["row"]["answer"],
                "responses": [case["response"] for case in fixture["cases"]],
            }
        )
    altered = [dict(r) for r in records]
    altered[0] = {
        **altered[0],
        "answer": {**altered[0]["answer"], "target": altered[0]["answer"]["target"] + 1},
    }
    found = {
        "walkthrough": evaluate_records(root / "w", "walkthrough", records),
        "collapsed": evaluate_records(root / "c", "collapsed", collapsed),
        "subset": evaluate_records(root / "s", "subset", collapsed[1:4]),
        "altered": evaluate_records(root / "a", "altered", altered),
        "generated": evaluate_records(root / "g", "generated", generated_records()),
    }
    if rows:
        found["conformance"] = evaluate_records(root / "f", "conformance", rows)
    return found
