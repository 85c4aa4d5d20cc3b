"""A journal pass split over processes gives the sequential pass's values, errors and order."""

from __future__ import annotations

import os
import random
import re
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from modebench.metrics import CellAccumulator
from modebench.receipt.records import Receipt
from modebench.reporting import journal_path, read_report
from modebench.stats import chunks, compare, curves, iter_prompt_retention, lockstep
from modebench.stats.journal import entries, open_receipt
from modebench.stats.profiles import entry_summary
from modebench.stats.trajectory import trajectory_table
from modebench.suite.calibrate import calibrate
from modebench.validation import InputError
from tests.stats.test_journal import (
    _broken_line,
    _copy,
    _duplicate_key,
    _profile_duplicate,
    _rewrite,
    _scored_unscorable,
    _unscorable,
    _wrong_accuracy,
)


@pytest.fixture
def split(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every journal read in parallel, in chunks of a few lines; the pools started are counted."""
    monkeypatch.setattr(chunks, "MIN_BYTES", 0)
    monkeypatch.setattr(chunks, "CHUNK_BYTES", 3000)
    monkeypatch.setattr(chunks, "processes", lambda: 2)
    pools: list[int] = []
    original = chunks.worker_pool

    def counting(workers: int, start: Any, job: Any) -> Any:
        pools.append(workers)
        return original(workers, start, job)

    monkeypatch.setattr(chunks, "worker_pool", counting)
    return pools


def _sequential(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(chunks, "MIN_BYTES", 1 << 60)


def _outputs(receipts: dict[str, Path]) -> list[Any]:
    a, b = receipts["walkthrough"], receipts["collapsed"]
    return [
        curves(a).to_records(),
        curves(receipts.get("conformance", a)).to_records(),
        compare(a, b).to_records(),
        compare(b, receipts["subset"]).to_records(),
        list(iter_prompt_retention(a, b)),
        trajectory_table([(0, a), (1, b)]).to_records(),
    ]


def test_parallel_values_equal_sequential(
    receipts: dict[str, Path], split: list[int], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # No replay: the sequential reader must not run at all in a parallel pass that is in order.
    def refuse(receipt: Receipt, *args: Any, **kwargs: Any) -> Iterator[Any]:
        raise AssertionError("replayed")

    with monkeypatch.context() as patched:
        # the sequential reader, where the parallel pass and the lockstep reader would call it
        patched.setattr(chunks, "journal_entries", refuse)
        patched.setattr(lockstep, "journal_entries", refuse)
        parallel = _outputs(receipts)
    assert len(split) >= 9 and all(workers >= 1 for workers in split)
    with monkeypatch.context() as patched:
        _sequential(patched)
        assert _outputs(receipts) == parallel
    parallel_calibration = calibrate(receipts["walkthrough"])
    _sequential(monkeypatch)
    assert calibrate(receipts["walkthrough"]) == parallel_calibration


def _stream(receipt: Path, parallel: bool) -> tuple[list[Any], str | None]:
    """The values a pass yields before it stops, and its error."""
    values: list[Any] = []
    reader = chunks.entries(open_receipt(receipt), entry_summary, True) if parallel else None
    if reader is None:
        reader = entries(open_receipt(receipt), entry_summary, light=True)
    try:
        for value in reader:
            values.append(value)
    except InputError as exc:
        return values, str(exc)
    return values, None


def _middle(edit: Any) -> Any:
    """The edit applied in the middle of the journal (the chunks before it are in order)."""

    def apply(lines: list[bytes]) -> list[bytes]:
        middle = len(lines) // 2
        edited: list[bytes] = edit(lines[middle:])
        return lines[:middle] + edited

    return apply


@pytest.mark.parametrize(
    ("edit", "rehash"),
    [
        (_broken_line, False),
        (_broken_line, True),
        (_duplicate_key, True),
        (_profile_duplicate, True),
        (_wrong_accuracy, True),
        (_unscorable, True),
        (_scored_unscorable, True),
        (lambda lines: lines[:-1], True),  # a record missing
        (lambda lines: lines + lines[-1:], True),  # one too many
        (lambda lines: lines[:3] + lines[4:5] + lines[3:4] + lines[5:], True),  # two swapped
        (lambda lines: [*lines[:-1], lines[-1].rstrip(b"\n")], True),  # no final newline
        (lambda lines: [*lines, b"\n"], True),  # an empty last line
    ],
)
@pytest.mark.parametrize("where", ["start", "middle"])
def test_parallel_errors_and_values_equal_sequential(
    receipts: dict[str, Path],
    split: list[int],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    edit: Any,
    rehash: bool,
    where: str,
) -> None:
    broken = _copy(receipts["conformance" if "conformance" in receipts else "walkthrough"], tmp_path / "b")
    _rewrite(broken, edit if where == "start" else _middle(edit), rehash=rehash)
    good = receipts["walkthrough"]
    parallel = _stream(broken, parallel=True)
    expected = _stream(broken, parallel=False)
    assert parallel == expected
    parallel_outcomes = [_outcome(lambda: curves(broken)), _outcome(lambda: compare(good, broken))]
    with monkeypatch.context() as patched:
        _sequential(patched)
        assert [
            _outcome(lambda: curves(broken)),
            _outcome(lambda: compare(good, broken)),
        ] == parallel_outcomes
    if expected[1] is not None:
        assert parallel_outcomes[0] == _outcome(lambda: read_report(broken))


def _outcome(call: Any) -> Any:
    try:
        value = call()
    except InputError as exc:
        return str(exc)
    return value.to_records() if hasattr(value, "to_records") else "read"


def test_a_journal_smaller_than_the_threshold_is_read_here(
    receipts: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(chunks, "processes", lambda: 2)
    size = journal_path(receipts["walkthrough"], read_report(receipts["walkthrough"])).stat().st_size
    monkeypatch.setattr(chunks, "MIN_BYTES", size + 1)
    started: list[int] = []
    monkeypatch.setattr(chunks, "worker_pool", lambda *args: started.append(1))
    curves(receipts["walkthrough"])
    assert not started


def test_a_process_with_another_thread_reads_sequentially() -> None:
    import threading

    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert chunks.processes() == 1
    finally:
        stop.set()
        thread.join()


def test_merged_accumulators_equal_one_accumulator() -> None:
    rng = random.Random(3)
    results = []
    for _ in range(300):
        k = rng.randint(1, 8)
        correct = rng.randint(0, k)
        key_count = rng.randint(1, max(1, correct))
        attempts = [
            {"status": "correct", "verified": True, "canonical_key": f"m{rng.randrange(key_count)}"}
            for _ in range(correct)
        ] + [{"status": "incorrect", "verified": False, "canonical_key": None} for _ in range(k - correct)]
        modes = len({a["canonical_key"] for a in attempts if a["verified"]})
        results.append(
            {
                "accuracy": correct / k,
                "pass_at_k": float(correct > 0),
                "distinct_at_k": modes,
                "draws": [{"attempts": attempts}],
            }
        )
    whole = CellAccumulator()
    whole.DISTINCT_VALUES = 8  # fold often, so merged exact sums are exercised too
    for result in results:
        whole.add(result)
    merged = CellAccumulator()
    start = 0
    while start < len(results):
        end = start + rng.randint(1, 40)
        part = CellAccumulator()
        part.DISTINCT_VALUES = 8
        for result in results[start:end]:
            part.add(result)
        merged.merge(part)
        start = end
    assert merged.summary(1) == whole.summary(1)
    assert (merged.accuracy, merged.passed, merged.pcmd, merged.pcmd_squares, merged.distinct) == (
        whole.accuracy,
        whole.passed,
        whole.pcmd,
        whole.pcmd_squares,
        whole.distinct,
    )


def test_aligned_runs_are_paired_side_by_side(receipts: dict[str, Path], split: list[int]) -> None:
    from modebench.stats.paired import paired_groups

    found = paired_groups(receipts["walkthrough"], receipts["collapsed"])
    assert found is not None and found[1] == len(
        journal_path(receipts["walkthrough"], read_report(receipts["walkthrough"])).read_bytes().splitlines()
    )
    # Another order or a subset, a prompt graded against another reference: the sequential way.
    assert paired_groups(receipts["collapsed"], receipts["subset"]) is None
    assert paired_groups(receipts["walkthrough"], receipts["altered"]) is None
    expected = _outcome(lambda: compare(receipts["walkthrough"], receipts["altered"]))
    assert expected.startswith("the runs grade different prompts")


def test_pages_read_in_parallel_equal_sequential(
    receipts: dict[str, Path], split: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("matplotlib")
    from modebench.render.html import html_report

    def pages() -> list[str]:
        runs = [receipts["walkthrough"], receipts["collapsed"]]
        found = [html_report(runs[:1]), html_report(runs), html_report([*runs, receipts["subset"]])]
        # Figure and clip-path ids count the figures drawn in the process so far.
        return [re.sub(r"\b(fig\d+|f\d+-[a-z][0-9a-f]+)", "id", page) for page, _ in found]

    parallel = pages()
    assert len(split) >= 3
    _sequential(monkeypatch)
    assert pages() == parallel


_PARENT = os.getpid()


def _dying_summary(entry: Any) -> Any:
    """entry_summary, except that a worker reading the fourth prompt is killed outright."""
    if entry.index == 3 and os.getpid() != _PARENT:
        os.kill(os.getpid(), signal.SIGKILL)
    return entry_summary(entry)


def test_a_killed_worker_costs_a_sequential_replay_not_a_hang(
    receipts: dict[str, Path], split: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    receipt = receipts["walkthrough"]
    read = list(chunks.entries(open_receipt(receipt), _dying_summary, True))
    assert read == list(entries(open_receipt(receipt), entry_summary, light=True))
    from modebench.stats import paired

    expected = compare(receipt, receipts["collapsed"]).to_records()
    monkeypatch.setattr(paired, "_observed", lambda entry: (entry, _dying_summary(entry)))
    assert paired.paired_groups(receipt, receipts["collapsed"]) is None
    assert compare(receipt, receipts["collapsed"]).to_records() == expected
