"""The replay loss of ReplayGRPOTrainer on a tiny model, its compute-only control, and the example run.

* The replay term equals a hand computation of alpha × scale × the mean over exemplars of each
  exemplar's mean token NLL (Re:Max's ``core/objectives.py:canonical_replay_uniform_verified_
  likelihood_loss``), and so does the gradient it adds, with gradient accumulation on.
* After one optimizer step on the same batch, the compute-only arm's parameters equal plain
  GRPO's, bit for bit, and its replay forward passes and tokens equal the replay arm's.
* ``examples/rl/replay_grpo.py`` runs three arms for a few steps, writes step receipts and one
  trajectory page whose numbers are the arms' trajectory tables; in headless Chromium (when
  installed) that page and the committed page of the full run have every figure drawn with every
  text inside its box.

The tiny Llama and the tokenizer are the example's own (built from a config, nothing downloaded).
Needs the ``rl`` extra; skipped without it except in CI (``CI=true``), where a missing package fails.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
from pathlib import Path
from typing import Any

import pytest

if os.environ.get("CI") == "true":
    import torch
    import trl  # in CI a missing rl package is a failure, never a skip
else:
    torch = pytest.importorskip(
        "torch", reason="needs the rl extra: pip install torch==2.13.0 && pip install -e '.[rl]'"
    )
    trl = pytest.importorskip(
        "trl", reason="needs the rl extra: pip install torch==2.13.0 && pip install -e '.[rl]'"
    )

from modebench.api import trajectory  # noqa: E402
from modebench.rl import ReMaxBank  # noqa: E402
from modebench.rl.replay import ReplayConfig, ReplayGRPOTrainer, replay_scale  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
FULL_RUN_PAGE = ROOT / "evidence" / "replay-grpo-trajectory.html"


def _example() -> Any:
    spec = importlib.util.spec_from_file_location(
        "replay_grpo_example", ROOT / "examples" / "rl" / "replay_grpo.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


example = _example()


@pytest.fixture(scope="module")
def rows() -> list[dict[str, Any]]:
    return example.training_rows(2, 0)


def options(tmp_path: Path, **changes: Any) -> argparse.Namespace:
    return example.parse(["--output", str(tmp_path), *sum(([f"--{k.replace('_', '-')}", str(v)]
                                                            for k, v in changes.items()), [])])  # fmt: skip


def fill(bank: ReMaxBank, rows: list[dict[str, Any]], tokenizer: Any) -> None:
    """Two exemplars for the first prompt, one for the second: token ids of answers the tokenizer knows."""
    answers = example.tiny_answers(rows)
    for index, (row, keys) in enumerate(zip(rows[:2], (("a", "b"), ("c",)))):
        for offset, key in enumerate(keys):
            ids = tokenizer.encode(answers[index * 2 + offset], add_special_tokens=False) + [
                tokenizer.eos_token_id
            ]
            bank.offer(row["prompt_id"], level=row["level"], domain=row["domain"], answer={}, reference_sha256="r",
                       text="t", status="correct", canonical_key=key, prompt=row["prompt"], completion_ids=ids,
                       truncated=False)  # fmt: skip
    bank.seal()


def hand_nll(model: Any, tokenizer: Any, prompt: Any, completion: tuple[int, ...]) -> Any:
    """-mean over the completion's tokens of log p(token | prompt, earlier tokens), one row, no padding."""
    prompt_ids = tokenizer.apply_chat_template(
        prompt, add_generation_prompt=True, tokenize=True, return_dict=True
    )["input_ids"]
    ids = torch.tensor([list(prompt_ids) + list(completion)])
    logits = model(input_ids=ids).logits[0].float()
    total = 0.0
    for position in range(len(prompt_ids), ids.shape[1]):
        total = total - torch.log_softmax(logits[position - 1], -1)[ids[0, position]]
    return total / len(completion)


@pytest.mark.parametrize("scaling", ["none", "per_rollout"])
def test_the_replay_term_is_alpha_times_the_mean_exemplar_nll_and_so_is_its_gradient(
    tmp_path, rows, grader, scaling
):
    chosen = options(tmp_path, steps=1, alpha=0.25, scaling=scaling)
    trainer, _, bank = example.build_arm("replay", rows, chosen, grader)
    fill(bank, rows, trainer.processing_class)
    model = trainer.model
    model.zero_grad()
    metrics = trainer.replay_step(model)
    got = {name: p.grad.clone() for name, p in model.named_parameters() if p.grad is not None}

    groups = [bank.group(rows[0]["prompt_id"])]  # groups_per_step = 1: the first banked prompt
    model.eval()
    nlls = [
        hand_nll(model, trainer.processing_class, rows[0]["prompt"], ids) for ids in groups[0].completion_ids
    ]
    weight = 0.25 * replay_scale(scaling, chosen.generations)
    expected = weight * sum(nlls) / len(nlls)
    assert metrics["exemplars"] == 2 and metrics["groups"] == 1 and metrics["forward_passes"] == 1
    assert metrics["loss"] == pytest.approx(expected.item(), rel=1e-5)
    assert metrics["nll"] == pytest.approx((sum(nlls) / 2).item(), rel=1e-5)
    model.zero_grad()
    expected.backward()
    assert trainer.args.gradient_accumulation_steps == 2  # the added gradient is not divided by it
    for name, p in model.named_parameters():
        if p.grad is not None:
            torch.testing.assert_close(got[name], p.grad, rtol=1e-4, atol=1e-7)
    # The metrics are in the trainer's logs, under replay/.
    assert trainer._metrics["train"]["replay/exemplars"] == [2.0]
    assert trainer._metrics["train"]["replay/bank_exemplars"] == [3.0]
    assert trainer._metrics["train"]["replay/modes_per_prompt"] == [1.5]
    # The schedule moved on: the next step replays the other prompt's group.
    assert trainer.replay_step(model)["exemplars"] == 1


def test_the_control_arm_follows_plain_grpo_exactly_and_spends_the_replay_arms_compute(
    tmp_path, rows, grader
):
    chosen = options(tmp_path, steps=1)
    trained = {}
    for arm in ("grpo", "control", "replay"):
        trainer, _, bank = example.build_arm(arm, rows, chosen, grader)
        trainer.train()
        assert trainer.state.global_step == 1
        trained[arm] = trainer
        for pid in [] if bank is None else bank.prompts:  # only completions that ended by themselves
            assert all(
                ids[-1] == trainer.processing_class.eos_token_id for ids in bank.group(pid).completion_ids
            )
    plain, control, replay = (
        dict(trained[a].model.named_parameters()) for a in ("grpo", "control", "replay")
    )
    assert all(torch.equal(plain[name], control[name]) for name in plain)
    assert any(not torch.equal(plain[name], replay[name]) for name in plain)  # replay did train
    assert trained["control"].replay_forward_passes == trained["replay"].replay_forward_passes == 1
    assert trained["control"].replay_forward_tokens == trained["replay"].replay_forward_tokens > 0
    logged = [entry for entry in trained["control"].state.log_history if "replay/loss" in entry]
    assert logged and logged[0]["replay/loss"] == 0.0 and logged[0]["replay/compute_only"] == 1.0
    assert logged[0]["replay/nll"] > 0


def test_the_trainer_reads_the_bank_its_reward_functions_recorder_fills(grader):
    from modebench.rl import ModeBank, RolloutRecorder, TRLReward
    from modebench.rl.replay import _replay_bank

    bank = ReMaxBank(4)
    fed = TRLReward(grader, recorder=RolloutRecorder(bank=bank))
    assert _replay_bank(None, [fed]) is bank and _replay_bank(bank, [fed]) is bank
    with pytest.raises(ValueError, match="not the ReMaxBank the reward function's recorder fills"):
        _replay_bank(ReMaxBank(4), [fed])
    with pytest.raises(ValueError, match="needs one ReMaxBank"):
        _replay_bank(None, [TRLReward(grader, recorder=RolloutRecorder(bank=ModeBank()))])
    with pytest.raises(TypeError, match="must be a ReMaxBank"):
        _replay_bank(ModeBank(), [])  # type: ignore[arg-type]
    lone = ReMaxBank(4)  # fed by hand (no recorder holds a Re:Max bank): accepted
    assert _replay_bank(lone, [TRLReward(grader)]) is lone


def test_replay_config_is_checked():
    with pytest.raises(ValueError, match="mode"):
        ReplayConfig(mode="sometimes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="alpha"):
        ReplayConfig(alpha=float("nan"))
    assert ReplayConfig().alpha == 0.1 and replay_scale("per_rollout", 8) == pytest.approx(7 / 64)
    assert issubclass(ReplayGRPOTrainer, trl.GRPOTrainer)


FIGURE_TEXTS = """[...document.querySelectorAll('figure[data-figure] svg')].map((svg, index) => {
  const vb = svg.viewBox.baseVal; const root = svg.getScreenCTM().inverse();
  const texts = [...svg.querySelectorAll('text')].filter(t => t.textContent.trim()).map(t => {
    const b = t.getBBox(); const m = root.multiply(t.getScreenCTM());
    const corners = [[b.x, b.y], [b.x + b.width, b.y], [b.x, b.y + b.height], [b.x + b.width, b.y + b.height]]
      .map(([x, y]) => [m.a * x + m.c * y + m.e, m.b * x + m.d * y + m.f]);
    const xs = corners.map(c => c[0]), ys = corners.map(c => c[1]);
    return {text: t.textContent.trim(), x0: Math.min(...xs), y0: Math.min(...ys), x1: Math.max(...xs), y1: Math.max(...ys)};
  });
  const r = svg.closest('figure').getBoundingClientRect();
  return {index, kind: svg.closest('figure').dataset.figure, width: r.width, height: r.height,
          markers: svg.querySelectorAll('use').length, title: (svg.querySelector('title') || {}).textContent || '',
          box: {x0: vb.x, y0: vb.y, x1: vb.x + vb.width, y1: vb.y + vb.height}, texts};
})"""
VALUES = """[...document.querySelectorAll('span.value[data-arm]')].map(s =>
  [s.dataset.arm, s.dataset.step, s.dataset.level, s.dataset.domain, s.dataset.metric, s.dataset.k,
   s.dataset.value, s.textContent])"""


def look(page_path: Path, arms: tuple[str, ...], steps: int) -> list[list[str]]:
    """Open the page in headless Chromium: no console error or request, one trajectory figure per
    cell with every text inside its box and none overlapping (``tests/render/test_layout.py``'s
    rule), each arm named in the legends and marked at every step; returns the table's values."""
    from tests.render.chromium import Browser
    from tests.render.test_layout import _problems

    with Browser() as browser:
        page = browser.open(page_path)
        assert page.console_errors() == [] and page.requests() == []
        figures = page.evaluate(FIGURE_TEXTS)
        values = page.evaluate(VALUES)
    assert len(figures) == 2 and all(f["kind"] == "trajectory" for f in figures)  # one per cell
    problems = _problems(figures)
    assert problems == [], "\n".join(problems[:40])
    for found in figures:
        assert found["width"] > 100 and found["height"] > 100 and found["title"].strip()
        joined = " ".join(t["text"] for t in found["texts"])
        assert all(arm in joined for arm in arms)
        assert found["markers"] >= 4 * len(arms) * steps - 4 * len(arms)  # a marker per defined point
    return values


def test_the_example_runs_three_arms_and_writes_one_trajectory_page(tmp_path):
    out = tmp_path / "run"
    assert example.main(["--steps", "2", "--output", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert list(summary["arms"]) == ["grpo", "replay", "control"]
    for arm, entry in summary["arms"].items():
        assert entry["steps"] == 2 and len(entry["runs"]) == 2
        assert sorted(p.name for p in (out / arm / "receipts").glob("step-*.json")) == [
            "step-00000001.json", "step-00000002.json"]  # fmt: skip
        log = json.loads((out / arm / "log_history.json").read_text())
        assert any("modebench/all/accuracy" in e for e in log)
        assert any("replay/exemplars" in e for e in log) == (arm != "grpo")
    assert summary["arms"]["replay"]["replay_forward_passes"] >= 1
    # The recorder fed each arm's bank: every training completion offered exactly once
    # (2 steps × 4 prompts × 8 completions), no other feeder.
    assert summary["arms"]["grpo"]["bank"] is None
    for arm in ("replay", "control"):
        bank = summary["arms"][arm]["bank"]
        assert bank["offered"] == 2 * len(summary["prompts"]) * 8
        assert 0 < bank["fresh_observations"] <= bank["offered"]
    assert all(p.startswith("train/") for p in summary["prompts"])  # the generated training split
    page = out / "trajectory.html"
    text = page.read_text()
    assert text.count("<figure") == 2 and all(arm in text for arm in summary["arms"])
    if not os.path.exists("/usr/bin/chromium"):
        pytest.skip("the page was written; looking at it needs Debian's chromium at /usr/bin/chromium")
    shown = look(page, tuple(summary["arms"]), 2)
    tables = {
        arm: trajectory(entry["runs"], grading_cache=tmp_path / "cache")
        for arm, entry in summary["arms"].items()
    }
    for arm, step, level, domain, metric, k, value, text in shown:
        expected = [r["estimate"] for r in tables[arm].rows if (str(r["step"]), str(r["level"]), r["domain"],
                    r["metric"], json.dumps(r["k"])) == (step, level, domain, metric, k)]  # fmt: skip
        assert len(expected) == 1 or (not expected and metric == "pcmd"), (arm, step, level, domain, metric)
        assert json.loads(value) == (expected[0] if expected else None)
        value = expected[0] if expected else None
        assert text == (
            "–" if value is None else format(value, "g") if isinstance(value, float) else str(value)
        )
    assert len(shown) == 3 * 2 * 2 * 4  # arms × steps × cells × metrics


@pytest.mark.skipif(
    not os.path.exists("/usr/bin/chromium"), reason="needs Debian's chromium at /usr/bin/chromium"
)
def test_the_full_runs_page_in_a_real_browser():
    # evidence/replay-grpo-trajectory.html: `python examples/rl/replay_grpo.py --steps 30` (docs/rl.md)
    shown = look(FULL_RUN_PAGE, ("grpo", "replay", "control"), 30)
    assert len(shown) == 3 * 30 * 2 * 4
    assert {row[1] for row in shown} == {str(step) for step in range(1, 31)}
    assert {row[0] for row in shown} == {"grpo", "replay", "control"}
