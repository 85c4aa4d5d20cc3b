"""Input a new user trips on: a byte order mark, a level written as a string, a draw-count
mismatch. Each behaves as ModeBench 0.4.0 decides, and where it is an error the error says what
was found and what was expected."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from modebench.cli import main, read_records
from modebench.evaluation import evaluate
from modebench.validation import InputError, loads

COUNTDOWN = {"verifier": "countdown", "numbers": [1, 2, 3], "target": 6}
RUN = {
    "model": {"id": "m", "revision": "r"},
    "generation": {"draws_per_prompt": 3},
    "prompt_condition": "registered_hints_v1",
}


def _record(**extra: Any) -> dict[str, Any]:
    return {
        "id": "p",
        "level": 1,
        "domain": "countdown",
        "answer": COUNTDOWN,
        "responses": ["1+2+3", "bad"],
        **extra,
    }


def test_a_leading_byte_order_mark_is_read_as_0_4_0_reads_it(tmp_path: Path) -> None:
    # ModeBench 0.4.0 decodes each line's bytes with json.loads, which skips one leading UTF-8
    # BOM: a file saved "with BOM" grades exactly like the same file without it.
    plain = json.dumps(_record()).encode() + b"\n"
    (tmp_path / "plain.jsonl").write_bytes(plain)
    (tmp_path / "bom.jsonl").write_bytes(b"\xef\xbb\xbf" + plain)
    for name in ("plain", "bom"):
        assert main([
            "evaluate", str(tmp_path / f"{name}.jsonl"), "--output", str(tmp_path / f"{name}.json"),
            "--progress-every", "0",
        ]) == 0  # fmt: skip
    receipts = [json.loads((tmp_path / f"{name}.json").read_text()) for name in ("plain", "bom")]
    assert receipts[0]["records_sha256"] == receipts[1]["records_sha256"]
    assert receipts[0]["cells"] == receipts[1]["cells"]
    assert read_records(b"\xef\xbb\xbf" + plain) == ([_record()], ["line 1"])


def test_a_misplaced_byte_order_mark_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = json.dumps(_record()).encode()
    (tmp_path / "in.jsonl").write_bytes(line + b"\n" + b" \xef\xbb\xbf" + line + b"\n")
    with pytest.raises(SystemExit) as exit_info:
        main(["evaluate", str(tmp_path / "in.jsonl"), "--output", str(tmp_path / "o.json")])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "line 2: invalid JSON: Expecting value: line 1 column 2 (char 1)" in err
    assert "a UTF-8 byte order mark, U+FEFF, is there" in err
    assert not (tmp_path / "o.json.work").exists()
    with pytest.raises(InputError, match="Unexpected UTF-8 BOM"):  # a str, as json.loads says
        loads("\ufeff{}")
    with pytest.raises(InputError, match="byte order mark"):
        loads(b"\xef\xbb\xbf\xef\xbb\xbf{}")


def test_a_string_level_is_accepted_as_the_contract_says() -> None:
    # "level": "1" is a valid level in ModeBench 0.4.0 ("1" and "level1" normalize to 1; checked
    # against 0.4.0 itself): refusing it would refuse files the reference grades.
    as_string, as_int = evaluate([_record(level="1")]), evaluate([_record()])
    assert as_string["cells"][0]["level"] == 1
    assert as_string["cells"][0]["accuracy"] == as_int["cells"][0]["accuracy"]
    with pytest.raises(InputError, match="level must be 1, 2, 3, 4, or 5"):
        evaluate([_record(level=1.0)])


def test_a_draw_count_mismatch_shows_both_numbers() -> None:
    with pytest.raises(InputError) as caught:
        evaluate([_record(run=RUN)])
    assert str(caught.value) == (
        "record 1, prompt 'p': responses count does not match run.generation.draws_per_prompt"
        " (expected 3, found 2)"
    )
