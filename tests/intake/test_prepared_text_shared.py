"""``prepared_text`` encodes shared members once and stays ``canonical`` of the whole record."""

from __future__ import annotations

import random
from typing import Any

import pytest

from modebench.identity import canonical
from modebench.intake import preflight
from modebench.intake.preflight import prepared_text

PROFILE = {"schema": "s", "level": 1, "domain": "countdown", "z": [1, 2.5, None], "a": "caf\u00e9"}
ANSWER = {"verifier": "countdown", "target": 24, "numbers": [1, 2, 3, 4], "extra": {"b": 1, "a": 2}}


def _record(rng: random.Random) -> dict[str, Any]:
    record: dict[str, Any] = {
        "binding": {"prompt_profile": PROFILE, "prompt_sha256": "p" * 64, "reference_sha256": "r" * 64},
        "domain": "countdown",
        "id": rng.choice(["r0", "\ud800", "x\u00e9", "1"]),
        "label": "line 3, prompt 'r0'",
        "level": rng.randint(1, 5),
        "raw": {"id": "r0", "responses": ["\\boxed{1}", "\u2603"]},
        "record_sha256": "s" * 64,
        "row": {"answer": ANSWER, "problem": "Make 24 from 1 2 3 4.\n"},
    }
    if rng.random() < 0.3:
        record["binding"]["prompt_profile"] = None
    if rng.random() < 0.3:
        del record["row"]["problem"]
    if rng.random() < 0.2:
        record["plugin"] = {"distribution": "x", "version": "1"}
    if rng.random() < 0.2:
        record["row"]["answer"] = "a string answer"
    return record


@pytest.mark.parametrize("seed", range(3))
def test_prepared_text_is_canonical(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(300):
        record = _record(rng)
        assert prepared_text(record, canonical(record["raw"])) == canonical(record)


def test_odd_shapes_fall_back_to_canonical() -> None:
    for record in (
        {"raw": 1},
        {"binding": {"prompt_profile": {"b": 1}, 1: 2}, "raw": 0},  # a non-string key: canonical's error
        {"row": {"answer": {"a": float("nan")}}, "raw": 0},
    ):
        try:
            expected: Any = canonical(record)
        except (TypeError, ValueError) as exc:
            expected = type(exc)
        try:
            found: Any = prepared_text(record, canonical(record["raw"]))
        except (TypeError, ValueError) as exc:
            found = type(exc)
        assert found == expected


def test_shared_texts_stay_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(preflight, "_SHARED_LIMIT", 4)
    monkeypatch.setattr(preflight, "_SHARED_TEXTS", {})
    for index in range(10):
        answer = {"verifier": "countdown", "n": index}
        record = {"raw": 0, "row": {"answer": answer}}
        assert prepared_text(record, "0") == canonical(record)
        assert len(preflight._SHARED_TEXTS) <= 4
