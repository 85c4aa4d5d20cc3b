"""Tune on dev, report on test (first-hour item 11): ``calibrate`` writes its id lists in numeric
order, ``prepare``/``evaluate --ids FILE`` select by them, bad lists are named by file and line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from modebench.cli import main
from modebench.data import iter_tasks
from modebench.domains import plugin
from modebench.intake.ids import natural_key, read_ids
from modebench.reporting import iter_cell_results
from modebench.streaming import evaluate_file
from modebench.validation import InputError

ANSWER = {"verifier": "countdown", "numbers": [1, 2, 3], "target": 6}
PATTERNS = [["1+2+3"] * 4, ["1+2+3", "x", "x", "x"], ["1+2+3", "3*2*1", "x", "x"], ["x"] * 4]
RUN = {
    "model": {"id": "toy-model", "revision": "r1"},
    "generation": {"draws_per_prompt": 2},
    "prompt_condition": "registered_hints_v1",
}


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def _pilot(tmp_path: Path) -> tuple[Path, Path]:
    source = tmp_path / "pilot.jsonl"
    records = [
        {"id": f"t{i}", "level": 1, "domain": "countdown", "answer": ANSWER, "responses": PATTERNS[i % 4]}
        for i in range(24)
    ]
    source.write_text("".join(json.dumps(r) + "\n" for r in records))
    evaluate_file(source, tmp_path / "pilot.json")
    return source, tmp_path / "pilot.json"


def _ids(path: Path) -> list[str]:
    return [line for line in path.read_text().splitlines() if not line.startswith("#")]


def test_id_list_format(tmp_path: Path) -> None:
    path = tmp_path / "a.ids"
    path.write_text("\ufeff# a comment\n\n  x/eval/10  \nx/eval/2\n", encoding="utf-8")
    ids = read_ids(path)
    assert ids.lines == {"x/eval/10": 3, "x/eval/2": 4}
    assert ids.ordered() == ["x/eval/2", "x/eval/10"]
    path.write_text("a\nb\n\na\n")
    with pytest.raises(InputError, match=r"a.ids line 4: duplicate prompt id 'a' \(first on line 1\)"):
        read_ids(path)
    path.write_text("# only a comment\n\n")
    with pytest.raises(InputError, match=r"a.ids: no prompt ids"):
        read_ids(path)
    with pytest.raises(InputError, match="cannot read prompt id list .*missing.ids"):
        read_ids(tmp_path / "missing.ids")
    assert sorted(["t10", "t9", "t1", "a"], key=natural_key) == ["a", "t1", "t9", "t10"]


def test_calibrate_writes_numeric_id_lists(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, receipt = _pilot(tmp_path)
    dev, test = tmp_path / "dev.ids", tmp_path / "test.ids"
    code, _, err = _cli(
        capsys, "calibrate", str(receipt), "--seed", "3", "--dev-ids", str(dev), "--test-ids", str(test)
    )
    assert code == 0, err
    calibration = json.loads(_cli(capsys, "calibrate", str(receipt), "--seed", "3", "--json")[1])
    selection = calibration["selection"]
    assert _ids(dev) == selection["dev"] and _ids(test) == selection["test"]
    for listed in (selection["dev"], selection["test"]):
        numbers = [int(ident[1:]) for ident in listed]
        assert numbers == sorted(numbers)  # t2 before t10: numeric, not lexicographic
    assert any(int(i[1:]) >= 10 for i in selection["dev"] + selection["test"])
    # An existing destination fails before anything is written.
    again = tmp_path / "again.json"
    code, _, err = _cli(capsys, "calibrate", str(receipt), "--output", str(again), "--dev-ids", str(dev))
    assert code == 2 and f"output already exists: {dev}" in err and not again.exists()


def test_evaluate_ids_grades_only_the_listed_prompts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source, receipt = _pilot(tmp_path)
    test = tmp_path / "test.ids"
    assert _cli(capsys, "calibrate", str(receipt), "--seed", "3", "--test-ids", str(test))[0] == 0
    listed = _ids(test)
    output = tmp_path / "test.json"
    code, out, err = _cli(
        capsys, "evaluate", str(source), "--ids", str(test), "--output", str(output), "--progress-every", "0"
    )
    assert code == 0, err
    assert json.loads(out)["prompts"] == len(listed)
    graded = [result["id"] for _, _, _, result in iter_cell_results(output)]
    assert sorted(graded, key=natural_key) == listed
    assert json.loads(output.read_text())["dataset"]["prompt_ids"] == listed
    # report recomputes the custom run's identity, selection included.
    assert _cli(capsys, "report", str(output))[0] == 0


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("t1\n# comment\nt99\n", "bad.ids line 3: unknown prompt id 't99': not in the input"),
        ("t1\nt2\nt1\n", "bad.ids line 3: duplicate prompt id 't1' (first on line 1)"),
    ],
)
def test_evaluate_bad_id_list_leaves_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, message: str
) -> None:
    source, _ = _pilot(tmp_path)
    (tmp_path / "bad.ids").write_text(text)
    output = tmp_path / "out.json"
    code, _, err = _cli(
        capsys, "evaluate", str(source), "--ids", str(tmp_path / "bad.ids"), "--output", str(output)
    )
    assert code == 2 and message in err and "Traceback" not in err
    assert not output.exists() and not (tmp_path / "out.json.work").exists()


def _frozen_input(tmp_path: Path) -> tuple[Path, list[Any]]:
    tasks = list(iter_tasks("level1_countdown", registry="bundled", offline=True))
    records = []
    for task in tasks:
        witnesses = plugin("countdown").witnesses(1, task.answer)  # type: ignore[misc]
        records.append({"id": task.id, "responses": [witnesses[0], "nope"], "run": RUN})
    source = tmp_path / "frozen.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in records))
    return source, tasks


def test_frozen_prepare_and_evaluate_by_ids(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source, tasks = _frozen_input(tmp_path)
    chosen = [tasks[index].id for index in (12, 3, 10)]
    ids = tmp_path / "test.ids"
    ids.write_text("# hand-picked\n" + "\n".join(chosen) + "\n")
    frozen = ("--registry", "bundled", "--config", "level1_countdown", "--offline")
    requests = tmp_path / "requests.jsonl"
    code, _, err = _cli(capsys, "prepare", *frozen, "--ids", str(ids), "--output", str(requests))
    assert code == 0, err
    exported = [json.loads(line)["id"] for line in requests.read_text().splitlines()]
    assert exported == sorted(chosen, key=natural_key)  # split (row) order

    output = tmp_path / "frozen.json"
    argv = (
        "evaluate",
        str(source),
        *frozen,
        "--ids",
        str(ids),
        "--output",
        str(output),
        "--progress-every",
        "0",
    )
    code, out, err = _cli(capsys, *argv)
    assert code == 0, err  # a listed subset needs no --allow-partial
    dataset = json.loads(output.read_text())["dataset"]
    assert dataset["selected_prompt_ids"] == exported == dataset["prompt_ids"]
    assert dataset["complete"] is False and len(dataset["missing_prompt_ids"]) == len(tasks) - 3


def test_frozen_unknown_id_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source, _ = _frozen_input(tmp_path)
    ids = tmp_path / "x.ids"
    ids.write_text("level1_countdown/eval/1\nlevel1_countdown/eval/999\n")
    frozen = ("--registry", "bundled", "--config", "level1_countdown", "--offline", "--ids", str(ids))
    message = "x.ids line 2: unknown prompt id 'level1_countdown/eval/999': not in level1_countdown/eval"
    requests = tmp_path / "requests.jsonl"
    code, _, err = _cli(capsys, "prepare", *frozen, "--output", str(requests))
    assert code == 2 and message in err and not requests.exists()
    output = tmp_path / "out.json"
    code, _, err = _cli(capsys, "evaluate", str(source), *frozen, "--output", str(output))
    assert code == 2 and message in err and not output.exists() and not Path(f"{output}.work").exists()
