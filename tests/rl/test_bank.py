"""ModeBank rules: a function of the set of verified completions offered, never of their order or
batch split; capacity; verified only; state round trip; export readable by evaluate."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from modebench.rl.bank import BANK_SCHEMA, ModeBank, key_rank

STATUSES = ("correct", "incorrect", "malformed", "timeout", "worker_failure")

offers = st.lists(
    st.tuples(
        st.sampled_from(["p1", "p2", "p3"]),
        st.sampled_from([f"mode{i}" for i in range(7)]),
        st.text(alphabet="ab1+", min_size=0, max_size=5),
        st.sampled_from(STATUSES),
    ),
    max_size=60,
)


def offer_all(bank: ModeBank, items: list[tuple[str, str, str, str]]) -> None:
    for pid, key, text, status in items:
        bank.offer(
            pid,
            level=1,
            domain="countdown",
            answer={"ref": pid},
            reference_sha256="sha-" + pid,
            text=text,
            status=status,
            canonical_key=key if status == "correct" else None,
            prompt=[{"role": "user", "content": pid}],
        )


def offer_rows(bank: ModeBank, items: list[tuple[str, str, str, str]]) -> None:
    rows: list[dict[str, Any]] = [
        {
            "prompt_id": pid,
            "level": 1,
            "domain": "countdown",
            "answer": {"ref": pid},
            "reference_sha256": "sha-" + pid,
            "text": text,
            "status": status,
            "canonical_key": key if status == "correct" else None,
            "prompt": [{"role": "user", "content": pid}],
        }
        for pid, key, text, status in items
    ]
    bank.offer_graded(rows)


@settings(max_examples=150, deadline=None)
@given(offers, st.randoms(use_true_random=False), st.integers(1, 8), st.integers(1, 5))
def test_state_is_independent_of_order_and_batch_split(items, rnd, capacity, batches):
    one = ModeBank(capacity)
    offer_all(one, items)
    shuffled = list(items)
    rnd.shuffle(shuffled)
    cuts = sorted(rnd.randint(0, len(shuffled)) for _ in range(batches - 1))
    other = ModeBank(capacity)
    start = 0
    for cut in [*cuts, len(shuffled)]:
        offer_rows(other, shuffled[start:cut])  # the batched entry point, one batch at a time
        start = cut
    assert one.state_dict() == other.state_dict()
    assert one.replay(7) == other.replay(7)
    assert one.replay(3) == other.replay(3)


@settings(max_examples=150, deadline=None)
@given(offers, st.integers(1, 8))
def test_exemplar_is_shortest_then_lexicographic_and_only_verified(items, capacity):
    bank = ModeBank(capacity)
    offer_all(bank, items)
    verified: dict[tuple[str, str], list[str]] = {}
    for pid, key, text, status in items:
        if status == "correct":
            verified.setdefault((pid, key), []).append(text)
    for pid in ("p1", "p2", "p3"):
        kept = bank.modes(pid)
        assert len(kept) <= capacity
        offered = sorted({key for (p, key) in verified if p == pid}, key=key_rank)
        # The kept modes are the `capacity` smallest ranks among the verified modes offered.
        assert kept == offered[:capacity]
        for item in bank.exemplars(pid):
            texts = verified[(pid, item.canonical_key)]
            assert item.text == min(texts, key=lambda t: (len(t), t))
            assert item.count == len(texts)
            assert item.prompt == [{"role": "user", "content": pid}]


@settings(max_examples=100, deadline=None)
@given(offers, st.integers(1, 8), st.integers(0, 9), st.integers(1, 9))
def test_state_dict_round_trip_resumes_the_same_schedule(items, capacity, before, after):
    bank = ModeBank(capacity)
    offer_all(bank, items)
    bank.replay(before)
    state = json.loads(json.dumps(bank.state_dict()))  # what a checkpoint stores
    restored = ModeBank()
    restored.load_state_dict(state)
    assert restored.state_dict() == bank.state_dict()
    assert restored.replay(after) == bank.replay(after)
    assert restored.replay(after) == bank.replay(after)


def test_replay_cycles_through_every_entry_in_order():
    bank = ModeBank(4)
    offer_all(bank, [(p, f"mode{i}", "x", "correct") for p in ("p1", "p2") for i in range(3)])
    schedule = sorted((pid, key_rank(key), key) for pid in ("p1", "p2") for key in bank.modes(pid))
    served = [(item.prompt_id, item.canonical_key) for item in bank.replay(4) + bank.replay(4)]
    expected = [(pid, key) for pid, _, key in schedule]
    assert served == expected + expected[:2]
    assert bank.replay(0) == []
    assert ModeBank().replay(5) == []


def test_unverified_and_unscorable_are_never_admitted():
    bank = ModeBank()
    for status in (
        "incorrect",
        "malformed",
        "timeout",
        "resource_limit",
        "worker_failure",
        "invalid_reference",
    ):
        assert not bank.offer("p", level=1, domain="countdown", answer={}, reference_sha256="s", text="t",
                              status=status, canonical_key="k")  # fmt: skip
    assert not bank.offer("p", level=1, domain="countdown", answer={}, reference_sha256="s", text="t",
                          status="correct", canonical_key=None)  # fmt: skip
    assert len(bank) == 0 and bank.prompts == []


def test_a_prompt_id_is_bound_to_one_reference():
    bank = ModeBank()
    offer_all(bank, [("p1", "m", "t", "correct")])
    with pytest.raises(ValueError, match="another reference"):
        bank.offer("p1", level=1, domain="countdown", answer={}, reference_sha256="other", text="t",
                   status="correct", canonical_key="m")  # fmt: skip


def test_bad_state_and_capacity_are_refused():
    with pytest.raises(ValueError, match="capacity"):
        ModeBank(0)
    with pytest.raises(ValueError, match=BANK_SCHEMA):
        ModeBank().load_state_dict({"schema": "other"})
    bank = ModeBank(3)
    offer_all(bank, [("p1", f"m{i}", "t", "correct") for i in range(3)])
    state = bank.state_dict()
    state["capacity"] = 2
    with pytest.raises(ValueError, match="capacity"):
        ModeBank().load_state_dict(state)


def test_export_never_overwrites(tmp_path):
    bank = ModeBank()
    offer_all(bank, [("p1", "m", "t", "correct")])
    target = tmp_path / "bank.jsonl"
    assert bank.export_jsonl(target) == 1
    record = json.loads(target.read_text())
    assert record == {
        "id": "p1",
        "level": 1,
        "domain": "countdown",
        "answer": {"ref": "p1"},
        "responses": ["t"],
    }
    with pytest.raises(FileExistsError):
        bank.export_jsonl(target)


def test_random_streams_agree_with_a_reference_model():
    # A direct model of the rules, on a long random stream: kept = smallest ranks, exemplar = min.
    rnd = random.Random(7)
    items = [(f"p{rnd.randint(0, 4)}", f"k{rnd.randint(0, 30)}", "x" * rnd.randint(0, 4) + str(rnd.randint(0, 9)),
              "correct") for _ in range(2000)]  # fmt: skip
    bank = ModeBank(5)
    offer_all(bank, items)
    for pid in {p for p, *_ in items}:
        keys = sorted({k for p, k, *_ in items if p == pid}, key=key_rank)[:5]
        assert bank.modes(pid) == keys
