"""The msgspec reading of journal lines: taken for the journal's own lines, and only ever the
strict decoder's value (anything it cannot prove goes to the standard decoders)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from modebench.reporting import journal_path, read_report
from modebench.stats import fastlines
from modebench.stats.journal import decode_light
from modebench.validation import InputError, loads

pytest.importorskip("msgspec")


def _journal_lines(receipts: dict[str, Path]) -> list[bytes]:
    lines: list[bytes] = []
    for receipt in receipts.values():
        lines += journal_path(receipt, read_report(receipt)).read_bytes().splitlines(keepends=True)
    return lines


def _light(value: dict[str, object]) -> dict[str, object]:
    result = dict(value["result"])  # type: ignore[call-overload]
    result["prompt_profile"] = None
    return {**value, "result": result}


def test_every_journal_line_is_read_fast_and_strictly(receipts: dict[str, Path]) -> None:
    lines = _journal_lines(receipts)
    assert len(lines) > 30
    for line in lines:
        fast = fastlines.decode_fast(line)
        assert fast is not None, line[:200]
        assert fast == _light(loads(line))


def test_the_shapes_the_journal_writes_are_taken(receipts: dict[str, Path]) -> None:
    line = _journal_lines(receipts)[0]
    entry = json.loads(line)
    attempt = entry["result"]["draws"][0]["attempts"][0]
    variants = [
        {**attempt, "outputs": [2, 3, 12]},  # python_factors
        {**attempt, "unscorable_status": "timeout", "status": "incorrect", "verified": False},
        {**attempt, "detail": "candidate must be a lambda", "graded_text": 'say "hi"\\n\t'},
    ]
    for variant in variants:
        entry["result"]["draws"][0]["attempts"][0] = variant
        text = (json.dumps(entry, sort_keys=True, separators=(",", ":")) + "\n").encode()
        assert fastlines.decode_fast(text) == _light(loads(text))


def _mutations(line: bytes, rng: random.Random) -> list[bytes]:
    """Edits that keep or break the line in every way the proof has to see."""
    found = [
        line.replace(b'"k":', b'"k":4,"k":', 1),  # duplicate key
        line.replace(b'"status":', b'"status":"x","status":', 1),  # duplicate inside an attempt
        line.replace(b'"k":', b'"k" :', 1),  # whitespace
        line.replace(b'{"attempts":', b'{"attempts" :', 1),
        line.replace(b'"graded_text":"', b'"graded_text":"\\u00e9', 1),  # non-ASCII by escape
        line.replace(b'"graded_text":"', '"graded_text":"\u00e9'.encode(), 1),  # raw UTF-8
        line.replace(b'"graded_text":"', b'"graded_text":"\\ud800', 1),  # lone surrogate
        line.replace(b'"graded_text":"', b'"graded_text":"\\/', 1),  # a needless escape
        line.replace(b'"graded_text":"', b'"graded_text":"\xff', 1),  # invalid UTF-8
        line.replace(b'"detail":null', b'"detail":{"a":1,"a":2}', 1),
        line.replace(b'"detail":null', b'"detail":1e999', 1),
        line.replace(b'"detail":null', b'"detail":NaN', 1),
        line.replace(b'"verified":', b'"extra":1,"verified":', 1),  # a plug-in's extra member
        line.replace(b'"k":', b'"k":1.0,"kk":', 1),
        line.replace(b'"sequence":', b'"sequence":1' + b"0" * 5000 + b',"q":', 1),  # a long number
        line.replace(b'"accuracy":', b'"accuracy":1E0,"x":', 1),
        line.replace(b'"prompt_profile":{', b'"prompt_profile":{"domain":1,', 1),
        line.replace(b'"prompt_profile":{', b'"prompt_profile":{"x":NaN,', 1),
        line.rstrip(b"\n") + b" \n",
        line.rstrip(b"\n"),
        b"\xef\xbb\xbf" + line,  # a byte order mark
        line.replace(b"}", b"", 1),
    ]
    for _ in range(40):  # random byte edits
        index = rng.randrange(len(line) - 1)
        found.append(line[:index] + bytes([rng.choice(b'{}[]",:0 1e\\"x')]) + line[index + 1 :])
    return found


def test_any_other_line_is_left_to_the_strict_decoder(receipts: dict[str, Path]) -> None:
    rng = random.Random(7)
    lines = _journal_lines(receipts)
    checked = 0
    for line in rng.sample(lines, 12):
        for mutated in _mutations(line, rng):
            fast = fastlines.decode_fast(mutated)
            try:
                strict = loads(mutated)
            except InputError as exc:
                assert fast is None, mutated[:200]
                with pytest.raises(InputError) as light:
                    decode_light(mutated)
                assert str(light.value) == str(exc)
                checked += 1
                continue
            if fast is not None:
                assert fast == _light(strict)
    assert checked > 100


def test_without_msgspec_the_standard_decoders_read_alike(
    receipts: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = _journal_lines(receipts)
    fast = [decode_light(line) for line in lines]
    monkeypatch.setattr(fastlines, "msgspec", None)
    assert fastlines.decode_fast(lines[0]) is None
    assert [decode_light(line) for line in lines] == fast
