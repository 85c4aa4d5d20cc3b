"""Unscorable rollouts under each policy, and concurrent one-completion calls coalesced into
pool batches.

``count-as-incorrect``: reward 0.0, the status kept, counted as ``unscorable`` by the recorder,
never admitted to the bank; ``raise`` and ``mask`` as before. The coalescer: verdicts equal
``grade()``'s, a burst costs few pool batches, a bad row fails only its own call.
"""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from modebench.api import Task, grade
from modebench.diagnostics import MAX_RESPONSE_CHARS
from modebench.rl import (
    BatchGrader,
    Completion,
    ModeBank,
    RewardInputError,
    RolloutRecorder,
    TRLReward,
    UnscorableCompletion,
    reward_of,
)
from modebench.rl.batch import UNSCORABLE_POLICIES
from modebench.rl.coalesce import Coalescer

HUGE = "\\boxed{" + "1" * (MAX_RESPONSE_CHARS + 10) + "}"


def rows(records, huge_for=0):
    """Every record's responses as completions, plus one over-long completion of ``records[huge_for]``."""
    out = [
        Completion(r["level"], r["domain"], r["answer"], text, r["id"])
        for r in records
        for text in r["responses"]
    ]
    r = records[huge_for]
    out.append(Completion(r["level"], r["domain"], r["answer"], HUGE, r["id"]))
    return out


def expected(completion):
    task = Task("t", completion.level, completion.domain, "p", completion.answer)
    return grade(task, completion.response)


def test_policies_are_checked():
    assert UNSCORABLE_POLICIES == ("raise", "mask", "count-as-incorrect")
    with pytest.raises(ValueError, match="unscorable must be one of raise, mask, count-as-incorrect"):
        BatchGrader(1, unscorable="zero")  # type: ignore[arg-type]


def test_count_as_incorrect_gives_zero_keeps_status_and_never_banks(records):
    batch = rows(records)
    assert expected(batch[-1])["status"] == "resource_limit"
    bank = ModeBank(capacity=8)
    recorder = RolloutRecorder(bank=bank)
    with BatchGrader(1, unscorable="count-as-incorrect") as grader:
        reward = TRLReward(grader, recorder=recorder)
        prompts = [f"prompt {c.prompt_id}" for c in batch]
        rewards = reward(
            prompts,
            [c.response for c in batch],
            answer=[c.answer for c in batch],
            level=[c.level for c in batch],
            domain=[c.domain for c in batch],
            prompt_id=[c.prompt_id for c in batch],
        )
        graded = reward.last
    assert rewards[-1] == 0.0 and graded[-1].status == "resource_limit" and not graded[-1].scorable
    assert rewards[:-1] == [1.0 if expected(c)["verified"] else 0.0 for c in batch[:-1]]
    assert reward_of(graded[-1], "count-as-incorrect") == 0.0 and reward_of(graded[-1]) is None
    step = recorder.flush(1)
    assert step is not None
    r = records[0]
    cell = f"modebench/level{r['level']}_{r['domain']}"
    assert step.metrics[f"{cell}/unscorable"] == 1.0 and step.metrics["modebench/all/unscorable"] == 1.0
    # The bank holds verified exemplars only: the over-long text is in no mode.
    assert all(item.text != HUGE for pid in bank.prompts for item in bank.exemplars(pid))
    assert len(bank) == len(
        {(c.prompt_id, expected(c)["canonical_key"]) for c in batch if expected(c)["verified"]}
    )


def test_raise_and_mask_stay(records):
    batch = rows(records[:1])
    with BatchGrader(1) as grader:
        with pytest.raises(UnscorableCompletion, match="count-as-incorrect"):
            grader.grade(batch)
        graded = grader.grade(batch, unscorable="mask")  # a per-call policy
    assert [reward_of(g, "mask") for g in graded][-1] is None
    with BatchGrader(1, unscorable="mask") as grader:
        reward = TRLReward(grader)
        out = reward(
            ["p"] * len(batch),
            [c.response for c in batch],
            answer=[c.answer for c in batch],
            level=[c.level for c in batch],
            domain=[c.domain for c in batch],
        )
    assert out[-1] is None and out[0] is not None


# -- coalescing ------------------------------------------------------------------------------------
def test_thread_burst_is_coalesced_and_equals_grade(records):
    batch = [c for c in rows(records) for _ in range(8)]
    with BatchGrader(1) as grader:
        coalescer = Coalescer(grader)
        gate = threading.Barrier(16)

        def one(completion):
            return coalescer.grade(completion)

        with ThreadPoolExecutor(16) as pool:
            list(pool.map(lambda _: gate.wait(), range(16)))  # all threads started
            results = list(pool.map(one, batch))
    assert [(r.status, r.verified, r.canonical_key) for r in results] == [
        (e["status"], e["verified"], e["canonical_key"]) for e in map(expected, batch)
    ]
    assert coalescer.graded == len(batch)
    assert coalescer.batches < len(batch)  # 16 callers at a time share batches


def test_async_burst_joins_few_batches(records):
    batch = [c for c in rows(records) for _ in range(64)]
    with BatchGrader(1) as grader:
        coalescer = Coalescer(grader)

        async def burst():
            return await asyncio.gather(*(coalescer.grade_async(c) for c in batch))

        results = asyncio.run(burst())
    assert [r.status for r in results] == [e["status"] for e in map(expected, batch)]
    assert coalescer.graded == len(batch) and coalescer.batches == 1  # all were queued before the first ran


def test_a_bad_row_fails_only_its_own_call(records):
    good = rows(records[:1])[:-1]
    r = records[0]
    bad = Completion(r["level"], "no_such_domain", r["answer"], "x", "bad")
    with BatchGrader(1) as grader:
        coalescer = Coalescer(grader)

        async def burst():
            return await asyncio.gather(
                *(coalescer.grade_async(c) for c in [*good, bad]), return_exceptions=True
            )

        results = asyncio.run(burst())
    assert isinstance(results[-1], RewardInputError)
    assert [r.status for r in results[:-1]] == [e["status"] for e in map(expected, good)]
