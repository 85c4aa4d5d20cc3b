"""``rebuilt_reply`` equals the parent's rebuild of an item line, value and failure alike."""

from __future__ import annotations

import random
from typing import Any

import pytest

from modebench.diagnostics import STATUSES
from modebench.isolation.protocol import decode_line, item_line, item_reply, rebuilt_reply

_STRINGS = [
    "",
    "x",
    "add(3,4)",
    "line\nbreak\ttab\x00nul",
    'quote " backslash \\',
    "caf\u00e9",
    "\ud83d\ude00",  # a surrogate pair as two code points: JSON joins it into one
    "\ud83d \ude00",
    "\udc80",
    "\U0001f600",
    "x" * 5000,
]


def _round_trip(reply: dict[str, Any], text: Any) -> Any:
    try:
        return ("ok", item_reply(decode_line(item_line(reply, text)), text))
    except Exception as exc:  # noqa: BLE001 - the very failure is compared
        return ("error", type(exc))


def _fast(reply: dict[str, Any], text: Any) -> Any:
    try:
        return ("ok", rebuilt_reply(reply, text))
    except Exception as exc:  # noqa: BLE001 - the very failure is compared
        return ("error", type(exc))


def _replies(rng: random.Random) -> list[tuple[dict[str, Any], Any]]:
    cases: list[tuple[dict[str, Any], Any]] = []
    values: list[Any] = [None, 0, 1.5, True, ["k"], *_STRINGS]
    for _ in range(4000):
        status = rng.choice([*sorted(STATUSES), "bogus", None, 3])
        text = rng.choice([None, *_STRINGS])
        shown = rng.choice([text, *values]) if rng.random() < 0.8 else text
        reply: dict[str, Any] = {
            "status": status,
            "verified": rng.choice([status == "correct", status != "correct", 1]),
            "canonical_key": rng.choice(values) if rng.random() < 0.5 else None,
            "graded_text": shown,
            "detail": rng.choice(values),
        }
        if rng.random() < 0.1:
            reply["extra"] = rng.choice(values)
        if rng.random() < 0.05:
            del reply[rng.choice(list(reply))]
        cases.append((reply, text))
    return cases


@pytest.mark.parametrize("seed", range(5))
def test_rebuilt_reply_is_the_parents_rebuild(seed: int) -> None:
    for reply, text in _replies(random.Random(seed)):
        expected, found = _round_trip(reply, text), _fast(reply, text)
        assert found == expected, (reply, text)
        if expected[0] == "ok":
            assert list(found[1]) == list(expected[1])  # the same members in the same order


def test_common_reply_skips_the_round_trip() -> None:
    reply = {"status": "correct", "verified": True, "canonical_key": "k", "graded_text": "t", "detail": None}
    assert rebuilt_reply(reply, "t") == reply
    assert rebuilt_reply(reply, "t") is not reply  # each attempt owns its record
