"""Ingest on files written by the real tools (lm-eval, Inspect) or by their writer code (verl, TRL).

The writers are in ``tests/ingest/writers/`` (each cites what it runs or follows); the committed
fixtures under ``tests/ingest/fixtures/`` are their output. ``docs/ingest.md`` describes the rules.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from modebench.api import trajectory
from tests.ingest.conftest import read_jsonl
from tests.ingest.conftest import run_cli as _cli

REGISTRY = ["--registry", "bundled", "--config", "level1_countdown"]
FIXTURES = Path(__file__).parent / "fixtures"
ROOT = Path(__file__).resolve().parents[2]


def _ingest(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[dict[str, Any], str]:
    code, out, err = _cli(capsys, "ingest", *argv)
    assert code == 0, err
    return json.loads(out), err


# --- verl and TRL: the trainers' own logging path -------------------------------------------------

FAMILIES = ["qwen2.5", "llama3"]


@pytest.fixture(scope="module")
def dumps() -> Any:
    pytest.importorskip("transformers")
    pytest.importorskip("pandas")
    from tests.ingest.writers import rollout_dumps

    return rollout_dumps


def _draws(dumps: Any, requests: list[dict[str, Any]], step: int) -> list[dict[str, Any]]:
    return [{"id": r["id"], "responses": dumps._draws(r, step, 4)} for r in requests]


def test_the_dumps_carry_the_stripped_templates(
    dumps: Any, requests: list[dict[str, Any]], tmp_path: Path
) -> None:
    """What the writer produced is what the issue reported verl and TRL write."""
    system, user = (m["content"] for m in requests[0]["messages"])
    qwen = read_jsonl(dumps.write_verl(requests[:1], "qwen2.5", tmp_path / "q", steps=1) / "1.jsonl")
    assert qwen[0]["input"] == f"system\n{system}\nuser\n{user}\nassistant\n"
    llama = read_jsonl(dumps.write_verl(requests[:1], "llama3", tmp_path / "l", steps=1) / "1.jsonl")
    assert llama[0]["input"] == f"system\n\n{system}user\n\n{user}assistant\n\n"
    assert set(qwen[0]) == {"input", "output", "gts", "score", "step", "acc"}


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("fmt", ["verl", "trl"])
def test_chat_dumps_match_every_prompt_and_keep_draw_order(
    dumps: Any,
    requests: list[dict[str, Any]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    fmt: str,
    family: str,
) -> None:
    chosen = requests[:6]
    writer = dumps.write_verl if fmt == "verl" else dumps.write_trl
    source = writer(chosen, family, tmp_path / "dump", steps=2)
    summary, err = _ingest(capsys, fmt, str(source), "--output", str(tmp_path / "o.jsonl"), *REGISTRY)
    assert summary["unmatched"] == 0 and err == ""
    assert [f["step"] for f in summary["files"]] == [1, 2]
    for step in (1, 2):
        assert read_jsonl(tmp_path / f"o.step-{step}.jsonl") == _draws(dumps, chosen, step)
    template = "qwen2" if family == "qwen2.5" else "llama3"
    [rule] = summary["match_rules"]
    assert f"template:{template}:skip-special-tokens" in rule and summary["match_rules"][rule] == 12
    assert summary["matched_by"] == {r["id"]: rule for r in chosen}


@pytest.mark.parametrize(("fmt", "field"), [("verl", "gts.prompt_id"), ("trl", "prompt_id")])
def test_an_id_field_names_the_prompts(
    dumps: Any,
    requests: list[dict[str, Any]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    fmt: str,
    field: str,
) -> None:
    writer = dumps.write_verl if fmt == "verl" else dumps.write_trl
    source = writer(requests[:3], "llama3", tmp_path / "dump", steps=1)
    out = tmp_path / "o.jsonl"
    summary, _ = _ingest(capsys, fmt, str(source), "--output", str(out), "--id-field", field, *REGISTRY)
    assert summary["match_rules"] == {f"id-field:{field}": 3}
    assert read_jsonl(tmp_path / "o.step-1.jsonl") == _draws(dumps, requests[:3], 1)
    code, _, err = _cli(
        capsys, "ingest", fmt, str(source), "--output", str(out), "--id-field", "nope", *REGISTRY
    )
    assert code == 2 and "nope" in err and "Traceback" not in err


@pytest.mark.parametrize("fmt", ["verl", "trl"])
def test_nothing_matched_is_an_error_naming_the_prompt_and_the_renderings(
    dumps: Any, requests: list[dict[str, Any]], tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    other = [
        {
            **r,
            "messages": [r["messages"][0], {"role": "user", "content": f"Another benchmark's question {i}."}],
        }
        for i, r in enumerate(requests[:2])
    ]
    writer = dumps.write_verl if fmt == "verl" else dumps.write_trl
    source = writer(other, "qwen2.5", tmp_path / "dump", steps=1)
    out = tmp_path / "o.jsonl"
    code, _, err = _cli(capsys, "ingest", fmt, str(source), "--output", str(out), *REGISTRY)
    assert code == 2 and "Traceback" not in err
    assert "none of 2 source prompts matched a registered prompt" in err
    assert "Another benchmark's question 0." in err
    assert "template:llama3:skip-special-tokens" in err and "text:user" in err
    assert not list(tmp_path.glob("o*.jsonl"))


def test_a_partial_match_says_so_on_stderr(
    dumps: Any, requests: list[dict[str, Any]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = {**requests[1], "messages": [{"role": "user", "content": "Unregistered."}]}
    source = dumps.write_verl([requests[0], other], "qwen2.5", tmp_path / "dump", steps=1)
    summary, err = _ingest(capsys, "verl", str(source), "--output", str(tmp_path / "o.jsonl"), *REGISTRY)
    assert summary["unmatched"] == 1
    assert "1 of 2 source prompts matched no registered prompt" in err
    assert f"{source / '1.jsonl'}: line 5" in err


def test_a_tokenizer_renders_templates_that_are_not_shipped(
    dumps: Any,
    requests: list[dict[str, Any]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    custom = {
        "template": (
            "{% for m in messages %}<|turn|>{{ m['role'] | upper }}: {{ m['content'] }}<|end|>{% endfor %}"
            "{% if add_generation_prompt %}<|turn|>ASSISTANT: {% endif %}"
        ),
        "special": ["<|turn|>", "<|end|>", "<|pad|>"],
        "tokens": {"eos_token": "<|end|>", "pad_token": "<|pad|>"},
    }
    monkeypatch.setitem(dumps.FAMILIES, "custom", custom)
    source = dumps.write_verl(requests[:2], "custom", tmp_path / "dump", steps=1)
    out = str(tmp_path / "o.jsonl")
    code, _, err = _cli(capsys, "ingest", "verl", str(source), "--output", out, *REGISTRY)
    assert code == 2 and "none of 2 source prompts matched" in err
    saved = tmp_path / "tokenizer"
    dumps.chat_tokenizer("custom").save_pretrained(saved)
    summary, _ = _ingest(capsys, "verl", str(source), "--output", out, "--tokenizer", str(saved), *REGISTRY)
    assert summary["match_rules"] == {f"tokenizer:{saved}:skip-special-tokens": 2}
    code, _, err = _cli(
        capsys,
        "ingest",
        "verl",
        str(source),
        "--output",
        out,
        "--tokenizer",
        str(tmp_path / "none"),
        *REGISTRY,
    )
    assert code == 2 and "not a readable tokenizer" in err and "Traceback" not in err


@pytest.mark.parametrize("fmt", ["verl", "trl"])
def test_trajectory_grades_chat_dumps_per_step(
    dumps: Any, requests: list[dict[str, Any]], tmp_path: Path, fmt: str
) -> None:
    writer = dumps.write_verl if fmt == "verl" else dumps.write_trl
    source = writer(requests[:2], "llama3", tmp_path / "dump", steps=2, n=2)
    run = {
        "model": {"id": "policy", "revision": "rl"},
        "generation": {"draws_per_prompt": 2},
        "prompt_condition": "registered_hints_v1",
    }
    table = trajectory(
        [f"{fmt}:{source}"],
        registry="bundled",
        config="level1_countdown",
        grading_cache=tmp_path / "cache",
        run=run,
    )
    assert table.meta["grading"] == {"graded": 2, "cached": 0, "unmatched": 0}
    assert sorted({r["step"] for r in table.rows}) == [1, 2]
    assert {r["prompts"] for r in table.rows if r["metric"] == "accuracy"} == {2}
    receipts = sorted((tmp_path / "cache").glob("*/report.json"))
    assert len(receipts) == 2


# --- step file names -------------------------------------------------------------------------------


@pytest.mark.parametrize("extra", ["01.jsonl", "\u0661.jsonl", "rollouts.jsonl"])
def test_verl_step_files_other_than_the_writers_are_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: str
) -> None:
    dump = tmp_path / "dump"
    dump.mkdir()
    line = json.dumps({"input": "p", "output": "o", "score": 0, "step": 1}) + "\n"
    (dump / "1.jsonl").write_text(line)
    (dump / extra).write_text(line)
    code, _, err = _cli(capsys, "ingest", "verl", str(dump), "--output", str(tmp_path / "o.jsonl"))
    assert code == 2 and f"{dump}: not verl step files: {extra}" in err and "Traceback" not in err
    assert not list(tmp_path.glob("o*"))


def test_trl_step_files_other_than_the_writers_are_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    folder = tmp_path / "out" / "completions"
    folder.mkdir(parents=True)
    table = pa.table({"step": ["1"], "prompt": ["p"], "completion": ["c"]})
    pq.write_table(table, folder / "completions_00001.parquet")
    pq.write_table(table, folder / "completions_1.parquet")
    code, _, err = _cli(capsys, "ingest", "trl", str(tmp_path / "out"), "--output", str(tmp_path / "o.jsonl"))
    assert code == 2 and "not TRL step files: completions_1.parquet" in err


# --- lm-evaluation-harness: files its CLI wrote -------------------------------------------------

LM_EVAL = FIXTURES / "lm_eval"


def _samples(case: str) -> list[Path]:
    return sorted((LM_EVAL / case).rglob("samples_*.jsonl"))


def test_lm_eval_one_filter_matches_by_prompt_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], requests: list[dict[str, Any]]
) -> None:
    summary, err = _ingest(
        capsys, "lm-eval", str(LM_EVAL / "one"), "--output", str(tmp_path / "o.jsonl"), *REGISTRY
    )
    assert err == "" and summary["unmatched"] == 0 and summary["match_rules"] == {"text:user": 4}
    [(task, filters)] = summary["filters"].items()
    assert task.startswith("mb_one") and filters == {"chosen": "none", "filters": ["none"]}
    assert read_jsonl(tmp_path / "o.jsonl") == [{"id": r["id"], "responses": ["lol"]} for r in requests[:4]]


def test_lm_eval_two_filters_give_k_equal_to_repeats(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], requests: list[dict[str, Any]]
) -> None:
    [source] = _samples("two")
    lines = read_jsonl(source)
    assert len(lines) == 8 and {line["filter"] for line in lines} == {"strict-match", "flexible-extract"}
    out = tmp_path / "o.jsonl"
    summary, _ = _ingest(capsys, "lm-eval", str(source), "--output", str(out), *REGISTRY)
    assert summary["match_rules"] == {"id": 4}
    assert list(summary["filters"].values()) == [
        {"chosen": "strict-match", "filters": ["strict-match", "flexible-extract"]}
    ]
    records = read_jsonl(out)
    assert [r["id"] for r in records] == [r["id"] for r in requests[:4]]
    assert {len(r["responses"]) for r in records} == {4}  # the task's repeats, not 8
    second = tmp_path / "f.jsonl"
    summary, _ = _ingest(
        capsys, "lm-eval", str(source), "--output", str(second), "--filter", "flexible-extract", *REGISTRY
    )
    assert list(summary["filters"].values())[0]["chosen"] == "flexible-extract"
    assert read_jsonl(second) == records  # the same resps, once
    code, _, err = _cli(
        capsys, "ingest", "lm-eval", str(source), "--output", str(tmp_path / "x.jsonl"), "--filter", "nope"
    )
    assert code == 2 and "no filter nope (filters: strict-match, flexible-extract)" in err


def test_lm_eval_system_instruction_prompts_match(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], requests: list[dict[str, Any]]
) -> None:
    [source] = _samples("system")
    context = read_jsonl(source)[0]["arguments"]["gen_args_0"]["arg_0"]
    system, user = (m["content"] for m in requests[0]["messages"])
    assert context.startswith(system) and context.endswith(user)
    summary, _ = _ingest(capsys, "lm-eval", str(source), "--output", str(tmp_path / "o.jsonl"), *REGISTRY)
    assert summary["unmatched"] == 0 and summary["prompts"] == 4
    [rule] = summary["match_rules"]
    assert rule.startswith("text:system+user:")


def test_lm_eval_rerun_into_one_directory_keeps_the_newest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    older, newer = _samples("rerun")
    summary, _ = _ingest(
        capsys, "lm-eval", str(LM_EVAL / "rerun"), "--output", str(tmp_path / "o.jsonl"), *REGISTRY
    )
    assert summary["prompts"] == 4 and summary["responses"] == 4  # not doubled
    assert summary["skipped_files"] == [
        {"path": str(older), "reason": f"older run of task mb_one: {newer.name} is newer"}
    ]


def test_lm_eval_tasks_never_merge(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    both = tmp_path / "both"
    both.mkdir()
    for path in (*_samples("one"), *_samples("two")):
        shutil.copy(path, both / path.name)
    code, _, err = _cli(
        capsys, "ingest", "lm-eval", str(both), "--output", str(tmp_path / "o.jsonl"), *REGISTRY
    )
    assert code == 2 and "never merged" in err and "samples_mb_one" in err and "samples_mb_two" in err
    assert not (tmp_path / "o.jsonl").exists()


def test_lm_eval_legacy_array_files_read_like_current_ones(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """0.4.0–0.4.2 ``__main__.cli_evaluate``: ``json.dumps(samples[task_name], indent=2, …)`` into
    ``{model_args}_{task}.jsonl``; ``evaluator.evaluate`` logged per filter, in filter order,
    ``doc_id``, ``doc``, ``target``, ``arguments`` as ``[req.args …]``, ``resps``, ``filtered_resps``."""
    [source] = _samples("two")
    samples = [
        {
            "doc_id": line["doc_id"], "doc": line["doc"], "target": line["target"],
            "arguments": [list(arg.values()) for arg in line["arguments"].values()],
            "resps": line["resps"], "filtered_resps": line["filtered_resps"],
        }
        for line in read_jsonl(source)
    ]  # fmt: skip
    legacy = tmp_path / "pretrained__dummy_mb_two.jsonl"
    legacy.write_text(json.dumps(samples, indent=2, ensure_ascii=False), encoding="utf-8")
    current, _ = _ingest(capsys, "lm-eval", str(source), "--output", str(tmp_path / "a.jsonl"), *REGISTRY)
    old, _ = _ingest(capsys, "lm-eval", str(legacy), "--output", str(tmp_path / "b.jsonl"), *REGISTRY)
    assert read_jsonl(tmp_path / "a.jsonl") == read_jsonl(tmp_path / "b.jsonl")
    assert list(old["filters"].values()) == [{"chosen": "#1", "filters": ["#1", "#2"]}]
    assert current["prompts"] == old["prompts"] == 4


def test_lm_eval_cli_live(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The real lm-eval CLI, run now: its two-filter file ingests like the committed one."""
    pytest.importorskip("lm_eval")
    from tests.ingest.writers import lm_eval_runs
    from tests.ingest.writers.rollout_dumps import bundled_requests

    written = lm_eval_runs.write(bundled_requests(), tmp_path / "out", tmp_path / "scratch", cases=("two",))
    capsys.readouterr()  # what prepare printed
    [source] = sorted(written["two"].rglob("samples_mb_two_*.jsonl"))
    live, _ = _ingest(capsys, "lm-eval", str(source), "--output", str(tmp_path / "live.jsonl"), *REGISTRY)
    [fixture] = _samples("two")
    _ingest(capsys, "lm-eval", str(fixture), "--output", str(tmp_path / "fixture.jsonl"), *REGISTRY)
    assert read_jsonl(tmp_path / "live.jsonl") == read_jsonl(tmp_path / "fixture.jsonl")
    assert {len(r["responses"]) for r in read_jsonl(tmp_path / "live.jsonl")} == {lm_eval_runs.REPEATS}


# --- Inspect AI: logs real Inspect wrote -----------------------------------------------------------

INSPECT_OLD = FIXTURES / "inspect_oldest"


@pytest.fixture(scope="module")
def inspect_live(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Logs of the Inspect installed here (the newest the extra allows), written now."""
    pytest.importorskip("inspect_ai")
    out = tmp_path_factory.mktemp("inspect-live")
    script = ROOT / "tests" / "ingest" / "writers" / "inspect_logs.py"
    done = subprocess.run(
        [sys.executable, str(script), str(out)], capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return out


@pytest.fixture(params=["oldest", "newest"])
def inspect_logs(request: pytest.FixtureRequest) -> Path:
    if request.param == "oldest":
        return INSPECT_OLD
    return Path(request.getfixturevalue("inspect_live"))


def test_inspect_logs_of_both_formats_ingest_every_epoch(
    inspect_logs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], requests: list[dict[str, Any]]
) -> None:
    outputs = []
    for fmt in ("eval", "json"):
        out = tmp_path / f"{fmt}.jsonl"
        summary, _ = _ingest(
            capsys, "inspect", str(inspect_logs / f"mockllm.{fmt}"), "--output", str(out), *REGISTRY
        )
        assert summary["unmatched"] == 0 and summary["match_rules"] == {"id": 3}
        outputs.append(read_jsonl(out))
    assert outputs[0] == outputs[1]
    assert [r["id"] for r in outputs[0]] == [r["id"] for r in requests[:3]]
    assert {len(r["responses"]) for r in outputs[0]} == {2}
    assert all(text == "\\boxed{1}" for r in outputs[0] for text in r["responses"])


def test_inspect_errored_epoch_is_a_failed_draw(
    inspect_logs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], requests: list[dict[str, Any]]
) -> None:
    out = tmp_path / "o.jsonl"
    summary, _ = _ingest(
        capsys, "inspect", str(inspect_logs / "errored.json"), "--output", str(out), *REGISTRY
    )
    [failed] = summary["failed_draws"]
    assert "provider failure (simulated)" in failed["error"]
    records = {r["id"]: r["responses"] for r in read_jsonl(out)}
    assert sorted(records[requests[0]["id"]]) == ["", "\\boxed{11-9-2}"]
    assert records[requests[1]["id"]] == ["\\boxed{11-9-2}"] * 2


def test_inspect_eval_set_directory_skips_its_bookkeeping_files(
    inspect_logs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = inspect_logs / "eval_set"
    summary, _ = _ingest(capsys, "inspect", str(directory), "--output", str(tmp_path / "o.jsonl"), *REGISTRY)
    assert summary["prompts"] == 2 and summary["responses"] == 4
    skipped = {Path(entry["path"]).name for entry in summary["skipped_files"]}
    assert skipped and all(not name.endswith(".eval") for name in skipped)


def test_inspect_extra_lower_bound_is_the_oldest_tested_inspect() -> None:
    import re

    pyproject = (ROOT / "pyproject.toml").read_text()
    [bound] = re.findall(r'^inspect = \["inspect-ai>=([0-9.]+)"\]', pyproject, re.M)
    assert (INSPECT_OLD / "INSPECT_VERSION").read_text().strip() == bound


@pytest.mark.parametrize("name", ["mockllm.eval", "mockllm.json", "errored.json"])
def test_inspect_ingest_equals_inspects_own_reader(
    inspect_logs: Path, name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Inspect's ``read_eval_log`` (the installed, newest Inspect, reading either version's log) is
    the oracle: per sample, its epochs' ``output.completion`` in epoch order."""
    from inspect_ai.log import read_eval_log

    log = read_eval_log(str(inspect_logs / name))
    expected: dict[str, list[tuple[int, str]]] = {}
    for sample in log.samples or []:
        expected.setdefault(str(sample.id), []).append((sample.epoch, sample.output.completion))
    out = tmp_path / "o.jsonl"
    _ingest(capsys, "inspect", str(inspect_logs / name), "--output", str(out), *REGISTRY)
    assert {r["id"]: r["responses"] for r in read_jsonl(out)} == {
        ident: [text for _, text in sorted(epochs)] for ident, epochs in expected.items()
    }


def test_inspect_sample_without_output_is_an_empty_draw(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A sample with no ``output`` (as in Inspect's own test log
    ``tests/log/test_eval_log/log_tool_call_error.json``, a tool-call error sample): Inspect reads
    the log, its ``EvalSample.output`` defaulting to an empty ``ModelOutput`` (completion ``""``);
    so does ingest, and the summary says which draw had no output. The log is one Inspect wrote
    (the committed oldest-Inspect ``mockllm.json``) with that one field taken out."""
    log = json.loads((INSPECT_OLD / "mockllm.json").read_text(encoding="utf-8"))
    first = log["samples"][0]
    del first["output"]
    path = tmp_path / "tool_call_error.json"
    path.write_text(json.dumps(log), encoding="utf-8")
    if importlib.util.find_spec("inspect_ai") is not None:  # Inspect itself is the oracle when present
        from inspect_ai.log import read_eval_log

        read = read_eval_log(str(path))
        assert read.samples is not None and read.samples[0].output.completion == ""
    out = tmp_path / "o.jsonl"
    summary, _ = _ingest(capsys, "inspect", str(path), "--output", str(out), *REGISTRY)
    assert summary["draws_without_output"] == [{"location": f"{path}: sample 1"}]
    responses = {r["id"]: r["responses"] for r in read_jsonl(out)}
    assert sum(responses.values(), []).count("") == 1
    assert summary["responses"] == len(log["samples"])  # every draw kept, the empty one too
    from modebench.api import Task, grade

    answer = {"verifier": "countdown", "numbers": [2, 9, 11], "target": 1}
    task = Task(id="t", level=1, domain="countdown", problem="", answer=answer)
    assert grade(task, "")["status"] == "malformed"  # how evaluate grades the empty draw
