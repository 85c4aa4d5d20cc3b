"""One contract every domain plug-in must honour (generated rows, witnesses, hostile input).

It runs for the five built-ins and for the example third-party plug-in in
``examples/domain-plugin`` alike (see ``plugin_example.py``).
"""

from __future__ import annotations

import json
import random

import pytest

from modebench.contracts import DOMAINS
from modebench.domains import DomainPlugin, is_certified, plugin
from modebench.domains._pipeline import grade_in_process
from modebench.prompts import make_messages
from tests.domains.plugin_example import EXAMPLE_DOMAIN

LEVELS = (1, 2, 3, 4, 5)
ALL_DOMAINS = (*DOMAINS, EXAMPLE_DOMAIN)


@pytest.fixture
def registered(request: pytest.FixtureRequest, domain: str) -> DomainPlugin:
    if not is_certified(domain):
        request.getfixturevalue("example_plugin")
    return plugin(domain)


@pytest.mark.parametrize("domain", ALL_DOMAINS)
def test_plugin_identity(domain: str, registered: DomainPlugin) -> None:
    assert registered.name == domain
    assert registered.verifiers and registered.deadline_seconds in (0.25, 2.0)
    assert registered.generate is not None and registered.witnesses is not None


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("domain", ALL_DOMAINS)
def test_generated_rows_validate_and_witnesses_grade_correct(
    domain: str, level: int, registered: DomainPlugin
) -> None:
    found = registered
    assert found.generate is not None and found.witnesses is not None
    row = found.generate(level, random.Random(11))
    assert row == found.generate(level, random.Random(11))  # same seed, same row
    assert isinstance(row["answer"], str)
    answer = json.loads(row["answer"])
    messages = make_messages(level, domain, row)
    assert messages[1]["content"]
    responses = found.witnesses(level, answer)
    # Every mode, or (where modes are many) a prefix of them: at least two, never more than exist.
    assert 2 <= len(responses) <= row["answer_mode_count"]
    keys = set()
    for text in responses[:12]:
        result = grade_in_process(level, domain, row, text)
        assert result["status"] == "correct", (text, result)
        keys.add(result["canonical_key"])
    assert len(keys) == min(12, len(responses))  # witnesses are pairwise distinct modes
    for hostile in ("", "not a solution", "\\boxed{", "\\boxed{" + "(" * 300 + "}", "\x00"):
        assert grade_in_process(level, domain, row, hostile)["status"] in ("malformed", "incorrect")
