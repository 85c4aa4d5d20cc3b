"""Unscorable attempts: evaluate says which and why on stderr, report finds the detail in the
journal, and the opt-in count-as-incorrect policy is recorded so it cannot pass for 0.4.0's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from modebench import api
from modebench.cli import main
from modebench.evaluation import SCORING_POLICY
from modebench.failures import policy
from modebench.failures.explain import explain
from modebench.reporting import FAILED_HEADLINE, read_report
from modebench.validation import InputError, OptionError

COUNTDOWN = {"verifier": "countdown", "numbers": [1, 2, 3], "target": 6}
LONG = "x" * 131_073  # one character over the response limit


def _record(ident: str, responses: list[str]) -> dict[str, Any]:
    return {"id": ident, "level": 1, "domain": "countdown", "answer": COUNTDOWN, "responses": responses}


def _input(path: Path, long_prompts: int = 1) -> Path:
    """A blank first line (so line numbers and record numbers differ), then prompts p0, p1, …;
    p1, p2, … carry one over-long response at responses[2]."""
    records = [_record("p0", ["1+2+3", "1*2*3", "bad"])]
    records += [_record(f"p{i}", ["1+2+3", "bad", LONG]) for i in range(1, long_prompts + 1)]
    path.write_text("\n" + "\n".join(json.dumps(r) for r in records) + "\n")
    return path


def test_evaluate_names_the_unscorable_attempts_on_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = _input(tmp_path / "in.jsonl")
    out = tmp_path / "out.json"
    assert main(["evaluate", str(source), "--output", str(out), "--progress-every", "0"]) == 3
    captured = capsys.readouterr()
    summary = json.loads(captured.out)  # stdout keeps exactly the contractual summary line
    assert summary["status"] == "failed" and len(captured.out.splitlines()) == 1
    err = captured.err
    assert "1 response could not be scored (resource_limit 1)" in err
    assert "line 3, prompt 'p1', responses[2]: resource_limit: response character limit exceeded" in err
    assert "--unscorable count-as-incorrect" in err and "131,072 characters" in err
    assert str(tmp_path / "out.json.work" / "results.jsonl") in err


def test_the_listing_is_capped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = _input(tmp_path / "in.jsonl", long_prompts=12)
    assert main(["evaluate", str(source), "--output", str(tmp_path / "o.json"), "--progress-every", "0"]) == 3
    err = capsys.readouterr().err
    assert err.count("responses[2]: resource_limit") == 10
    assert "… and 2 more, all in the result journal" in err


def test_the_default_receipt_is_the_0_4_0_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = _input(tmp_path / "in.jsonl")
    out = tmp_path / "out.json"
    main(["evaluate", str(source), "--output", str(out), "--progress-every", "0"])
    evaluation = json.loads(out.read_text())["evaluation"]
    assert evaluation["scoring_policy"] == SCORING_POLICY
    assert "unscorable" not in evaluation and "counted_as_incorrect" not in evaluation
    journal = (tmp_path / "out.json.work" / "results.jsonl").read_text()
    assert '"status":"resource_limit"' in journal and policy.ORIGINAL_STATUS not in journal


def test_report_of_a_failed_receipt_shows_the_journal_detail(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = _input(tmp_path / "in.jsonl")
    out = tmp_path / "out.json"
    main(["evaluate", str(source), "--output", str(out), "--progress-every", "0"])
    capsys.readouterr()
    assert main(["report", str(out)]) == 3
    captured = capsys.readouterr()
    # stdout: the two contractual lines, byte for byte; the detail goes to stderr.
    assert captured.out == FAILED_HEADLINE + "\n" + '{"correct": 3, "malformed": 2, "resource_limit": 1}\n'
    assert (
        "record 2, prompt 'p1', responses[2]: resource_limit: response character limit exceeded"
        in captured.err
    )
    assert "record N: the N-th non-blank line" in captured.err
    assert "results.jsonl" in captured.err


def test_without_its_journal_the_explanation_says_where_the_detail_lives(tmp_path: Path) -> None:
    source = _input(tmp_path / "in.jsonl")
    out = tmp_path / "out.json"
    main(["evaluate", str(source), "--output", str(out), "--progress-every", "0"])
    journal = tmp_path / "out.json.work" / "results.jsonl"
    journal.rename(tmp_path / "elsewhere.jsonl")
    found = explain(out)
    assert found.attempts == () and found.counts == {"resource_limit": 1}
    assert found.unavailable is not None and str(journal) in found.unavailable
    assert "which is not there" in found.text() and "prompt_results.path" in found.text()


def test_count_as_incorrect_is_opt_in_and_recorded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = _input(tmp_path / "in.jsonl")
    out = tmp_path / "out.json"
    argv = ["evaluate", str(source), "--output", str(out), "--progress-every", "0"]
    assert main([*argv, "--unscorable", "count-as-incorrect"]) == 0
    err = capsys.readouterr().err
    assert "1 response could not be scored and was counted as incorrect (resource_limit 1)" in err
    payload = read_report(out)  # the journal, the counts and the identity all verify
    evaluation = payload["evaluation"]
    assert evaluation["status"] == "completed"
    assert evaluation["unscorable"] == "count-as-incorrect"
    assert evaluation["counted_as_incorrect"] == {"resource_limit": 1}
    assert evaluation["scoring_policy"] != SCORING_POLICY
    assert evaluation["status_counts"] == {"correct": 3, "incorrect": 1, "malformed": 2}
    assert payload["cells"][0]["accuracy"] == pytest.approx(0.5)
    assert main(["report", str(out)]) == 0
    text = capsys.readouterr().out
    assert "Unscorable policy count-as-incorrect: 1 unscorable response was scored as incorrect" in text


def test_a_receipt_cannot_drop_its_policy(tmp_path: Path) -> None:
    source = _input(tmp_path / "in.jsonl")
    out = tmp_path / "out.json"
    main(
        [
            "evaluate",
            str(source),
            "--output",
            str(out),
            "--progress-every",
            "0",
            "--unscorable",
            "count-as-incorrect",
        ]
    )
    payload = json.loads(out.read_text())
    for key in ("unscorable", "counted_as_incorrect"):
        del payload["evaluation"][key]
    payload["evaluation"]["scoring_policy"] = SCORING_POLICY
    out.write_text(json.dumps(payload))
    with pytest.raises(InputError, match="counts unscorable attempts as incorrect"):
        read_report(out)


def test_the_api_takes_the_policy_and_returns_the_explanation(tmp_path: Path) -> None:
    source = _input(tmp_path / "in.jsonl")
    chosen = api.EvaluationOptions(unscorable="count-as-incorrect")
    receipt = api.evaluate_file(source, tmp_path / "out.json", options=chosen)
    assert receipt.status == "completed" and receipt.unscorable is not None
    (attempt,) = receipt.unscorable.attempts
    assert (attempt.prompt_id, attempt.line, attempt.draw, attempt.status, attempt.counted) == (
        "p1",
        3,
        2,
        "resource_limit",
        True,
    )
    failed = api.evaluate_file(source, tmp_path / "failed.json")
    assert failed.status == "failed" and failed.unscorable is not None
    assert 'unscorable="count-as-incorrect"' in failed.unscorable.text()  # library words, no flag
    with pytest.raises(OptionError, match="unscorable must be one of fail-run, count-as-incorrect"):
        api.evaluate_file(source, tmp_path / "x.json", options=api.EvaluationOptions(unscorable="ignore"))
    assert not (tmp_path / "x.json.work").exists()


def test_evaluator_failures_are_never_counted() -> None:
    crash = {
        "status": "worker_failure",
        "verified": False,
        "canonical_key": None,
        "graded_text": "",
        "detail": "x",
    }
    slow = {**crash, "status": "timeout"}
    assert policy.apply(policy.COUNT_AS_INCORRECT, [crash]) == [crash]
    (counted,) = policy.apply(policy.COUNT_AS_INCORRECT, [slow])
    assert counted["status"] == "incorrect" and counted[policy.ORIGINAL_STATUS] == "timeout"
    assert policy.apply(policy.FAIL_RUN, [slow]) == [slow]


def test_report_without_the_journal_says_where_it_should_be(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = _input(tmp_path / "in.jsonl")
    main(["evaluate", str(source), "--output", str(tmp_path / "out.json"), "--progress-every", "0"])
    (tmp_path / "moved").mkdir()
    (tmp_path / "moved" / "out.json").write_bytes((tmp_path / "out.json").read_bytes())
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_info:
        main(["report", str(tmp_path / "moved" / "out.json")])
    assert exit_info.value.code == 2
    lines = capsys.readouterr().err.splitlines()
    assert lines[0].startswith("modebench: error: [Errno 2] No such file or directory")  # 0.4.0's error
    assert lines[1] == (
        "modebench: hint: the receipt names its result journal 'out.json.work/results.jsonl' relative to "
        "its own directory; it holds every attempt's status and detail, so keep or copy it beside the receipt; "
        "or give where it is now with --journal PATH"
    )


def test_a_failed_shard_finishes_and_shards_keep_the_default_policy(tmp_path: Path) -> None:
    source = _input(tmp_path / "in.jsonl")
    shard = api.evaluate_file(source, tmp_path / "s2.json", shard="2/2")  # holds p1's long response
    assert shard.status == "failed" and shard.unscorable is None  # explained once merged
    counted = api.EvaluationOptions(unscorable="count-as-incorrect")
    with pytest.raises(OptionError, match="unscorable policy of a sharded run"):
        api.evaluate_file(source, tmp_path / "s1.json", options=counted, shard="1/2")


def test_a_selection_of_prompts_is_located_by_its_own_records(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = _input(tmp_path / "in.jsonl", long_prompts=2)  # p1 on line 3, p2 on line 4
    (tmp_path / "pick.ids").write_text("p2\n")
    out = tmp_path / "out.json"
    argv = [
        "evaluate",
        str(source),
        "--output",
        str(out),
        "--progress-every",
        "0",
        "--ids",
        str(tmp_path / "pick.ids"),
    ]
    assert main(argv) == 3
    assert "line 4, prompt 'p2', responses[2]: resource_limit" in capsys.readouterr().err
    assert main(["report", str(out)]) == 3
    err = capsys.readouterr().err
    assert "record 1, prompt 'p2', responses[2]" in err and "the N-th selected record" in err
