"""Shards and their merge: byte-identical to an unsharded run; gaps, duplicates and strangers refused."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from modebench.api import evaluate_file, merge_shards
from modebench.backends.shard import Shard, parse_shard
from modebench.cli import main
from modebench.validation import InputError

from .inputs import normalized, write_mixed


def _evaluate(source: Path, output: Path, shard: str | None = None) -> None:
    evaluate_file(source, output, shard=shard)


def _shards(source: Path, root: Path, count: int) -> list[Path]:
    paths = []
    for index in range(1, count + 1):
        path = root / f"shard-{index}-of-{count}.json"
        _evaluate(source, path, f"{index}/{count}")
        paths.append(path)
    return paths


def _assert_same_run(merged: Path, whole: Path) -> None:
    assert normalized(merged) == normalized(whole)
    # The journal bytes are the unsharded run's, so its hash in the receipt is too.
    assert (merged.parent / (merged.name + ".work") / "results.jsonl").read_bytes() == (
        whole.parent / (whole.name + ".work") / "results.jsonl"
    ).read_bytes()


@pytest.fixture(scope="module")
def unsharded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("whole")
    source = write_mixed(root / "in.jsonl", 60, seed=3)
    whole = root / "out" / "report.json"
    _evaluate(source, whole)
    return source, whole


@pytest.mark.parametrize("count", [1, 2, 3, 7])
def test_merged_receipt_equals_unsharded(unsharded: tuple[Path, Path], tmp_path: Path, count: int) -> None:
    source, whole = unsharded
    shards = _shards(source, tmp_path, count)
    # The merged receipt lands under the same name as the unsharded one, so its journal path is equal.
    merged = tmp_path / "out" / "report.json"
    summary = merge_shards(list(reversed(shards)), merged)
    assert summary["status"] == "completed" and summary["prompts"] == 60 and summary["shards"] == count
    _assert_same_run(merged, whole)
    # The merged receipt is an ordinary receipt: the report reads and verifies it.
    assert main(["report", str(merged)]) == 0


@settings(max_examples=6)
@given(prompts=st.integers(1, 30), count=st.sampled_from([1, 2, 3, 7]), seed=st.integers(0, 10_000))
def test_merge_property_random_inputs(prompts: int, count: int, seed: int) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        source = write_mixed(root / "in.jsonl", prompts, seed=seed, k=random.Random(seed).randint(1, 5))
        whole = root / "a" / "r.json"
        _evaluate(source, whole)
        merged = root / "b" / "r.json"
        merge_shards(_shards(source, root, count), merged)
        _assert_same_run(merged, whole)


def test_missing_duplicate_and_foreign_shards_are_refused(
    unsharded: tuple[Path, Path], tmp_path: Path
) -> None:
    source, _ = unsharded
    shards = _shards(source, tmp_path, 3)
    with pytest.raises(InputError, match=r"missing shard\(s\): 2/3"):
        merge_shards([shards[0], shards[2]], tmp_path / "m1.json")
    with pytest.raises(InputError, match=r"shard 1/3 given twice"):
        merge_shards([shards[0], shards[0], shards[1], shards[2]], tmp_path / "m2.json")
    other = write_mixed(tmp_path / "other.jsonl", 60, seed=4)
    foreign = tmp_path / "foreign.json"
    _evaluate(other, foreign, "2/3")
    with pytest.raises(
        InputError, match=r"foreign.json and .* come from different runs: records_sha256 differs"
    ):
        merge_shards([shards[0], foreign, shards[2]], tmp_path / "m3.json")
    split_differently = tmp_path / "two.json"
    _evaluate(source, split_differently, "2/2")
    with pytest.raises(InputError, match="split the input differently"):
        merge_shards([shards[0], split_differently, shards[2]], tmp_path / "m4.json")
    # Nothing was left behind by the refused merges.
    assert not any(path.name.startswith("m") for path in tmp_path.iterdir())


def test_tampered_shard_journal_is_refused(unsharded: tuple[Path, Path], tmp_path: Path) -> None:
    source, _ = unsharded
    shards = _shards(source, tmp_path, 2)
    journal = tmp_path / "shard-2-of-2.json.work" / "results.jsonl"
    journal.write_text(journal.read_text().replace('"accuracy":0', '"accuracy":1', 1))
    with pytest.raises(InputError, match="does not match its hash"):
        merge_shards(shards, tmp_path / "m.json")


def test_shard_checkpoint_resumes_only_as_the_same_shard(
    unsharded: tuple[Path, Path], tmp_path: Path
) -> None:
    source, _ = unsharded
    work = tmp_path / "w"
    with pytest.raises(InputError):
        evaluate_file(source, tmp_path / "s.json", shard="1/2", work_dir=work, resume=True)
    evaluate_file(source, tmp_path / "s.json", shard="1/2", work_dir=work)
    payload = json.loads((tmp_path / "s.json").read_text())
    assert payload["shard"] == {"count": 2, "index": 1, "total_records": 60}
    assert payload["prompt_results"]["records"] == 30


def test_cli_shard_and_merge(
    unsharded: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source, whole = unsharded
    for index in (1, 2):
        code = main(
            [
                "evaluate",
                str(source),
                "--output",
                str(tmp_path / f"s{index}.json"),
                "--shard",
                f"{index}/2",
                "--progress-every",
                "0",
            ]
        )
        assert code == 0
    capsys.readouterr()
    merged = tmp_path / "out" / "report.json"
    assert main(["merge", str(tmp_path / "s1.json"), str(tmp_path / "s2.json"), "--output", str(merged)]) == 0
    assert json.loads(capsys.readouterr().out)["prompts"] == 60
    _assert_same_run(merged, whole)


@pytest.mark.parametrize("text", ["0/3", "4/3", "1-3", "a/b", "1/0", ""])
def test_bad_shard_text_is_an_input_error(text: str) -> None:
    with pytest.raises(InputError):
        parse_shard(text)


def test_shard_selection_is_round_robin() -> None:
    shard = Shard(2, 3)
    assert [seq for seq in range(10) if shard.contains(seq)] == [1, 4, 7]
    assert [shard.seq_at(i) for i in range(3)] == [1, 4, 7]
    assert shard.size(10) == 3 and shard.size(1) == 0
