"""The receipt is read as it is written: one typed ``Receipt`` and one ``JournalLine``.

``modebench.receipt.reader.read_report`` returns the typed receipt; ``modebench.reporting``
(0.4.0's edge) returns the same document as a dictionary; a journal line the writer wrote reads
back with exactly the fields ``JournalLine`` declares.
"""

from __future__ import annotations

import json
import typing
from pathlib import Path

import pytest

from modebench import reporting
from modebench.api import EvaluationOptions, evaluate_file
from modebench.receipt import reader
from modebench.receipt.records import JournalLine, Receipt
from modebench.receipt.text import summarize
from modebench.walkthrough import export


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> Path:
    demo = tmp_path_factory.mktemp("typed") / "demo"
    export(demo)
    output = demo / "report.json"
    evaluate_file(demo / "responses.jsonl", output, options=EvaluationOptions(run_file=demo / "run.json"))
    return output


def test_the_reader_returns_the_typed_receipt_and_the_040_edge_its_dict(published: Path) -> None:
    receipt = reader.read_report(published)
    assert isinstance(receipt, Receipt)
    document = reporting.read_report(published)
    assert document == receipt.payload == json.loads(published.read_text(encoding="utf-8"))
    assert receipt.completed and receipt.status == document["evaluation"]["status"]
    assert receipt.cells == document["cells"] and len(receipt.cells) == 5
    assert receipt.input_sha256 == document["input_sha256"]
    assert receipt.prompt_results == document["prompt_results"]
    assert receipt.execution == document["execution"]
    assert receipt.unscorable == "fail-run"  # a 0.4.0-policy receipt records no policy: the upgrade says it
    assert "unscorable" not in document["evaluation"]
    assert receipt.plugins == frozenset()  # built-in domains only: no software.plugins block


def test_the_report_text_reads_the_typed_receipt_as_040_read_the_dict(published: Path) -> None:
    receipt = reader.read_report(published)
    assert summarize(receipt) == summarize(receipt.payload)
    assert summarize(receipt).startswith("Evaluation completed\n")


def test_every_journal_line_written_reads_back_as_a_journal_line(published: Path) -> None:
    receipt = reader.read_report(published)
    assert receipt.prompt_results is not None
    journal = reader.journal_path(published, receipt.payload)
    declared = set(typing.get_type_hints(JournalLine))
    required = set(JournalLine.__required_keys__)
    lines = list(reader.sequenced(map(json.loads, journal.read_text(encoding="utf-8").splitlines()), 5))
    assert len(lines) == receipt.prompt_results["records"]
    for line in lines:
        assert required <= set(line) <= declared


def test_an_older_v3_receipt_is_upgraded_in_the_receipts_fields() -> None:
    # A v3 document as 0.4.0's in-memory evaluator wrote it has no journal, input hash, policy or plug-ins.
    v3 = Receipt(
        "r.json", {"schema": "modebench-saved-responses-v3", "evaluation": {"status": "failed"}, "cells": []}
    )
    assert v3.is_v3 and v3.prompt_results is None and v3.input_sha256 is None
    assert v3.unscorable == "fail-run" and v3.plugins == frozenset() and v3.dataset is None
    assert v3.failure == {} and not v3.completed
