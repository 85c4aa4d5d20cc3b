"""BatchGrader: the verdicts of grade(), on one persistent pool; duplicates graded once;
unscorable completions never become 0; bad rows named."""

from __future__ import annotations

import json

import pytest

from modebench.api import Task, grade
from modebench.diagnostics import MAX_RESPONSE_CHARS
from modebench.rl import (
    BatchGrader,
    Completion,
    NoveltyBonus,
    RewardInputError,
    TRLReward,
    UnscorableCompletion,
    completion_text,
    reward_of,
)


def batch_of(records, repeat=2):
    out = []
    for record in records:
        for text in record["responses"] * repeat:
            out.append(Completion(record["level"], record["domain"], record["answer"], text, record["id"]))
    return out


def test_verdicts_equal_grade_on_every_domain(grader, records):
    batch = batch_of(records)
    graded = grader.grade(batch)
    assert {result.domain for result in graded} == {r["domain"] for r in records}  # five domains
    for completion, result in zip(batch, graded):
        task = Task(
            id="t", level=completion.level, domain=completion.domain, problem="p", answer=completion.answer
        )
        expected = grade(task, completion.response)
        assert result.attempt == dict(expected)
        assert (result.status, result.verified, result.canonical_key) == (
            expected["status"], expected["verified"], expected["canonical_key"],
        )  # fmt: skip
    assert any(result.verified for result in graded) and not all(result.verified for result in graded)


def test_identical_pairs_are_graded_once_and_answers_may_be_json_text(grader, records):
    record = records[0]
    as_text = json.dumps(record["answer"])
    batch = [Completion(record["level"], record["domain"], answer, text, None)
             for answer in (record["answer"], as_text) for text in record["responses"] * 3]  # fmt: skip
    graded = grader.grade(batch)
    assert grader.last_items == len(batch)
    assert grader.last_distinct == len(set(record["responses"]))
    first = graded[: len(batch) // 2]
    second = graded[len(batch) // 2 :]
    assert [g.attempt for g in first] == [g.attempt for g in second]
    assert graded[0].attempt is not graded[len(record["responses"])].attempt  # each row owns its result


def test_the_pool_persists_across_batches(records):
    with BatchGrader(1) as pool:
        pool.grade(batch_of(records[:2], 1))
        workers = list(pool.pool._all)  # type: ignore[attr-defined]  # the ParallelGrader's workers
        starts = [worker.starts for worker in workers]
        for _ in range(3):
            pool.grade(batch_of(records, 1))
        assert [worker.starts for worker in pool.pool._all] == starts  # type: ignore[attr-defined]
    with pytest.raises(RuntimeError, match="closed"):
        pool.grade(batch_of(records[:1], 1))


def test_unscorable_raises_by_default_naming_the_row(records):
    record = records[0]
    huge = "\\boxed{" + "1" * (MAX_RESPONSE_CHARS + 10) + "}"
    batch = [Completion(record["level"], record["domain"], record["answer"], text, record["id"])
             for text in (record["responses"][0], huge)]  # fmt: skip
    expected = grade(Task("t", record["level"], record["domain"], "p", record["answer"]), huge)
    assert expected["status"] == "resource_limit"
    with BatchGrader(1) as pool:
        with pytest.raises(UnscorableCompletion) as caught:
            pool.grade(batch)
    assert caught.value.row == 1 and caught.value.prompt_id == record["id"]
    assert caught.value.status == "resource_limit"
    assert f"row 1, prompt {record['id']!r}" in str(caught.value)
    with BatchGrader(1, unscorable="mask") as pool:
        graded = pool.grade(batch)
    assert graded[1].status == "resource_limit" and not graded[1].scorable
    assert [reward_of(g) for g in graded] == [1.0, None]


def test_bad_rows_are_named(grader, records):
    record = records[0]
    good = Completion(record["level"], record["domain"], record["answer"], "x", "ok")
    for bad, message in (
        (Completion(9, record["domain"], record["answer"], "x", "p9"), "row 1, prompt 'p9': level must be"),
        (
            Completion(1, "chess", record["answer"], "x", "p9"),
            "row 1, prompt 'p9': unsupported ModeBench domain",
        ),
        (Completion(1, record["domain"], "{not json", "x", "p9"), "row 1, prompt 'p9': answer is not JSON"),
        (Completion(1, record["domain"], {"verifier": "countdown"}, "x", None), "row 1: invalid reference"),
    ):
        with pytest.raises(RewardInputError, match=message.replace("(", r"\(")):
            grader.grade([good, bad])
    with pytest.raises(ValueError, match="unscorable must be"):
        BatchGrader(1, unscorable="zero")  # type: ignore[arg-type]


def test_completion_text_reads_plain_and_conversational_completions():
    assert completion_text("a") == "a"
    assert completion_text([{"role": "assistant", "content": "b"}]) == "b"
    parts = [{"role": "assistant", "content": [{"type": "text", "text": "c"}, {"type": "text", "text": "d"}]}]
    assert completion_text(parts) == "cd"
    with pytest.raises(RewardInputError, match="row 4"):
        completion_text([{"role": "user", "content": "e"}], 4)


def test_trl_reward_reads_columns_and_shaping_never_changes_the_verdict(grader, records):
    rows = [(r, text) for r in records for text in r["responses"]]
    kwargs = {
        "answer": [json.dumps(r["answer"]) for r, _ in rows],
        "level": [r["level"] for r, _ in rows],
        "domain": [r["domain"] for r, _ in rows],
        "prompt_id": [r["id"] for r, _ in rows],
        "trainer_state": None,
    }
    completions = [[{"role": "assistant", "content": text}] for _, text in rows]
    plain = TRLReward(grader)
    rewards = plain(prompts=["p"] * len(rows), completions=completions, completion_ids=None, **kwargs)
    expected = [1.0 if grade(Task("t", r["level"], r["domain"], "p", r["answer"]), text)["verified"] else 0.0
                for r, text in rows]  # fmt: skip
    assert rewards == expected
    shaped = TRLReward(grader, shaping=NoveltyBonus(0.5, "group"))
    bonus = shaped(prompts=["p"] * len(rows), completions=completions, **kwargs)
    assert [g.attempt for g in shaped.last] == [g.attempt for g in plain.last]  # verdicts unchanged
    seen = set()
    for reward, base, result in zip(bonus, rewards, shaped.last):
        key = (result.prompt_id, result.canonical_key)
        new = result.verified and key not in seen
        seen.add(key)
        assert reward == (base + 0.5 if new else base)
    with pytest.raises(KeyError, match="no 'answer' column"):
        plain(prompts=["p"], completions=["x"], level=[1], domain=["countdown"])


def test_rows_naming_a_reference_by_object_or_by_text_get_its_verdicts(grader, records):
    """A batch looks each reference up once however its rows name it: one shared answer object,
    equal copies, its JSON text, a level given as text. A copy changed between two batches is
    graded as changed (the name of an answer object lives for one batch only)."""
    record = next(r for r in records if r["domain"] == "countdown")
    shared = dict(record["answer"])
    names = [shared, shared, dict(shared), json.dumps(shared)]
    batch = [Completion(level, record["domain"], answer, text, record["id"])
             for level in (record["level"], str(record["level"])) for answer in names
             for text in record["responses"]]  # fmt: skip
    graded = grader.grade(batch)
    assert grader.last_distinct == len(set(record["responses"]))  # one reference, sent once
    task = Task("t", record["level"], record["domain"], "p", record["answer"])
    assert [g.attempt for g in graded] == [dict(grade(task, c.response)) for c in batch]
    assert len({g.reference_sha256 for g in graded}) == 1
    changed = dict(shared, target=shared["target"] + 1)
    shared.update(changed)  # the object the first batch graded, now another task
    again = grader.grade(
        [Completion(record["level"], record["domain"], shared, t, None) for t in record["responses"]]
    )
    other = Task("t", record["level"], record["domain"], "p", changed)
    assert [g.attempt for g in again] == [dict(grade(other, t)) for t in record["responses"]]
    assert again[0].reference_sha256 != graded[0].reference_sha256


def test_graded_rows_are_built_as_the_dataclass_builds_them(grader, records):
    import dataclasses

    from modebench.rl.batch import Graded

    graded = grader.grade(batch_of(records[:2], 1))
    for result in graded:
        fields = {field.name: getattr(result, field.name) for field in dataclasses.fields(Graded)}
        twin = Graded(**fields)
        assert vars(result) == vars(twin)  # every field, nothing more
        assert result == twin and repr(result) == repr(twin) and hash(result) == hash(twin)
