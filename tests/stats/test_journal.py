"""The one-pass journal reader: strict decoding where it cannot prove the fast one equal, the
receipt's checks in ``read_report``'s order, exact cell tallies, and each journal read once."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from modebench.cli import main
from modebench.evaluation import tally_results
from modebench.reporting import journal_path, read_report
from modebench.stats import compare, curves, iter_prompt_retention
from modebench.stats import journal as journal_module
from modebench.stats.fastlines import PROFILES
from modebench.stats.journal import _Cell, decode_light, decode_line, fast_modes, open_receipt
from modebench.stats.trajectory import trajectory_table
from modebench.suite.calibrate import calibrate
from modebench.validation import InputError, loads
from tests.reference_data import needs_reference


@pytest.mark.parametrize(
    "line",
    [
        b'{"a":1,"b":[1.5,{"c":"x"}],"d":null}\n',
        b'{"a":"say \\"hi\\": now","b":{"a":1}}\n',  # escaped quotes: strict path, same value
        b'{"a" : 1, "b": 2}\n',  # not canonical: strict path
        b'[1,2,{"k":true}]',  # a last line without newline
    ],
)
def test_fast_decoding_returns_the_strict_value(line: bytes) -> None:
    assert decode_line(line) == loads(line)


@pytest.mark.parametrize(
    "line",
    [
        b'{"a":1,"a":2}\n',
        b'{"a":{"x":1,"x":1}}\n',
        b'{"a":1,"a" :2}\n',  # a duplicate hidden behind whitespace
        b'{"a":"\\"","a":2}\n',  # ... or behind an escaped quote
        b'{"a":NaN}\n',
        b'{"a":-Infinity}\n',
        b'{"a":1e999}\n',
        b'{"a":1\n',
        b'{"a":"\xff"}\n',
    ],
)
def test_fast_decoding_raises_the_strict_error(line: bytes) -> None:
    with pytest.raises(InputError) as strict:
        loads(line)
    with pytest.raises(InputError) as fast:
        decode_line(line)
    assert str(fast.value) == str(strict.value)


_PROFILED = (
    b'{"k":4,"result":{"draws":[],"id":"p","prompt_profile":{"a":"x","b":[1,{"c":true}]},'
    b'"prompt_sha256":"h","reference_sha256":"r"},"sequence":0}\n'
)


@pytest.mark.parametrize(
    "line",
    [
        _PROFILED,
        _PROFILED.replace(b'"id":"p"', b'"id":"say \\"hi\\""'),  # escaped quote: whole line strictly
        _PROFILED.replace(b'"a":"x"', b'"a" : "x"'),  # a non-canonical profile is still one JSON value
        _PROFILED.replace(b'"prompt_profile":{"a":"x","b":[1,{"c":true}]}', b'"prompt_profile":null'),
        _PROFILED.replace(b',"prompt_sha256":"h"', b""),  # no end marker: the line as it is
        _PROFILED.replace(b'"prompt_sha256"', b'"prompt_sha256" '),  # whitespace: the strict path
    ],
)
def test_light_decoding_is_the_strict_value_without_the_profile(line: bytes) -> None:
    expected = loads(line)
    light = decode_light(line)
    assert light == {
        **expected,
        "result": {**expected["result"], "prompt_profile": light["result"]["prompt_profile"]},
    }
    assert light["result"]["prompt_profile"] in (None, expected["result"]["prompt_profile"])


@pytest.mark.parametrize(
    "line",
    [
        _PROFILED.replace(b'"a":"x"', b'"a":"x","a":"y"'),  # a duplicate inside the profile
        _PROFILED.replace(b'"a":"x"', b'"a":NaN'),
        _PROFILED.replace(b'"id":"p"', b'"id":"p","id":"q"'),  # a duplicate beside a valid profile
        _PROFILED.replace(b'"draws":[]', b'"draws":[}'),  # broken elsewhere: positions of the line as read
        _PROFILED.replace(b'"prompt_sha256":"h"', b'"prompt_sha256":"h","prompt_sha256" :"i"'),
        _PROFILED.replace(b'{"a":"x"', b'{"a":"x"}}'),  # the profile text is not one value
    ],
)
def test_light_decoding_raises_the_strict_error(line: bytes) -> None:
    for _ in range(2):  # the second time with the profile text remembered
        with pytest.raises(InputError) as strict:
            loads(line)
        with pytest.raises(InputError) as light:
            decode_light(line)
        assert str(light.value) == str(strict.value)
    assert len(PROFILES) <= 1024


def _copy(receipt: Path, directory: Path) -> Path:
    """A copy of a receipt and its journal, free to tamper with."""
    directory.mkdir(parents=True, exist_ok=True)
    payload = read_report(receipt)
    target = directory / payload["prompt_results"]["path"]
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(journal_path(receipt, payload), target)
    shutil.copy(receipt, directory / receipt.name)
    return directory / receipt.name


def _rewrite(receipt: Path, edit: Any, *, rehash: bool) -> None:
    payload = json.loads(receipt.read_text())
    journal = journal_path(receipt, payload)
    lines = journal.read_bytes().splitlines(keepends=True)
    journal.write_bytes(b"".join(edit(lines)))
    if rehash:
        payload["prompt_results"]["sha256"] = hashlib.sha256(journal.read_bytes()).hexdigest()
        receipt.write_text(json.dumps(payload))


def _error(call: Any) -> str:
    with pytest.raises(InputError) as caught:
        call()
    return str(caught.value)


def _duplicate_key(lines: list[bytes]) -> list[bytes]:
    return [lines[0].replace(b'"k":', b'"k":4,"k":', 1), *lines[1:]]


def _broken_line(lines: list[bytes]) -> list[bytes]:
    return [lines[0], b"{not json\n", *lines[2:]]


def _wrong_accuracy(lines: list[bytes]) -> list[bytes]:
    entry = json.loads(lines[0])
    entry["result"]["accuracy"] = 0.125
    return [(json.dumps(entry, sort_keys=True, separators=(",", ":")) + "\n").encode(), *lines[1:]]


def _profile_duplicate(lines: list[bytes]) -> list[bytes]:
    return [lines[0].replace(b'"prompt_profile":{', b'"prompt_profile":{"domain":1,', 1), *lines[1:]]


def _unscorable(lines: list[bytes]) -> list[bytes]:
    entry = json.loads(lines[1])
    entry["result"]["draws"][0]["attempts"][0].update(status="timeout", verified=False, canonical_key=None)
    entry["result"].update(accuracy=None, pass_at_k=None, distinct_at_k=None)
    return [lines[0], (json.dumps(entry, sort_keys=True, separators=(",", ":")) + "\n").encode(), *lines[2:]]


def _scored_unscorable(lines: list[bytes]) -> list[bytes]:
    entry = json.loads(lines[1])  # an unscorable attempt inside a result that is still scored
    entry["result"]["draws"][0]["attempts"][0].update(status="timeout", verified=False, canonical_key=None)
    return [lines[0], (json.dumps(entry, sort_keys=True, separators=(",", ":")) + "\n").encode(), *lines[2:]]


@pytest.mark.parametrize(
    ("edit", "rehash"),
    [
        (_broken_line, False),  # the hash mismatch is reported, not the broken line
        (_broken_line, True),
        (_duplicate_key, False),
        (_duplicate_key, True),  # the hash matches: the strict decoder's duplicate-key error
        (_profile_duplicate, True),  # ... also inside the prompt profile a light reading skips
        (_wrong_accuracy, True),  # the journal disagrees with the receipt's cells
        (_unscorable, True),  # the receipt's status disagrees with the journal
        (_scored_unscorable, True),  # an edited entry the tally cannot score: refused, no traceback
        (lambda lines: lines[:-1], True),  # a record missing
    ],
)
def test_every_command_reports_what_read_report_reports(
    receipts: dict[str, Path], tmp_path: Path, edit: Any, rehash: bool
) -> None:
    broken = _copy(receipts["walkthrough"], tmp_path / "broken")
    good = receipts["collapsed"]
    _rewrite(broken, edit, rehash=rehash)
    expected = _error(lambda: read_report(broken))
    assert _error(lambda: curves(broken)) == expected
    assert _error(lambda: compare(broken, good)) == expected
    assert _error(lambda: compare(good, broken)) == expected
    assert _error(lambda: list(iter_prompt_retention(good, broken))) == expected
    assert _error(lambda: trajectory_table([(0, good), (1, broken)])) == expected
    assert _error(lambda: calibrate(broken)) == expected
    pytest.importorskip("matplotlib")
    from modebench.render.html import html_report

    assert _error(lambda: html_report([good, broken])) == expected
    assert _error(lambda: html_report([broken])) == expected
    if edit is _scored_unscorable:
        assert expected.startswith(
            "detailed-result entry is inconsistent: a scored result holds an unscorable"
        )


def test_the_first_receipt_is_checked_before_the_second(receipts: dict[str, Path], tmp_path: Path) -> None:
    a = _copy(receipts["walkthrough"], tmp_path / "a")
    b = _copy(receipts["collapsed"], tmp_path / "b")
    _rewrite(a, lambda lines: lines[:-1], rehash=False)  # A: hash mismatch at its end
    _rewrite(b, _broken_line, rehash=True)  # B: broken early
    assert _error(lambda: compare(a, b)) == "detailed-result journal hash mismatch"
    assert _error(lambda: compare(b, a)).startswith("invalid JSON")


def test_per_prompt_records_only_after_both_receipts_pass(
    receipts: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = _copy(receipts["collapsed"], tmp_path / "broken")
    _rewrite(broken, lambda lines: lines[:-1], rehash=False)
    with pytest.raises(SystemExit) as exited:
        main(["compare", str(receipts["walkthrough"]), str(broken), "--per-prompt"])
    assert exited.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "detailed-result journal hash mismatch" in captured.err


@pytest.mark.parametrize(
    "name", ["walkthrough", "collapsed", pytest.param("conformance", marks=needs_reference)]
)
def test_grouped_cell_sums_equal_the_accumulator(receipts: dict[str, Path], name: str) -> None:
    payload = read_report(receipts[name])
    entries = [json.loads(line) for line in journal_path(receipts[name], payload).read_bytes().splitlines()]
    _, expected = tally_results((e["level"], e["domain"], e["k"], e["result"]) for e in entries)
    cells: dict[Any, _Cell] = {}
    for e in entries:
        cells.setdefault((e["level"], e["domain"], e["k"]), _Cell()).add(e["result"], fast_modes(e["result"]))
    for key, accumulator in expected.items():
        assert vars(cells[key].flush()) == vars(accumulator)


def test_a_mixed_cell_switches_to_the_accumulator_exactly() -> None:
    attempt = {
        "canonical_key": "m",
        "detail": None,
        "graded_text": "x",
        "status": "correct",
        "verified": True,
    }
    usual = {
        "accuracy": 1.0,
        "pass_at_k": 1.0,
        "distinct_at_k": 1,
        "draws": [{"attempts": [attempt, attempt]}],
    }
    unusual = {**usual, "distinct_at_k": 1.0}  # a float count: the accumulator's own arithmetic
    cell = _Cell()
    for result in (usual, unusual, usual):
        cell.add(result, fast_modes(result))
    from modebench.metrics import CellAccumulator

    reference = CellAccumulator()
    for result in (usual, unusual, usual):
        reference.add(result)
    assert vars(cell.flush()) == vars(reference)


def test_each_journal_is_read_once(
    receipts: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened: list[str] = []
    original = journal_module._Journal.__init__

    def counting(self: Any, path: Path) -> None:
        opened.append(Path(path).name)
        original(self, path)

    monkeypatch.setattr(journal_module._Journal, "__init__", counting)
    a, b = receipts["walkthrough"], receipts["collapsed"]
    curves(a)
    assert len(opened) == 1
    opened.clear()
    compare(a, b)
    assert len(opened) == 2
    opened.clear()
    trajectory_table([(0, a), (1, b), (2, a)])
    assert len(opened) == 3
    pytest.importorskip("matplotlib")
    from modebench.render.html import html_report

    opened.clear()
    html_report([a, b])
    assert len(opened) == 2


def test_open_receipt_checks_the_header_only(receipts: dict[str, Path], tmp_path: Path) -> None:
    copy = _copy(receipts["walkthrough"], tmp_path / "h")
    _rewrite(copy, lambda lines: lines[:-1], rehash=False)
    assert open_receipt(copy).completed  # the journal is checked when its entries are read
