"""Property tests of ReMaxBank: Re:Max's admission, exemplar, capacity, count, freeze and schedule rules.

Each rule is checked against the Re:Max source it follows (liv-daliberti/remax):
``core/admission.py:score_and_update`` (admission ``active and reward > 0 and key``, fresh counts of
every mode, the exemplar ``min(candidates)`` of the discovering batch, ``for new_key in
sorted(new_keys): if len(prompt_exemplars) >= capacity: break``), ``core/scheduling.py:
scheduled_global_replay_groups`` (whole prompt groups, round-robin with an integer cursor) and
``core/bank_state.py`` (resume refuses another replay configuration).
"""

from __future__ import annotations

import gzip
import importlib.util
import json
import subprocess
import sys
from collections import Counter

import numpy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from modebench.rl import ModeBank, ReMaxBank

PIDS = ("p0", "p1", "p2")
KEYS = ("a", "b", "c", "d", "e")

row = st.fixed_dictionaries(
    {
        "prompt_id": st.sampled_from(PIDS),
        "canonical_key": st.one_of(st.sampled_from(KEYS), st.none(), st.just("")),
        "status": st.sampled_from(["correct"] * 5 + ["incorrect", "malformed", "timeout"]),
        "truncated": st.sampled_from([False] * 4 + [True, None]),
        "completion_ids": st.lists(st.integers(0, 5), min_size=0, max_size=3),
    }
)
batches = st.lists(st.lists(row, max_size=12), max_size=6)


def offer(bank: ReMaxBank, r: dict) -> bool:
    return bank.offer(
        r["prompt_id"], level=1, domain="countdown", answer={"target": 1}, reference_sha256="ref-" + r["prompt_id"],
        text="t" + ",".join(map(str, r["completion_ids"])), status=r["status"], canonical_key=r["canonical_key"],
        prompt=[{"role": "user", "content": r["prompt_id"]}], completion_ids=r["completion_ids"],
        truncated=r["truncated"],
    )  # fmt: skip


def admissible(r: dict) -> bool:
    return (
        r["truncated"] is False
        and r["status"] == "correct"
        and bool(r["canonical_key"])
        and bool(r["completion_ids"])
    )


def oracle(all_batches: list[list[dict]], capacity: int) -> tuple[dict, dict]:
    """Re:Max's rule written out directly: counts of every admitted mode; exemplars first come by
    batch, keys in sorted order inside a batch, the smallest token tuple of the discovering batch."""
    counts: dict[str, Counter[str]] = {}
    exemplars: dict[str, dict[str, tuple[int, ...]]] = {}
    for batch in all_batches:
        rows = [r for r in batch if admissible(r)]
        for pid in PIDS:
            mine = [r for r in rows if r["prompt_id"] == pid]
            before = set(counts.get(pid, {}))
            for r in mine:
                counts.setdefault(pid, Counter())[r["canonical_key"]] += 1
            banked = exemplars.setdefault(pid, {})
            for key in sorted({r["canonical_key"] for r in mine} - before):
                if len(banked) >= capacity:
                    break
                banked[key] = min(tuple(r["completion_ids"]) for r in mine if r["canonical_key"] == key)
    return counts, exemplars


@settings(max_examples=300, deadline=None)
@given(batches, st.integers(1, 4))
def test_admission_counts_exemplars_and_first_come_capacity_follow_remax(all_batches, capacity):
    bank = ReMaxBank(capacity)
    seen: dict[tuple[str, str], tuple[int, ...]] = {}
    for batch in all_batches:
        for r in batch:
            assert offer(bank, r) == admissible(r)  # only active, verified, keyed, with tokens
        bank.seal()
        # An exemplar never changes once set.
        for pid in PIDS:
            group = bank.group(pid)
            for key, ids in zip(group.keys, group.completion_ids) if group else ():
                assert seen.setdefault((pid, key), ids) == ids
    counts, exemplars = oracle(all_batches, capacity)
    # The running totals of diagnostics() are the totals counted over the whole state.
    diagnostics = bank.diagnostics()
    assert diagnostics["discovered_modes"] == sum(len(c) for c in counts.values())
    assert diagnostics["fresh_observations"] == sum(sum(c.values()) for c in counts.values())
    assert diagnostics["exemplars"] == sum(len(e) for e in exemplars.values())
    assert diagnostics["exemplar_tokens"] == sum(len(ids) for e in exemplars.values() for ids in e.values())
    assert diagnostics["banked_prompts"] == sum(1 for e in exemplars.values() if e)
    restored = ReMaxBank(capacity)
    restored.load_state(bank.state())
    assert restored.diagnostics() == diagnostics
    for pid in PIDS:
        assert bank.counts(pid) == dict(counts.get(pid, {}))  # every mode counted, banked or not
        group = bank.group(pid)
        got = {} if group is None else dict(zip(group.keys, group.completion_ids))
        assert got == exemplars.get(pid, {})
        assert len(got) <= capacity
        if group is not None:
            # each exemplar is the token ids and text of an admitted row of that prompt and mode
            for key, ids, text, count in zip(group.keys, group.completion_ids, group.texts, group.counts):
                assert any(admissible(r) and r["prompt_id"] == pid and r["canonical_key"] == key
                           and tuple(r["completion_ids"]) == ids for b in all_batches for r in b)  # fmt: skip
                assert text == "t" + ",".join(map(str, ids)) and count == counts[pid][key]


@settings(max_examples=150, deadline=None)
@given(batches, batches)
def test_a_frozen_bank_changes_neither_membership_nor_counts(first, later):
    bank = ReMaxBank(2)
    for batch in first:
        for r in batch:
            offer(bank, r)
    bank.freeze()
    before = bank.state()
    for batch in later:
        for r in batch:
            assert offer(bank, r) is False
    assert bank.state() == before and bank.diagnostics()["frozen"] == 1.0
    bank.thaw()
    assert bank.frozen is False


def filled(prompts: int, modes: int) -> ReMaxBank:
    bank = ReMaxBank(16)
    for p in range(prompts):
        for m in range(modes if p % 2 else 1 + (p % 3)):
            bank.offer(f"q{p}", level=1, domain="countdown", answer={}, reference_sha256="r", text=f"{p}-{m}",
                       status="correct", canonical_key=f"k{m}", prompt="x", completion_ids=[p, m],
                       truncated=False)  # fmt: skip
        bank.seal()
    return bank


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 30), st.integers(1, 5), st.integers(0, 40))
def test_the_schedule_visits_every_banked_prompt_group_once_per_cycle(prompts, modes, warmup):
    bank = filled(prompts, modes)
    for _ in range(warmup):  # start anywhere in the cycle
        bank.replay_groups()
    cycle = [bank.replay_groups() for _ in range(prompts)]
    assert all(len(step) == 1 for step in cycle)  # one group per step
    visited = [step[0].prompt_id for step in cycle]
    assert sorted(visited) == sorted(bank.prompts)  # every banked prompt once per cycle
    for step in cycle:  # a whole group: every banked mode of the prompt
        group = step[0]
        assert list(group.keys) == bank.modes(group.prompt_id)
        assert len(group.completion_ids) == len(group.keys) == len(group.texts)


def test_prompts_banked_during_a_cycle_join_it_and_several_groups_per_step():
    bank = filled(3, 2)
    assert [g.prompt_id for g in bank.replay_groups()] == ["q0"]
    bank.offer("q9", level=1, domain="countdown", answer={}, reference_sha256="r", text="n", status="correct",
               canonical_key="k", prompt="x", completion_ids=[1], truncated=False)  # fmt: skip
    assert [bank.replay_groups()[0].prompt_id for _ in range(4)] == ["q1", "q2", "q9", "q0"]
    two = ReMaxBank(4, groups_per_step=2)
    two.load_state(bank.state() | {"identity": two.identity()})
    assert [[g.prompt_id for g in two.replay_groups()] for _ in range(3)] == [
        ["q1", "q2"],
        ["q9", "q0"],
        ["q1", "q2"],
    ]
    assert ReMaxBank().replay_groups() == []


def test_the_exemplar_is_the_smallest_token_tuple_of_the_discovering_batch_only():
    bank = ReMaxBank(4)
    common = dict(level=1, domain="countdown", answer={}, reference_sha256="r", status="correct",
                  canonical_key="k", prompt="x", truncated=False)  # fmt: skip
    bank.offer("p", text="long", completion_ids=[5, 1, 1], **common)
    bank.offer("p", text="small", completion_ids=[2, 9], **common)
    assert bank.group("p").completion_ids == ((2, 9),)  # tuple order, not length
    bank.offer("p", text="smaller later", completion_ids=[0], **common)
    assert bank.group("p").completion_ids == ((2, 9),) and bank.group("p").texts == ("small",)
    assert bank.counts("p") == {"k": 3}


def test_state_saves_compactly_resumes_the_schedule_and_refuses_another_identity(tmp_path):
    bank = filled(12, 4)
    for _ in range(5):
        bank.replay_groups()
    path = tmp_path / "bank.json.gz"
    bank.save(path)
    assert not list(tmp_path.glob(".*tmp"))  # the temporary file is gone
    again = ReMaxBank(16)
    again.load(path)
    assert again.state() == bank.state() and again.cursor == bank.cursor
    assert [g for _ in range(14) for g in again.replay_groups()] == [
        g for _ in range(14) for g in bank.replay_groups()
    ]
    bank.save(path)
    first = path.read_bytes()
    bank.save(path)
    assert path.read_bytes() == first  # same state, same bytes
    with pytest.raises(ValueError, match="capacity"):
        ReMaxBank(8).load(path)
    with pytest.raises(ValueError, match="groups_per_step"):
        ReMaxBank(16, groups_per_step=2).load(path)
    broken = tmp_path / "broken.gz"
    broken.write_bytes(b"not gzip")
    with pytest.raises(ValueError, match="broken.gz: not a Re:Max bank state"):
        again.load(broken)
    wrong = tmp_path / "wrong.gz"
    state = json.loads(gzip.decompress(first))
    state["order"] = state["order"][1:]
    wrong.write_bytes(gzip.compress(json.dumps(state).encode()))
    with pytest.raises(ValueError, match="wrong.gz: the schedule order"):
        again.load(wrong)


def test_token_ids_are_stored_packed_and_the_file_is_smaller_than_the_json_of_modebank(tmp_path):
    remax, plain = ReMaxBank(16), ModeBank(16)
    for p in range(200):
        for m in range(8):
            fields = dict(level=1, domain="countdown", answer={"target": p}, reference_sha256=f"r{p}",
                          text=f"answer {p} {m} " * 3, status="correct", canonical_key=f"key-{p}-{m}", prompt="x")  # fmt: skip
            remax.offer(f"p{p}", completion_ids=list(range(1000 + m, 1040 + m)), truncated=False, **fields)
            plain.offer(f"p{p}", **fields)
    remax.save(tmp_path / "remax.gz")
    (tmp_path / "plain.json").write_text(json.dumps(plain.state_dict()))
    # The Re:Max bank holds 40 token ids per exemplar more than ModeBank, in less space.
    assert (tmp_path / "remax.gz").stat().st_size < (tmp_path / "plain.json").stat().st_size
    assert remax.group("p3").completion_ids[0] == tuple(range(1000, 1040))


def test_bad_offers_are_refused_clearly():
    bank = ReMaxBank(2)
    common = dict(
        level=1,
        domain="countdown",
        answer={},
        status="correct",
        canonical_key="k",
        prompt="x",
        truncated=False,
    )
    with pytest.raises(ValueError, match="completion token ids"):
        bank.offer("p", reference_sha256="r", text="t", completion_ids=[-1], **common)
    bank.offer("p", reference_sha256="r", text="t", completion_ids=[1], **common)
    with pytest.raises(ValueError, match="another reference"):
        bank.offer("p", reference_sha256="other", text="t", completion_ids=[1], **common)
    with pytest.raises(ValueError, match="capacity"):
        ReMaxBank(0)
    assert bank.offered == 3 and bank.admitted == 1
    # Integer arrays (a trainer's numpy or torch ids) are stored as Python ints.
    bank.offer("q", reference_sha256="r", text="t", completion_ids=numpy.array([7, 8]), **common)
    assert bank.group("q").completion_ids == ((7, 8),) and type(bank.group("q").completion_ids[0][0]) is int
    with pytest.raises(ValueError, match="got 1.5"):
        bank.offer("q", reference_sha256="r", text="t", completion_ids=[1.5], **common)


def test_the_bank_needs_no_trainer_and_the_replay_trainer_names_its_extra():
    script = (
        "import sys\n"
        'sys.modules["trl"] = None  # as if the rl extra were not installed\n'
        "import modebench.rl as rl\n"
        "assert rl.ReMaxBank(2).replay_groups() == []\n"
        "try:\n"
        "    rl.ReplayGRPOTrainer\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    # The hint names the first module of the extra that is missing: torch on a machine with only
    # Python (a newcomer's `make check`), trl where torch is installed (CI).
    missing = "trl" if importlib.util.find_spec("torch") is not None else "torch"
    assert done.stdout.strip() == (
        f"modebench.rl.ReplayGRPOTrainer needs the rl extra ({missing} is missing): pip install -e '.[rl]'"
    )
