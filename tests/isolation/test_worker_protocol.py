"""The parent–worker wire format, buffered replies and the worker's deadline handler."""

from __future__ import annotations

import json
import os
import signal
import time
from typing import Any

import pytest

from modebench import verifier_worker
from modebench.diagnostics import result
from modebench.domains import plugin
from modebench.domains._pipeline import ReferenceCache, encode_answer, grade_in_process
from modebench.isolation.protocol import decode_line, groups_request, item_line, item_reply, reply_line
from modebench.verifier_worker import FAULT_ENV, FAULT_TEXT
from modebench.worker_process import BoundedWorker
from tests.samples import all_domains, sample_row

DOMAINS = all_domains()

REPLIES = [
    (result("correct", key="k|é\u2028", text="the text"), "the text"),
    (result("correct", key="python_factors:x", text="lambda n: n", outputs=[1, 2, 3]), "lambda n: n"),
    (result("malformed", text='x"y\\', detail="d\n"), "something else"),
    (result("incorrect", text="", detail="no"), ""),
    (result("timeout", detail="worker execution deadline exceeded"), None),
    (result("invalid_reference", text="t", detail="bad"), 7),
]


@pytest.mark.parametrize(("reply", "sent"), REPLIES)
def test_item_replies_round_trip_in_contract_order(reply: dict[str, Any], sent: Any) -> None:
    line = item_line(reply, sent)
    assert line.endswith(b"\n") and line.count(b"\n") == 1 and line.isascii()
    back = item_reply(decode_line(line), sent)
    assert back == reply and list(back) == list(reply)


def test_the_graded_text_is_left_out_only_when_it_is_the_text_sent() -> None:
    long_text = "\\boxed{1+2}" * 1000
    assert long_text.encode() not in item_line(result("correct", key="k", text=long_text), long_text)
    assert b'"other"' in item_line(result("correct", key="k", text="other"), long_text)


def test_the_common_reply_is_spelled_exactly_as_the_json_encoder_would() -> None:
    for reply, sent in REPLIES:
        if len(reply) == 5:
            shown = None if sent and reply["graded_text"] == sent else reply["graded_text"]
            fields = [reply["status"], reply["canonical_key"], shown, reply["detail"]]
            assert item_line(reply, sent) == (json.dumps(fields) + "\n").encode()


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ("correct", "invalid worker item reply"),
        (["correct", "k", None], "invalid worker item reply"),
        (["correct", "k", None, None, {}, 1], "invalid worker item reply"),
        (["nonsense", None, "", None], "invalid worker status"),
        (["correct", None, "", None], "missing worker canonical key"),
        (["incorrect", "k", "", None], "unexpected worker canonical key"),
        (["incorrect", None, 3, None], "invalid worker graded text"),
        (["incorrect", None, None, None], "invalid worker graded text"),
        (["incorrect", None, "", 5], "invalid worker detail"),
        (["correct", "k", "", None, {"status": "x"}], "invalid worker extra members"),
        (["correct", "k", "", None, {}], "invalid worker extra members"),
        (["correct", "k", "", None, [1]], "invalid worker extra members"),
    ],
)
def test_malformed_item_replies_are_rejected(fields: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        item_reply(fields, None)  # nothing was sent that a null graded text could stand for


def test_a_whole_request_failure_object_is_accepted_in_a_groups_exchange() -> None:
    failure = result("resource_limit", detail="request byte limit exceeded")
    assert item_reply(decode_line(reply_line(failure)), "text") == failure


def test_groups_request_is_json_with_the_answers_still_encoded() -> None:
    answer = {"verifier": "x", "nested": [1.5, "é"]}
    line = groups_request([(1, "countdown", encode_answer(answer), ["a", "b"])], strict=True)
    request = json.loads(line)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert request["operation"] == "groups" and request["flush"] == "each"
    assert json.loads(request["groups"][0]["answer_json"]) == answer
    assert "flush" not in json.loads(groups_request([(1, "countdown", "{}", [])]))
    with pytest.raises(ValueError):
        groups_request([(float("nan"), "countdown", "{}", [])])


def test_an_encoded_answer_finds_the_entry_its_decoded_twin_made() -> None:
    cache = ReferenceCache()
    found = plugin("countdown")
    answer = sample_row("countdown")["answer"]
    first = cache.get(1, found, answer)
    assert cache.get_encoded(1, found, encode_answer(answer)) is first
    fresh = ReferenceCache().get_encoded(1, found, encode_answer(answer))
    assert fresh[0] == first[0] and fresh[1] == first[1]


def test_a_stale_alarm_is_ignored_and_a_due_one_raises() -> None:
    previous = signal.signal(signal.SIGALRM, signal.SIG_IGN)
    try:
        verifier_worker._armed = True
        verifier_worker._expires = time.monotonic() + 5.0
        verifier_worker._on_alarm(signal.SIGALRM, None)  # an earlier item's expiry: ignored
        assert 4.0 < signal.getitimer(signal.ITIMER_REAL)[0] <= 5.0  # the item's window stays armed
        verifier_worker._expires = time.monotonic() - 0.01
        with pytest.raises(verifier_worker.Deadline):
            verifier_worker._on_alarm(signal.SIGALRM, None)
        verifier_worker._armed = False
        verifier_worker._on_alarm(signal.SIGALRM, None)  # between items: ignored
    finally:
        verifier_worker._armed = False
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _worker(fault: str | None, timeout: float = 5.0) -> BoundedWorker:
    env = {name: value for name, value in os.environ.items() if name != FAULT_ENV}
    if fault:
        env[FAULT_ENV] = fault
    return BoundedWorker(timeout_seconds=timeout, env=env)


def _expected(domain: str, texts: list[str]) -> list[dict[str, Any]]:
    return [grade_in_process(1, domain, sample_row(domain), text) for text in texts]


@pytest.mark.parametrize(
    ("fault", "status", "detail"),
    [
        ("exit", "worker_failure", "OSError: worker closed stdout"),
        ("hang", "timeout", "parent request deadline exceeded"),
    ],
)
def test_a_failure_hidden_by_buffered_replies_lands_on_its_own_item(
    fault: str, status: str, detail: str
) -> None:
    """Replies before the fault are still in the dead worker's buffer; the resend must place
    the failure on the faulty item, grade the others normally, and lose nothing."""
    domain = "countdown"
    texts = [f"\\boxed{{{n}}}" for n in range(5)] + [FAULT_TEXT] + [f"\\boxed{{{n}}}" for n in range(5, 9)]
    answer_json = encode_answer(sample_row(domain)["answer"])
    with _worker(fault, timeout=1.0) as worker:
        started = time.monotonic()
        [got] = worker.grade_groups([(1, domain, answer_json, texts)])
        # Behaviour: three starts and the statuses below. The bound only catches a stuck resend
        # (generous: worker start-ups are slow on a busy machine).
        assert time.monotonic() - started < 60.0
        assert worker.starts == 3  # buffered try, flushed resend that fails on item 5, the rest
    assert len(got) == len(texts)
    assert got[5]["status"] == status and got[5]["detail"] == detail
    normal = [index for index in range(len(texts)) if index != 5]
    want = _expected(domain, [texts[index] for index in normal])
    assert [got[index] for index in normal] == want


@pytest.mark.parametrize("domain", DOMAINS)
def test_buffered_groups_equal_in_process_grading(domain: str) -> None:
    row = sample_row(domain)
    texts = ["", "not a solution", "\\boxed{}", "x" * 5000] + [f"answer {n}" for n in range(40)]
    with _worker(None) as worker:
        [got] = worker.grade_groups([(1, domain, encode_answer(row["answer"]), texts)])
    assert got == _expected(domain, texts)


def test_each_text_of_a_group_has_its_own_window_without_a_timer_per_text(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``_item_guard`` leaves the interval timer of an earlier text running (``_on_alarm`` then
    carries it over): every text still gets its whole window, and a text that runs past its own
    window is a timeout, however long the texts before it took."""
    set_timer = signal.setitimer
    calls: list[float] = []

    def counting(which: int, seconds: float, interval: float = 0.0) -> tuple[float, float]:
        calls.append(seconds)
        return set_timer(which, seconds, interval)

    def grade(text: str) -> dict[str, Any]:
        if text == "spin":
            while True:
                pass
        if text == "sleep":
            time.sleep(0.6)  # over half the window: the first text's timer fires inside the next
        return result("incorrect", text=text, detail="no")

    monkeypatch.setattr(verifier_worker.signal, "setitimer", counting)
    previous = signal.signal(signal.SIGALRM, verifier_worker._on_alarm)
    try:
        quick = verifier_worker._item_guard(1.0, grade)
        assert [quick(f"text {n}")["status"] for n in range(50)] == ["incorrect"] * 50
        assert len(calls) < 50  # not a timer per text (one, unless the machine stalled a second)
        guarded = verifier_worker._item_guard(1.0, grade)
        replies, spans = [], []
        for text in ("sleep", "sleep", "spin"):
            started = time.monotonic()
            replies.append(guarded(text))
            spans.append(time.monotonic() - started)
    finally:
        set_timer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        verifier_worker._armed = False
    assert [reply["status"] for reply in replies[:2]] == ["incorrect", "incorrect"]
    assert replies[2] == result("timeout", detail="worker execution deadline exceeded")
    assert spans[2] >= 0.99  # its own whole window, not what was left of the first text's
