"""``modebench generate`` end to end against a real loopback OpenAI-compatible server.

Everything goes through the real ``openai`` client over HTTP: output that ``evaluate`` accepts,
per-draw seeds, retried 429/500s and dropped connections, permanently failing prompts kept as
failed draws, ``n`` choices, the completions endpoint, and the install hint without the extra.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from modebench.api import iter_results
from modebench.cli import main
from modebench.generate import draw_seed
from modebench.validation import validate_run

ANSWERS = ["\\boxed{1+2+3}", "\\boxed{3*2*1}", "\\boxed{2*3}", "no idea"]


def _tasks(path: Path, count: int, poison: int | None = None) -> Path:
    with open(path, "w") as handle:
        for index in range(count):
            problem = f"Using the numbers [1, 2, 3], create an expression that equals 6 (task {index})."
            if index == poison:
                problem += " POISON"
            answer = {"verifier": "countdown", "numbers": [1, 2, 3], "target": 6}
            record = {
                "id": f"t{index}",
                "level": 1,
                "domain": "countdown",
                "problem": problem,
                "answer": answer,
            }
            handle.write(json.dumps(record) + "\n")
    return path


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any], str]:
    code = main(["generate", "--model", "test-model", "--progress-every", "0", *args])
    captured = capsys.readouterr()
    return code, json.loads(captured.out), captured.err


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _error(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    with pytest.raises(SystemExit) as exc:
        main(["generate", "--model", "test-model", "--progress-every", "0", *args])
    assert exc.value.code == 2
    return capsys.readouterr().err


def test_frozen_split_output_is_what_evaluate_expects(endpoint: Any, tmp_path: Path, capsys: Any) -> None:
    server = endpoint()
    out = tmp_path / "out.jsonl"
    common = ["--config", "level1_countdown", "--registry", "bundled"]
    code, summary, _ = _run(
        capsys, *common, "--base-url", server.base_url, "-k", "3", "--seed", "7", "--output", str(out)
    )
    assert code == 0
    assert (summary["prompts"], summary["draws"], summary["sent"], summary["failed_draws"]) == (32, 96, 96, 0)

    # Each record is exactly the `prepare` request plus its responses, in prompt order.
    requests = tmp_path / "requests.jsonl"
    assert main(["prepare", *common, "--output", str(requests)]) == 0
    capsys.readouterr()
    records = _lines(out)
    assert [{k: v for k, v in r.items() if k != "responses"} for r in records] == _lines(requests)
    assert all(list(r)[-1] == "responses" and len(r["responses"]) == 3 for r in records)

    # Seeds: one per draw, derived from (run seed, prompt id, draw index), all different.
    sent = [(entry["body"]["seed"], entry["body"]["messages"]) for entry in server.requests()]
    assert len(sent) == 96 and len({seed for seed, _ in sent}) == 96
    expected = {draw_seed(7, r["id"], d) for r in records for d in range(3)}
    assert {seed for seed, _ in sent} == expected
    sidecar = _lines(tmp_path / "out.draws.jsonl")
    assert [(d["id"], d["draw"]) for d in sidecar] == [(r["id"], d) for r in records for d in range(3)]
    assert all(d["seed"] == draw_seed(7, d["id"], d["draw"]) for d in sidecar)
    assert all(d["finish_reason"] == "stop" and d["usage"]["completion_tokens"] > 0 for d in sidecar)

    run = json.loads((tmp_path / "out.run.json").read_text())
    assert validate_run(run) == run
    assert run["model"] == {"id": "test-model", "revision": "test-model"}
    assert run["generation"]["draws_per_prompt"] == 3 and run["generation"]["seed"] == 7
    assert run["endpoint"]["base_url"] == server.base_url
    assert run["draws"]["failed"] == 0 and run["draws"]["finish_reasons"] == {"stop": 96}

    receipt = tmp_path / "receipt.json"
    args = ["evaluate", str(out), *common, "--run", str(tmp_path / "out.run.json"), "--output", str(receipt)]
    assert main([*args, "--progress-every", "0"]) == 0
    assert json.loads(receipt.read_text())["evaluation"]["status"] == "completed"


def test_task_file_with_evaluate_grades_right_after(endpoint: Any, tmp_path: Path, capsys: Any) -> None:
    server = endpoint(answers=ANSWERS, fingerprint="fp_loop", reported_model="test-model-2026-12-01")
    tasks = _tasks(tmp_path / "tasks.jsonl", 6)
    out, receipt = tmp_path / "out.jsonl", tmp_path / "receipt.json"
    code, summary, _ = _run(
        capsys, "--tasks", str(tasks), "--base-url", server.base_url, "-k", "8", "--seed", "1",
        "--temperature", "0.7", "--output", str(out), "--evaluate", str(receipt), "--min-defined-prompts", "1",
    )  # fmt: skip
    assert code == 0 and summary["status"] == "completed" and summary["receipt"] == str(receipt)
    records = _lines(out)
    original = _lines(tasks)
    assert [{k: v for k, v in r.items() if k != "responses"} for r in records] == original
    results = list(iter_results(receipt))
    assert [r["id"] for r in results] == [f"t{i}" for i in range(6)]
    statuses = Counter(a["status"] for r in results for a in r["draws"][0]["attempts"])
    assert statuses["correct"] > 0 and statuses["incorrect"] > 0 and sum(statuses.values()) == 48
    run = json.loads((tmp_path / "out.run.json").read_text())
    assert run["model"]["revision"] == "test-model-2026-12-01@fp_loop"
    assert run["generation"]["temperature"] == 0.7
    assert all(entry["body"]["temperature"] == 0.7 for entry in server.requests())


def test_transient_errors_and_dropped_connections_are_retried(
    endpoint: Any, tmp_path: Path, capsys: Any
) -> None:
    server = endpoint(flaky={"every": 2, "failures": 2}, drop={"every": 3, "times": 1})
    tasks = _tasks(tmp_path / "tasks.jsonl", 10)
    out = tmp_path / "out.jsonl"
    code, summary, err = _run(
        capsys, "--tasks", str(tasks), "--base-url", server.base_url, "-k", "4", "--seed", "3",
        "--retries", "4", "--concurrency", "8", "--output", str(out),
    )  # fmt: skip
    assert code == 0 and summary["failed_draws"] == 0 and "WARNING" not in err
    statuses = Counter(entry["status"] for entry in server.requests())
    assert statuses[429] > 0 and statuses[500] > 0 and statuses["dropped"] > 0 and statuses[200] == 40
    assert summary["retries"] == statuses[429] + statuses[500] + statuses["dropped"]
    assert sum(d["retries"] for d in _lines(tmp_path / "out.draws.jsonl")) == summary["retries"]
    assert all(response.startswith("seed ") for r in _lines(out) for response in r["responses"])


def test_permanently_failing_prompt_is_recorded_not_dropped(
    endpoint: Any, tmp_path: Path, capsys: Any
) -> None:
    server = endpoint(answers=ANSWERS, always_fail="POISON")
    tasks = _tasks(tmp_path / "tasks.jsonl", 3, poison=1)
    out = tmp_path / "out.jsonl"
    code, summary, err = _run(
        capsys, "--tasks", str(tasks), "--base-url", server.base_url, "-k", "3", "--seed", "5",
        "--retries", "2", "--output", str(out),
    )  # fmt: skip
    assert code == 0 and summary["failed_draws"] == 3
    assert "WARNING: 3 of 9 draws FAILED after all retries" in err and "--retry-failed" in err
    records = _lines(out)
    assert [len(r["responses"]) for r in records] == [3, 3, 3]
    assert records[1]["responses"] == ["", "", ""]
    poisoned = [e for e in server.requests() if "POISON" in e["body"]["messages"][1]["content"]]
    assert len(poisoned) == 9 and {e["retry"] for e in poisoned} == {"0", "1", "2"}  # 3 draws × 3 attempts
    run = json.loads((tmp_path / "out.run.json").read_text())
    assert run["draws"]["failed"] == 3 and run["draws"]["failed_draw_response"] == ""
    assert [(f["id"], f["draw"]) for f in run["draws"]["failures"]] == [("t1", 0), ("t1", 1), ("t1", 2)]
    assert all(f["error"].startswith("HTTP 500") for f in run["draws"]["failures"])
    failed = [d for d in _lines(tmp_path / "out.draws.jsonl") if d["status"] == "failed"]
    assert len(failed) == 3 and all("injected permanent failure" in d["error"] for d in failed)

    receipt = tmp_path / "receipt.json"
    args = ["evaluate", str(out), "--run", str(tmp_path / "out.run.json"), "--output", str(receipt)]
    assert main([*args, "--progress-every", "0"]) == 0
    capsys.readouterr()
    poisoned_result = list(iter_results(receipt))[1]
    assert [a["status"] for a in poisoned_result["draws"][0]["attempts"]] == ["malformed"] * 3


def test_retry_failed_resends_only_failed_draws(endpoint: Any, tmp_path: Path, capsys: Any) -> None:
    # Every body fails three times: with one retry a first run fails all draws, a rerun succeeds.
    server = endpoint(flaky={"every": 1, "failures": 3})
    tasks = _tasks(tmp_path / "tasks.jsonl", 2)
    out = tmp_path / "out.jsonl"
    args = ["--tasks", str(tasks), "--base-url", server.base_url, "-k", "2", "--seed", "9", "--retries", "1"]
    code, summary, _ = _run(capsys, *args, "--output", str(out))
    assert code == 0 and summary["failed_draws"] == 4
    assert "output already exists" in _error(capsys, *args, "--output", str(out))
    code, summary, err = _run(capsys, *args, "--output", str(out), "--retry-failed")
    assert code == 0 and (summary["sent"], summary["failed_draws"]) == (4, 0) and "WARNING" not in err
    assert all(r["responses"][0].startswith("seed ") for r in _lines(out))


def test_choices_per_request_and_completions_endpoint(endpoint: Any, tmp_path: Path, capsys: Any) -> None:
    server = endpoint(answers=["alpha beta gamma delta", "one two three four"])
    tasks = _tasks(tmp_path / "tasks.jsonl", 3)
    out = tmp_path / "out.jsonl"
    code, summary, _ = _run(
        capsys, "--tasks", str(tasks), "--base-url", server.base_url, "-k", "4", "--seed", "2",
        "--choices-per-request", "2", "--completions", "--max-tokens", "2", "--output", str(out),
    )  # fmt: skip
    assert code == 0 and summary["draws"] == 12
    sent = server.requests()
    assert len(sent) == 6 and {e["path"] for e in sent} == {"/v1/completions"}
    assert all(e["body"]["n"] == 2 and e["body"]["max_tokens"] == 2 for e in sent)
    assert all(e["body"]["prompt"].startswith("<|im_start|>system\n") for e in sent)
    assert all(e["body"]["prompt"].endswith("<|im_start|>assistant\n") for e in sent)
    assert len({e["body"]["seed"] for e in sent}) == 6
    # Cut at max_tokens: still a response, recorded as finish_reason "length".
    assert all(resp in ("alpha beta", "one two") for r in _lines(out) for resp in r["responses"])
    run = json.loads((tmp_path / "out.run.json").read_text())
    assert run["draws"]["finish_reasons"] == {"length": 12}
    assert run["generation"]["api"] == "completions" and run["generation"]["choices_per_request"] == 2
    assert run["generation"]["prompt_template"] == "chatml"
    # Usage is per request: on the first draw of each request only, so totals add up.
    sidecar = _lines(tmp_path / "out.draws.jsonl")
    assert [d["usage"]["completion_tokens"] for d in sidecar[:2]] == [4, None]
    assert run["draws"]["usage"]["completion_tokens"] == 24


def test_request_file_from_prepare(endpoint: Any, tmp_path: Path, capsys: Any) -> None:
    server = endpoint()
    requests = tmp_path / "requests.jsonl"
    assert (
        main(
            [
                "prepare",
                "--registry",
                "bundled",
                "--config",
                "level2_graph_coloring",
                "--output",
                str(requests),
            ]
        )
        == 0
    )
    capsys.readouterr()
    out = tmp_path / "out.jsonl"
    code, summary, _ = _run(
        capsys, "--requests", str(requests), "--base-url", server.base_url, "-k", "2", "--output", str(out)
    )
    assert code == 0 and summary["draws"] == 64
    assert [{k: v for k, v in r.items() if k != "responses"} for r in _lines(out)] == _lines(requests)
    assert all("seed" not in e["body"] for e in server.requests())  # no run seed: none sent
    run = json.loads((tmp_path / "out.run.json").read_text())
    assert run["source"]["kind"] == "requests" and run["generation"]["seed"] is None
    receipt = tmp_path / "receipt.json"
    args = ["evaluate", str(out), "--registry", "bundled", "--config", "level2_graph_coloring"]
    assert (
        main(
            [
                *args,
                "--run",
                str(tmp_path / "out.run.json"),
                "--output",
                str(receipt),
                "--progress-every",
                "0",
            ]
        )
        == 0
    )


def test_input_and_endpoint_errors_exit_2(endpoint: Any, tmp_path: Path, capsys: Any) -> None:
    server = endpoint()
    tasks = _tasks(tmp_path / "tasks.jsonl", 2)
    base = ["--base-url", server.base_url, "-k", "1"]
    with open(tmp_path / "bad.jsonl", "w") as handle:
        handle.write(tasks.read_text().splitlines()[0] + '\n{"id": "x", "level": 1, "domain": "countdown"}\n')
    err = _error(
        capsys, "--tasks", str(tmp_path / "bad.jsonl"), *base, "--output", str(tmp_path / "o1.jsonl")
    )
    assert "error: line 2: missing field: problem" in err and "Traceback" not in err
    err = _error(
        capsys, "--tasks", str(tasks), *base, "--output", str(tmp_path / "o2.jsonl"), "--model", "other"
    )
    assert "error: endpoint refused the request (404)" in err
    assert not (tmp_path / "o2.jsonl").exists()

    out = tmp_path / "o3.jsonl"
    assert _run(capsys, "--tasks", str(tasks), *base, "--seed", "1", "--output", str(out))[0] == 0
    out.unlink()
    err = _error(capsys, "--tasks", str(tasks), *base, "--seed", "2", "--output", str(out))
    assert "was written for other generation settings or prompts" in err
    err = _error(
        capsys, "--tasks", str(tasks), *base, "--output", str(tmp_path / "o4.jsonl"), "--registry", "bundled"
    )
    assert "--registry, --data-root, --cache-dir and --offline require --config" in err


def test_missing_extra_gives_install_hint(
    tmp_path: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "openai", None)  # import openai → ImportError
    tasks = _tasks(tmp_path / "tasks.jsonl", 1)
    args = [
        "--tasks",
        str(tasks),
        "--base-url",
        "http://127.0.0.1:9/v1",
        "-k",
        "1",
        "--output",
        str(tmp_path / "o.jsonl"),
    ]
    err = _error(capsys, *args)
    assert (
        "generation requires the 'generate' extra: pip install -e '.[generate]' in the modebench checkout"
        in err
    )
    assert "Traceback" not in err and not (tmp_path / "o.jsonl").exists()


def test_several_processes_give_the_same_output(endpoint: Any, tmp_path: Path, capsys: Any) -> None:
    server = endpoint(flaky={"every": 3, "failures": 1}, always_fail="POISON")
    tasks = _tasks(tmp_path / "tasks.jsonl", 8, poison=5)
    outputs = []
    for processes in ("1", "3"):
        directory = tmp_path / f"p{processes}"
        directory.mkdir()
        code, summary, _ = _run(
            capsys, "--tasks", str(tasks), "--base-url", server.base_url, "-k", "3", "--seed", "4",
            "--retries", "2", "--concurrency", "6", "--processes", processes, "--output", str(directory / "out.jsonl"),
        )  # fmt: skip
        assert code == 0 and summary["failed_draws"] == 3
        outputs.append([(directory / name).read_bytes() for name in ("out.jsonl", "out.run.json")])
    assert outputs[0] == outputs[1]
