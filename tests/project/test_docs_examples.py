"""The worked examples in docs/ are graded by the real grader, so the docs cannot drift from it."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from modebench.contracts import DOMAINS
from modebench.domains._pipeline import grade_in_process

DOCS = Path(__file__).resolve().parents[2] / "docs"
_BLOCK = re.compile(r"^```(json reference|jsonl worked-examples)\n(.*?)^```", re.M | re.S)


def _examples(page: Path) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """``(label, reference, example)`` for every example line, with the reference above it."""
    found = []
    reference: dict[str, Any] | None = None
    for kind, body in _BLOCK.findall(page.read_text(encoding="utf-8")):
        if kind == "json reference":
            reference = json.loads(body)
            continue
        assert reference is not None, f"{page.name}: examples before any reference"
        for number, line in enumerate(body.splitlines(), 1):
            found.append((f"{page.stem}:{number}", reference, json.loads(line)))
    return found


CASES = [case for domain in DOMAINS for case in _examples(DOCS / "scoring" / f"{domain}.md")]


def test_every_domain_page_has_worked_examples() -> None:
    for domain in DOMAINS:
        statuses = {example["status"] for label, _, example in CASES if label.startswith(f"{domain}:")}
        assert {"correct", "incorrect", "malformed"} <= statuses, domain


@pytest.mark.parametrize(("label", "reference", "example"), CASES, ids=[case[0] for case in CASES])
def test_worked_example_grades_as_documented(
    label: str, reference: dict[str, Any], example: dict[str, Any]
) -> None:
    domain = label.split(":")[0]
    result = grade_in_process(example["level"], domain, {"answer": reference}, example["response"])
    assert result["status"] == example["status"], result
    assert result["canonical_key"] == example["canonical_key"], result
    # Unless a page says otherwise, the whole response is what was graded.
    assert result["graded_text"] == example.get("graded_text", example["response"]), result


def test_writing_a_domain_shows_the_example_packages_entry_point() -> None:
    stanza = '[project.entry-points."modebench.domains"]\nqueens = "modebench_queens:PLUGIN"\n'
    assert stanza in (DOCS.parent / "examples" / "domain-plugin" / "pyproject.toml").read_text()
    assert stanza in (DOCS / "writing-a-domain.md").read_text()
