"""``modebench ingest`` on files in each source's documented format, well-formed and malformed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from modebench.api import EvaluationOptions, evaluate_file, ingest
from tests.ingest.conftest import chatml, read_jsonl
from tests.ingest.conftest import run_cli as _cli

REGISTRY = ["--registry", "bundled", "--config", "level1_countdown"]


def _write_lines(path: Path, lines: list[Any]) -> Path:
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines))
    return path


# --- lm-evaluation-harness -------------------------------------------------------------------


def _lm_line(doc: dict[str, Any], context: str, resps: list[str], doc_id: int) -> dict[str, Any]:
    return {
        "doc_id": doc_id,
        "doc": doc,
        "target": "",
        "arguments": {"gen_args_0": {"arg_0": context, "arg_1": {"until": [], "do_sample": True}}},
        "resps": [resps],
        "filtered_resps": [resps[0]],
        "doc_hash": "x",
        "prompt_hash": "y",
        "target_hash": "z",
    }


def test_lm_eval_matches_by_id_and_by_prompt_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], requests: list[dict[str, Any]]
) -> None:
    user0, user1 = requests[0]["messages"][-1]["content"], requests[1]["messages"][-1]["content"]
    source = _write_lines(
        tmp_path / "samples_countdown.jsonl",
        [
            _lm_line({"id": requests[0]["id"], "problem": "p"}, user0, ["a", "b", "c"], 0),
            _lm_line({"question": "q"}, user1, ["d", "e", "f"], 1),  # no id: matched by text
            _lm_line({"question": "q"}, "some other benchmark prompt", ["g"], 2),
        ],
    )
    out = tmp_path / "out.jsonl"
    code, stdout, _ = _cli(capsys, "ingest", "lm-eval", str(source), "--output", str(out), *REGISTRY)
    assert code == 0
    summary = json.loads(stdout)
    assert read_jsonl(out) == [
        {"id": requests[0]["id"], "responses": ["a", "b", "c"]},
        {"id": requests[1]["id"], "responses": ["d", "e", "f"]},
    ]
    assert summary["unmatched"] == 1 and summary["unmatched_prompts"] == [f"{source}: line 3"]
    assert (summary["prompts"], summary["responses"], summary["source_prompts"]) == (2, 6, 3)


def test_lm_eval_rows_with_references_grade_in_custom_mode(tmp_path: Path) -> None:
    answer = {
        "instance_id": "ingest-test", "num_completions": 5, "num_expressions": 5, "numbers": [2, 8, 9],
        "source": "synthetic_exact_countdown", "target": 15, "verifier": "countdown",
    }  # fmt: skip
    doc = {"id": "cd-1", "level": 1, "domain": "countdown", "answer": answer}
    source = _write_lines(
        tmp_path / "samples.jsonl", [_lm_line(doc, "ctx", ["((9-2)+8)", "(9+(8-2))", "no"], 0)]
    )
    summary = ingest("lm-eval", source, tmp_path / "in.jsonl")
    assert summary["prompts"] == 1
    assert read_jsonl(tmp_path / "in.jsonl") == [{**doc, "responses": ["((9-2)+8)", "(9+(8-2))", "no"]}]
    receipt = evaluate_file(
        tmp_path / "in.jsonl", tmp_path / "r.json", options=EvaluationOptions(min_defined_prompts=1)
    )
    assert receipt.status == "completed" and receipt.prompts == 1


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "line 2: invalid JSON"),
        (json.dumps({"doc": {}, "arguments": []}), "line 2: missing field: resps"),
        (json.dumps({"doc": {}, "resps": [[1, 2]]}), "line 2: resps must contain only strings"),
        (json.dumps({"doc": {}, "resps": [["a"]]}), "line 2: missing field: doc_id"),
        (json.dumps({"resps": [["a"]]}), "line 2: missing field: doc"),
    ],
)
def test_lm_eval_malformed_names_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], line: str, message: str
) -> None:
    source = _write_lines(tmp_path / "samples.jsonl", [_lm_line({"id": "x"}, "c", ["r"], 0), line])
    out = tmp_path / "out.jsonl"
    code, _, err = _cli(capsys, "ingest", "lm-eval", str(source), "--output", str(out))
    assert code == 2
    assert f"{source}: {message}" in err and "Traceback" not in err
    assert list(tmp_path.iterdir()) == [source]


# --- verl ----------------------------------------------------------------------------------------


def _verl_dir(tmp_path: Path, requests: list[dict[str, Any]]) -> Path:
    rollouts = tmp_path / "rollouts"
    rollouts.mkdir()
    for step in (10, 20):
        lines = []
        for index in range(3):
            prompt = chatml(requests[index]["messages"])
            lines += [
                {"input": prompt, "output": f"s{step}p{index}r{r}", "score": 0.0, "step": step}
                for r in range(4)
            ]
        lines.append({"input": "<|im_start|>user\nunrelated<|im_end|>\n", "output": "x", "score": 1.0})
        _write_lines(rollouts / f"{step}.jsonl", lines)
    return rollouts


def test_verl_groups_by_step_and_prompt(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], requests: list[dict[str, Any]]
) -> None:
    rollouts = _verl_dir(tmp_path, requests)
    code, stdout, _ = _cli(
        capsys, "ingest", "verl", str(rollouts), "--output", str(tmp_path / "run.jsonl"), *REGISTRY
    )
    assert code == 0
    summary = json.loads(stdout)
    assert [f["step"] for f in summary["files"]] == [10, 20]
    for step in (10, 20):
        records = read_jsonl(tmp_path / f"run.step-{step}.jsonl")
        assert records == [
            {"id": requests[i]["id"], "responses": [f"s{step}p{i}r{r}" for r in range(4)]} for i in range(3)
        ]
    assert summary["unmatched"] == 2
    assert summary["unmatched_prompts"] == [
        f"{rollouts / '10.jsonl'}: line 13",
        f"{rollouts / '20.jsonl'}: line 13",
    ]


def test_verl_malformed_names_file_and_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rollouts = tmp_path / "rollouts"
    rollouts.mkdir()
    _write_lines(rollouts / "1.jsonl", [{"input": "p", "output": "o", "score": 1}])
    _write_lines(
        rollouts / "2.jsonl", [{"input": "p", "output": "o"}, {"input": "p", "output": 3, "score": 0}]
    )
    code, _, err = _cli(
        capsys, "ingest", "verl", str(rollouts), "--output", str(tmp_path / "o.jsonl"), *REGISTRY
    )
    assert code == 2 and f"{rollouts / '2.jsonl'}: line 2: output must be a string" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rollouts"]


# --- TRL -----------------------------------------------------------------------------------------


def _trl_file(path: Path, step: int, rows: list[tuple[Any, Any]]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table(
        {
            "step": [str(step)] * len(rows),
            "prompt": [p for p, _ in rows],
            "completion": [c for _, c in rows],
            "reward_func": [0.5] * len(rows),
            "advantage": [0.0] * len(rows),
        }
    )
    pq.write_table(table, path)


def test_trl_groups_by_step_and_prompt(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], requests: list[dict[str, Any]]
) -> None:
    folder = tmp_path / "out" / "completions"
    folder.mkdir(parents=True)
    for step in (5, 15):
        rows = [(chatml(requests[i]["messages"]), f"t{step}-{i}-{r}") for r in range(2) for i in range(2)]
        rows.append(("not registered", "z"))
        _trl_file(folder / f"completions_{step:05d}.parquet", step, rows)
    code, stdout, _ = _cli(
        capsys, "ingest", "trl", str(tmp_path / "out"), "--output", str(tmp_path / "t.jsonl"), *REGISTRY
    )
    assert code == 0
    summary = json.loads(stdout)
    assert [f["step"] for f in summary["files"]] == [5, 15] and summary["unmatched"] == 2
    assert read_jsonl(tmp_path / "t.step-15.jsonl") == [
        {"id": requests[i]["id"], "responses": [f"t15-{i}-0", f"t15-{i}-1"]} for i in range(2)
    ]


def test_trl_conversational_prompts_match_by_message_hash(
    tmp_path: Path, requests: list[dict[str, Any]]
) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "completions_00001.parquet"
    messages = requests[2]["messages"]
    completion = [{"role": "assistant", "content": "\\boxed{1}"}]
    pq.write_table(
        pa.table({"step": ["1", "1"], "prompt": [messages, messages], "completion": [completion] * 2}), path
    )
    from modebench.ingest import ingest as run
    from modebench.ingest import prompt_index

    summary = run("trl", path, tmp_path / "c.jsonl", index=prompt_index("bundled", "level1_countdown"))
    assert summary["unmatched"] == 0
    assert read_jsonl(tmp_path / "c.step-1.jsonl") == [
        {"id": requests[2]["id"], "responses": ["\\boxed{1}"] * 2}
    ]


def test_trl_malformed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    missing = tmp_path / "completions_00001.parquet"
    pq.write_table(pa.table({"step": ["1"], "prompt": ["p"]}), missing)
    code, _, err = _cli(capsys, "ingest", "trl", str(missing), "--output", str(tmp_path / "o.jsonl"))
    assert code == 2 and f"{missing}: missing column: completion" in err
    bad = tmp_path / "completions_00002.parquet"
    pq.write_table(pa.table({"prompt": ["p", "p"], "completion": [None, "x"]}), bad)
    code, _, err = _cli(capsys, "ingest", "trl", str(bad), "--output", str(tmp_path / "o.jsonl"))
    assert code == 2 and f"{bad}: row 1: completion must be a string" in err
    garbage = tmp_path / "completions_00003.parquet"
    garbage.write_text("not parquet")
    code, _, err = _cli(capsys, "ingest", "trl", str(garbage), "--output", str(tmp_path / "o.jsonl"))
    assert code == 2 and f"{garbage}: not a readable Parquet file" in err
    assert not list(tmp_path.glob("*.jsonl"))


# --- Inspect -------------------------------------------------------------------------------------


def test_inspect_json_log_joins_epochs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    samples = [
        {"id": f"level1_countdown/eval/{i}", "epoch": e, "input": "x", "output": {"completion": f"{i}-{e}"}}
        for e in (2, 1)
        for i in range(2)
    ]
    log = tmp_path / "log.json"
    log.write_text(json.dumps({"version": 2, "status": "success", "samples": samples}))
    code, _, _ = _cli(capsys, "ingest", "inspect", str(log), "--output", str(tmp_path / "i.jsonl"), *REGISTRY)
    assert code == 0
    assert read_jsonl(tmp_path / "i.jsonl") == [
        {"id": f"level1_countdown/eval/{i}", "responses": [f"{i}-1", f"{i}-2"]} for i in range(2)
    ]
    samples[3]["output"] = {}
    log.write_text(json.dumps({"samples": samples}))
    code, _, err = _cli(capsys, "ingest", "inspect", str(log), "--output", str(tmp_path / "j.jsonl"))
    assert code == 2 and f"{log}: sample 4: missing field: output.completion" in err
    assert not (tmp_path / "j.jsonl").exists()


# --- error paths common to every format --------------------------------------------------------


def test_trl_damaged_row_group_names_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "completions_00001.parquet"
    rows = 200
    table = pa.table(
        {
            "prompt": [f"p{i % 5}" * 50 for i in range(rows)],
            "completion": [f"answer {i} " * 20 for i in range(rows)],
        }
    )
    pq.write_table(table, path, row_group_size=100, compression="snappy")
    # Overwrite the second row group's completion pages: the footer stays readable, so the damage
    # surfaces only while batches are read.
    column = pq.ParquetFile(path).metadata.row_group(1).column(1)
    start = column.dictionary_page_offset or column.data_page_offset
    data = bytearray(path.read_bytes())
    data[start : start + column.total_compressed_size] = b"Z" * column.total_compressed_size
    path.write_bytes(bytes(data))
    code, _, err = _cli(capsys, "ingest", "trl", str(path), "--output", str(tmp_path / "o.jsonl"))
    assert code == 2 and f"{path}: after row " in err and "not a readable Parquet file" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not list(tmp_path.glob("*.jsonl")) and not list(tmp_path.glob(".*"))


def test_unwritable_output_is_named_and_nothing_is_left(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], requests: list[dict[str, Any]]
) -> None:
    rollouts = _verl_dir(tmp_path, requests)
    out = tmp_path / "missing-dir" / "o.jsonl"
    code, _, err = _cli(capsys, "ingest", "verl", str(rollouts), "--output", str(out), *REGISTRY)
    assert code == 2 and f"{out.with_name('o.step-10.jsonl')}: cannot write" in err
    assert ".partial" not in err and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rollouts"]


def test_a_failing_later_step_leaves_no_earlier_step_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], requests: list[dict[str, Any]]
) -> None:
    rollouts = _verl_dir(tmp_path, requests)
    _write_lines(rollouts / "30.jsonl", [{"input": "x", "output": "y"}, {"input": 3, "output": "y"}])
    out = tmp_path / "out" / "o.jsonl"
    out.parent.mkdir()
    code, _, err = _cli(capsys, "ingest", "verl", str(rollouts), "--output", str(out), *REGISTRY)
    assert code == 2 and f"{rollouts / '30.jsonl'}: line 2: input must be a string" in err
    assert list(out.parent.iterdir()) == []


def test_step_named_directories_are_not_step_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "dump" / "3.jsonl").mkdir(parents=True)
    code, _, err = _cli(
        capsys, "ingest", "verl", str(tmp_path / "dump"), "--output", str(tmp_path / "o.jsonl")
    )
    assert code == 2 and f"{tmp_path / 'dump'}: no verl step files (7.jsonl for step 7)" in err


def test_trajectory_of_a_malformed_dump_names_it_and_leaves_no_cache(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], requests: list[dict[str, Any]]
) -> None:
    rollouts = _verl_dir(tmp_path, requests)
    (rollouts / "20.jsonl").write_text('{"input": "x", "output": "y"}\n{broken\n')
    cache = tmp_path / "grading"
    code, _, err = _cli(capsys, "trajectory", f"verl:{rollouts}", *REGISTRY, "--grading-cache", str(cache))
    assert code == 2 and f"{rollouts / '20.jsonl'}: line 2: invalid JSON" in err and "Traceback" not in err
    assert not cache.exists()


def test_the_command_line_offers_every_ingest_format_without_loading_the_wing() -> None:
    import subprocess
    import sys

    from modebench import ingest
    from modebench.cli import ingest as ingest_command

    assert ingest_command.FORMATS == tuple(ingest.FORMATS)
    # Building the parser (every `modebench` command does) leaves the ingest wing unloaded.
    code = (
        "import sys; from modebench.cli import build_parser; build_parser(); "
        "sys.exit(1 if 'modebench.ingest' in sys.modules else 0)"
    )
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0
