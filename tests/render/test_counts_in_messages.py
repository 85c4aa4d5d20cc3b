"""Counts in user-facing messages agree with their number: ``1 response was``, ``2 responses were``."""

from __future__ import annotations

from typing import Any

import pytest

from modebench._words import counted, were


@pytest.mark.parametrize(
    ("number", "expected"), [(0, "0 responses were"), (1, "1 response was"), (2, "2 responses were")]
)
def test_counted_and_were_agree_with_the_number(number: int, expected: str) -> None:
    assert f"{counted(number, 'response')} {were(number)}" == expected


def test_an_irregular_plural() -> None:
    assert counted(1, "index", "indices") == "1 index" and counted(3, "index", "indices") == "3 indices"


def test_a_report_of_a_run_limited_to_one_prompt_says_prompt() -> None:
    from modebench.receipt.records import Receipt
    from modebench.render.report_table import _limit_note

    def limited_note(payload: dict[str, Any]) -> str:
        return _limit_note(Receipt.at("report.json", payload))

    note = limited_note({"dataset": {"limit": 1, "selected_prompts": 1, "expected_prompts": 32}})
    assert "only the first 1 prompt of the split" in note
    assert "first 2 prompts" in limited_note(
        {"dataset": {"limit": 2, "selected_prompts": 2, "expected_prompts": 32}}
    )


def test_grouped_counts_and_a_text_shortened_by_one_character() -> None:
    from modebench.render.page import short

    assert counted(1234, "verified mode", grouped=True) == "1,234 verified modes"
    assert short("abcd", limit=3) == "abc… [1 more character]"
    assert short("abcde", limit=3) == "abc… [2 more characters]"
