"""A real two-rank GRPO run on CPU: ``torchrun --nproc_per_node 2`` (gloo) of ``trl.GRPOTrainer``.

TRL's ``RepeatSampler`` lays a generation batch out as each prompt repeated ``num_generations``
times, and accelerate hands each rank ``per_device_train_batch_size`` consecutive rows
(``trl/trainer/grpo_trainer.py``: ``_get_train_sampler``). With 6 rows per rank and 4 completions
per prompt, a step's 3 prompts are laid out ``AAAABB | BBCCCC``: prompt B's group is split over
the two ranks. Each rank records what TRL passed to the reward function and what it returned;
this test puts the ranks' shares back together and checks, step by step, that

* the logged ``distinct_at_k``, ``pass_at_k``, ``accuracy`` and ``new_modes`` (on both ranks)
  equal the values computed here from *all* ranks' completions graded with ``grade()``;
* both ranks' banks are identical after every step, and equal to one bank offered every
  rank's verified completions;
* the group-scoped novelty bonus each rank returned equals the one-process value on the whole
  batch (the split group is paid once per mode, not once per rank);
* the receipts the main process wrote cover every rank's completions.

Needs the ``rl`` extra; with ``CI=true`` a missing package fails instead of skipping.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from modebench.api import Task, grade, read_report
from modebench.rl import ModeBank, NoveltyBonus, RolloutRecorder, reward_of
from modebench.rl.batch import BatchGrader, Completion

if os.environ.get("CI") == "true":
    import torch  # noqa: F401  # in CI a missing rl package is a failure, never a skip
    import trl  # noqa: F401
else:
    pytest.importorskip(
        "trl", reason="needs the rl extra: pip install torch==2.13.0 && pip install -e '.[rl]'"
    )

HARNESS = Path(__file__).with_name("grpo_harness.py")
ROOT = Path(__file__).resolve().parents[2]


def _grade_row(call: dict[str, Any], row: int) -> dict[str, Any]:
    task = Task("t", call["level"][row], call["domain"][row], "p", json.loads(call["answer"][row]))
    return dict(grade(task, call["texts"][row]))


def _two_ranks(out: Path, *arguments: str) -> list[dict[str, Any]]:
    """Run the harness on two gloo ranks; each rank's ``rank-<r>.json``."""
    torchrun = shutil.which("torchrun", path=str(Path(sys.executable).parent))
    assert torchrun is not None, "torchrun comes with torch"
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT / "src"),
        "OMP_NUM_THREADS": "1",
        "CUDA_VISIBLE_DEVICES": "",
    }
    with socket.socket() as probe:  # a free port for the rendezvous (port 0 hangs the workers)
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [torchrun, "--nproc_per_node", "2", "--master_addr", "127.0.0.1", "--master_port", str(port),
               str(HARNESS), str(out), *arguments]  # fmt: skip
    done = subprocess.run(command, env=env, cwd=out, capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-8000:]
    return [json.loads((out / f"rank-{rank}.json").read_text(encoding="utf-8")) for rank in (0, 1)]


@pytest.fixture(scope="module")
def ranks(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    return _two_ranks(tmp_path_factory.mktemp("two-ranks"))


def _steps(ranks: list[dict[str, Any]]) -> dict[int, list[tuple[dict[str, Any], int]]]:
    """Per step, every rank's reward-call rows in rank order: (call, row)."""
    out: dict[int, list[tuple[dict[str, Any], int]]] = defaultdict(list)
    for rank in ranks:
        for call in rank["calls"]:
            assert not call["evaluating"]
            out[call["step"] + 1].extend((call, row) for row in range(len(call["texts"])))
    return dict(out)


@pytest.mark.slow  # two torchrun processes importing torch and TRL
def test_groups_split_over_two_ranks_are_whole(ranks):
    by_step = _steps(ranks)
    assert sorted(by_step) == [1, 2, 3]
    split = 0
    seen: dict[str, set[str]] = defaultdict(set)
    combined = ModeBank(capacity=4)
    for step, rows in sorted(by_step.items()):
        # The layout TRL gives: 12 completions, 3 prompts of 4, one prompt on both ranks.
        assert len(rows) == 12
        owners: dict[str, set[int]] = defaultdict(set)
        for rank in ranks:
            for call in rank["calls"]:
                if call["step"] + 1 == step:
                    for pid in call["prompt_id"]:
                        owners[pid].add(rank["rank"])
        split += sum(1 for ranks_of in owners.values() if len(ranks_of) == 2)

        # Metrics recomputed from all ranks' completions graded one by one with grade().
        groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for call, row in rows:
            result = _grade_row(call, row)
            groups[call["prompt_id"][row]].append(result)
            combined.offer(
                call["prompt_id"][row], level=call["level"][row], domain=call["domain"][row],
                answer=json.loads(call["answer"][row]), reference_sha256=_sha(call["answer"][row]),
                text=call["texts"][row], status=result["status"], canonical_key=result["canonical_key"],
            )  # fmt: skip
        pass_at_k, distinct, accuracy, new = [], [], [], []
        for pid, results in groups.items():
            keys = {r["canonical_key"] for r in results if r["verified"]}
            pass_at_k.append(1.0 if keys else 0.0)
            distinct.append(float(len(keys)))
            accuracy.append(sum(r["verified"] for r in results) / len(results))
            new.append(float(len(keys - seen[pid])))
            seen[pid] |= keys
        expected = {
            "pass_at_k": sum(pass_at_k) / len(groups),
            "distinct_at_k": sum(distinct) / len(groups),
            "accuracy": sum(accuracy) / len(groups),
            "new_modes": sum(new) / len(groups),
            "prompts": float(len(groups)),
            "completions": 12.0,
        }
        for rank in ranks:
            logged = next(
                entry for entry in rank["log_history"] if entry.get("step") == step and "loss" in entry
            )
            for name, value in expected.items():
                assert logged[f"modebench/all/{name}"] == pytest.approx(value), (rank["rank"], step, name)

        # Both ranks' banks are identical after the step, and hold every rank's verified modes.
        bank0 = next(item["bank"] for item in ranks[0]["banks"] if item["step"] == step)
        bank1 = next(item["bank"] for item in ranks[1]["banks"] if item["step"] == step)
        assert bank0 == bank1
        assert _modes(bank0) == _modes(combined.state_dict())
    assert split >= 3  # one split group per step, as the layout promises
    assert ranks[0]["recorder"] == {**ranks[1]["recorder"], "steps": ranks[0]["recorder"]["steps"]}
    assert [s["metrics"] for s in ranks[0]["steps"]] == [s["metrics"] for s in ranks[1]["steps"]]


@pytest.mark.slow
def test_group_novelty_bonus_of_a_split_group_equals_the_one_process_value(ranks):
    by_step = _steps(ranks)
    paid = 0
    with BatchGrader(1) as grader:
        for rows in by_step.values():
            batch = [
                Completion(call["level"][row], call["domain"][row], call["answer"][row], call["texts"][row],
                           call["prompt_id"][row])
                for call, row in rows
            ]  # fmt: skip
            graded = grader.grade(batch)
            alone = NoveltyBonus(bonus=0.5, scope="group").apply(
                [reward_of(g) for g in graded], graded, [c.prompt_id or "" for c in batch]
            )
            returned = [call["rewards"][row] for call, row in rows]
            assert returned == pytest.approx(alone)
            paid += sum(1 for value, g in zip(alone, graded) if g.verified and value == 1.5)
    assert paid > 0  # the bonus was exercised


@pytest.mark.slow
def test_main_process_receipts_cover_every_rank(ranks):
    by_step = _steps(ranks)
    receipts = [Path(path) for path in ranks[0]["receipts"]]
    assert all(path.is_file() for path in receipts) and len(receipts) == 3
    assert ranks[1]["receipts"] == [None, None, None]  # only the main process writes
    for step, receipt in zip(sorted(by_step), receipts):
        lines = [json.loads(line) for line in receipt.with_suffix(".jsonl").read_text().splitlines()]
        written = sorted((line["id"], text) for line in lines for text in line["responses"])
        assert written == sorted((call["prompt_id"][row], call["texts"][row]) for call, row in by_step[step])
        assert read_report(receipt).status == "completed"


@pytest.mark.slow
def test_truncation_follows_trl_rule(ranks):
    # max_completion_length=1: a completion is its one token; truncated unless it is EOS or pad.
    # Every rank's bank was offered every rank's rows, each with its token ids and that flag.
    stops = set(ranks[0]["stop_token_ids"])
    assert len(stops) == 2
    everything = sorted(
        (call["prompt_id"][row], call["texts"][row], tuple(call["completion_ids"][row]))
        for rank in ranks
        for call in rank["calls"]
        for row in range(len(call["texts"]))
    )
    for rank in ranks:
        offers = rank["offers"]
        assert sorted((o["prompt_id"], o["text"], tuple(o["completion_ids"])) for o in offers) == everything
        for offer in offers:
            assert len(offer["completion_ids"]) == 1
            assert offer["truncated"] is (offer["completion_ids"][-1] not in stops)
    assert ranks[0]["offers"] == ranks[1]["offers"]  # the same rows in the same order


def _modes(state: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {pid: entry["modes"] for pid, entry in state["prompts"].items()}


def _sha(answer: str) -> str:
    # The bank binds a prompt to its reference; any fixed digest of the answer text will do here.
    import hashlib

    return hashlib.sha256(answer.encode()).hexdigest()


def test_recorder_is_importable_without_torch_distributed():
    # One process, no process group: gather_rows is the identity.
    from modebench.rl.distributed import gather_rows, world

    assert world() == (0, 1)
    assert gather_rows([1, 2]) == ([1, 2], 0)
    assert isinstance(RolloutRecorder().state_dict(), dict)


@pytest.mark.slow  # two torchrun processes importing torch and TRL
def test_replay_trainer_on_two_ranks_keeps_one_remax_bank_and_schedule(tmp_path):
    # ReplayGRPOTrainer reading the recorder's ReMaxBank (the standard path), groups split over
    # two ranks: every rank offers the same gathered rows and seals at the same point, so the
    # banks (exemplars, counts, banking order, cursor) are identical after every step, every rank
    # replays the same groups, and DDP leaves the same parameters on both ranks.
    ranks = _two_ranks(tmp_path, "replay")
    for step in (1, 2, 3):
        bank0, bank1 = (
            next(item["bank"] for item in rank["banks"] if item["step"] == step) for rank in ranks
        )
        assert bank0 == bank1, step
        assert bank0["schema"] == "modebench-rl-remax-bank-v1"
    assert ranks[0]["offers"] == ranks[1]["offers"]
    assert len(ranks[0]["offers"]) == 3 * 12  # every rank's rows, each offered once
    assert ranks[0]["served"] == ranks[1]["served"] and len(ranks[0]["served"]) == 3
    assert any(prompts for _, prompts in ranks[0]["served"])  # replay did run
    logged = [[e for e in rank["log_history"] if "replay/exemplars" in e] for rank in ranks]
    assert len(logged[0]) == 3 and sum(e["replay/exemplars"] for e in logged[0]) > 0
    assert ranks[0]["parameters"] == ranks[1]["parameters"]
