"""The Inspect AI extension end to end, offline: ``mockllm/model`` answers the registered prompts,
the log converts (``modebench ingest inspect``) into a receipt whose cells equal ``modebench
evaluate`` on the same responses, and the reducers report the stats estimators' values."""

from __future__ import annotations

import itertools
import json
import math
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("inspect_ai")
pytest.importorskip("pyarrow")

from inspect_ai import eval as inspect_eval  # noqa: E402
from inspect_ai.log import read_eval_log, write_eval_log  # noqa: E402
from inspect_ai.model import ModelOutput, ModelUsage, get_model  # noqa: E402

from modebench.api import EvaluationOptions, Task, evaluate_file, grade, ingest, load_tasks  # noqa: E402
from modebench.stats.estimators import distinct_at_k, pass_at_k, pcmd  # noqa: E402

CONFIG = "level1_graph_coloring"
EPOCHS = 4
PROMPTS = 3
RUN = {
    "model": {"id": "mockllm/model", "revision": "test"},
    "generation": {"draws_per_prompt": EPOCHS},
    "prompt_condition": "registered_hints_v1",
}


def _draws(task: Task, index: int) -> list[str]:
    """Four draws for prompt ``index``: ``index`` wrong ones, then valid colorings (two repeated)."""
    holes = task.answer["partial_colors"].count(None)  # type: ignore[union-attr]
    valid = []
    for colors in itertools.product("123", repeat=holes):
        text = "\\boxed{" + "".join(colors) + "}"
        if grade(task, text)["verified"]:
            valid.append(text)
        if len(valid) == 3:
            break
    pool = ["\\boxed{x}"] * index + [valid[0], valid[1], valid[0], valid[2]]
    return pool[:EPOCHS]


def test_inspect_eval_log_converts_to_the_evaluate_receipt(tmp_path: Path) -> None:
    tasks = list(load_tasks(CONFIG, registry="bundled"))[:PROMPTS]
    draws = {t.problem: _draws(t, i) for i, t in enumerate(tasks)}
    served: Counter[str] = Counter()

    def respond(messages: list[Any], tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
        user = messages[-1].text
        [problem] = [p for p in draws if p in user]
        text = draws[problem][served[problem]]
        served[problem] += 1
        output = ModelOutput.from_content(model="mockllm/model", content=text)
        # Usage given, so the mock model never fetches a tokenizer (the test stays offline).
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return output

    model = get_model("mockllm/model", custom_outputs=respond)
    [log] = inspect_eval(
        f"modebench/{CONFIG}",
        model=model,
        task_args={"epochs": EPOCHS},
        limit=PROMPTS,
        log_dir=str(tmp_path / "logs"),
        log_format="eval",
        display="none",
    )
    assert log.status == "success", log.error
    # Reducers: the stats estimators of each sample's epochs, averaged over samples.
    by_reducer = {score.reducer: score.metrics["defined_mean"].value for score in log.results.scores}
    profiles = [
        (EPOCHS, EPOCHS - i, Counter(d for d in draws[t.problem] if d != "\\boxed{x}"))
        for i, t in enumerate(tasks)
    ]
    assert by_reducer["pass_at_k"] == pytest.approx(sum(pass_at_k(n, c, n) for n, c, _ in profiles) / PROMPTS)
    assert by_reducer["distinct_at_k"] == pytest.approx(
        sum(distinct_at_k(n, m.values(), n) for n, _, m in profiles) / PROMPTS
    )
    defined = [v for v in (pcmd(m.values()) for _, _, m in profiles) if v is not None]
    assert by_reducer["pcmd"] == pytest.approx(sum(defined) / len(defined))
    assert not math.isnan(by_reducer["pcmd"])

    # The log → evaluate input → receipt, against evaluate on the same responses written directly.
    [log_file] = (tmp_path / "logs").glob("*.eval")
    summary = ingest("inspect", log_file, tmp_path / "ingested.jsonl", registry="bundled", config=CONFIG)
    assert summary["prompts"] == PROMPTS and summary["unmatched"] == 0
    # The log as Inspect's own reader sees it, written in Inspect's .json format (streamed by the
    # other reader), ingests to the same bytes.
    json_log = tmp_path / "log.json"
    write_eval_log(read_eval_log(str(log_file)), str(json_log), format="json")
    ingest("inspect", json_log, tmp_path / "from-json.jsonl", registry="bundled", config=CONFIG)
    assert (tmp_path / "from-json.jsonl").read_bytes() == (tmp_path / "ingested.jsonl").read_bytes()
    direct = tmp_path / "direct.jsonl"
    direct.write_text("".join(json.dumps({"id": t.id, "responses": draws[t.problem]}) + "\n" for t in tasks))
    options = EvaluationOptions(config=CONFIG, registry="bundled", run=RUN, allow_partial=True)
    receipts = []
    for name in ("ingested", "direct"):
        receipt = evaluate_file(tmp_path / f"{name}.jsonl", tmp_path / f"{name}.json", options=options)
        assert receipt.status == "completed"
        receipts.append(json.loads((tmp_path / f"{name}.json").read_bytes())["cells"])
    assert receipts[0] == receipts[1]
