"""Prompt summaries: the fast path agrees with the metrics module, and its errors are the module's."""

from __future__ import annotations

from typing import Any

import pytest

from modebench.stats.profiles import Profile, summarize_prompt
from modebench.validation import InputError

CELL = (1, "some_domain", 3)


def _result(*attempts: dict[str, Any]) -> dict[str, Any]:
    return {"id": "p1", "reference_sha256": "0" * 64, "draws": [{"attempts": list(attempts)}]}


def _attempt(status: str, key: str | None = None, verified: Any = None) -> dict[str, Any]:
    return {
        "status": status,
        "verified": status == "correct" if verified is None else verified,
        "canonical_key": key,
    }


def test_profile_of_a_group() -> None:
    summary = summarize_prompt(
        CELL,
        _result(
            _attempt("malformed"),
            _attempt("correct", "a"),
            _attempt("correct", "b"),
            _attempt("correct", "a"),
        ),
    )
    assert summary.profile == Profile(4, 3, (2, 1), False)
    assert summary.modes == {"a": 2, "b": 1}
    # Attempts without a status are judged by the metrics module (the slow path), same answer.
    legacy = summarize_prompt(CELL, _result({"verified": True, "canonical_key": "a"}, {"verified": False}))
    assert legacy.profile == Profile(2, 1, (1,), True)


@pytest.mark.parametrize(
    ("attempt", "message"),
    [
        (_attempt("correct", "a", verified=False), "attempt status and verified flag disagree"),
        (_attempt("correct", None), "verified attempts require a nonempty canonical_key string"),
        (_attempt("timeout"), "unscorable attempt"),
        ({"status": "correct"}, "each attempt requires a boolean verified flag"),
    ],
)
def test_invalid_attempts_name_the_prompt(attempt: dict[str, Any], message: str) -> None:
    with pytest.raises(InputError, match=message) as raised:
        summarize_prompt(CELL, _result(_attempt("incorrect"), attempt))
    assert "'p1'" in str(raised.value)
