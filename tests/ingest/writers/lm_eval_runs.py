"""Sample files written by the real lm-evaluation-harness CLI (``lm-eval run … --log_samples``).

Three custom generation tasks over the first prompts of the bundled ``level1_countdown`` split
(a local JSON dataset, so nothing is downloaded), run with lm-eval's own ``dummy`` model:

* ``mb_one``  — one filter (lm-eval's default ``none``: take_first), docs without a modebench id:
  matched by their prompt text; also run with ``--system_instruction`` (the split's system message)
  into ``system/``, and twice into ``rerun/`` (a rerun into one output directory);
* ``mb_two``  — two filters (``strict-match`` and ``flexible-extract``, like lm-eval's gsm8k) and
  ``repeats: 4``; docs carry the modebench ``id``.

``python tests/ingest/writers/lm_eval_runs.py OUT_DIR`` writes ``OUT_DIR/{one,two,system,rerun}``;
the committed fixtures under ``tests/ingest/fixtures/lm_eval`` are its output (timestamps and all).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

DOCS = 4
REPEATS = 4

_ONE = """task: mb_one
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data}
test_split: test
output_type: generate_until
doc_to_text: user
doc_to_target: answer
generation_kwargs:
  until: ["\\n\\n"]
  do_sample: false
metric_list:
  - metric: exact_match
    aggregation: mean
    higher_is_better: true
"""

_TWO = """task: mb_two
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data}
test_split: test
output_type: generate_until
doc_to_text: user
doc_to_target: answer
repeats: {repeats}
generation_kwargs:
  until: ["\\n\\n"]
  do_sample: true
  temperature: 1.0
filter_list:
  - name: strict-match
    filter:
      - function: regex
        regex_pattern: "boxed\\\\{{(.*)\\\\}}"
      - function: take_first
  - name: flexible-extract
    filter:
      - function: regex
        group_select: -1
        regex_pattern: "(-?[0-9.,]+)"
      - function: take_first
metric_list:
  - metric: exact_match
    aggregation: mean
    higher_is_better: true
"""


def _lm_eval() -> list[str]:
    found = shutil.which("lm-eval", path=os.path.dirname(sys.executable))
    return [found] if found else [sys.executable, "-m", "lm_eval"]


def _run(tasks: Path, task: str, output: Path, *extra: str) -> None:
    env = {**os.environ, "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    argv = [
        *_lm_eval(), "--model", "dummy", "--tasks", task, "--include_path", str(tasks),
        "--log_samples", "--output_path", str(output), *extra,
    ]  # fmt: skip
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(
            f"lm-eval failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        )


def write(
    requests: list[dict[str, Any]],
    out: Path,
    scratch: Path,
    cases: tuple[str, ...] = ("one", "two", "system", "rerun"),
) -> dict[str, Path]:
    """Run lm-eval for each case; returns each case's output directory."""
    chosen = requests[:DOCS]
    scratch.mkdir(parents=True, exist_ok=True)
    one = scratch / "one.jsonl"
    two = scratch / "two.jsonl"
    one.write_text(
        "".join(json.dumps({"user": r["messages"][-1]["content"], "answer": ""}) + "\n" for r in chosen)
    )
    two.write_text(
        "".join(
            json.dumps({"id": r["id"], "user": r["messages"][-1]["content"], "answer": ""}) + "\n"
            for r in chosen
        )
    )
    tasks = scratch / "tasks"
    tasks.mkdir(parents=True, exist_ok=True)
    (tasks / "mb_one.yaml").write_text(_ONE.format(data=one))
    (tasks / "mb_two.yaml").write_text(_TWO.format(data=two, repeats=REPEATS))
    system = chosen[0]["messages"][0]["content"]
    runs_of: dict[str, list[tuple[str, tuple[str, ...]]]] = {
        "one": [("mb_one", ())],
        "two": [("mb_two", ())],
        "system": [("mb_one", ("--system_instruction", system))],
        "rerun": [("mb_one", ()), ("mb_one", ())],
    }
    written = {}
    for name in cases:
        for task, extra in runs_of[name]:
            _run(tasks, task, out / name, *extra)
        written[name] = out / name
    return written


if __name__ == "__main__":
    import tempfile

    sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
    from tests.ingest.writers.rollout_dumps import bundled_requests

    target = Path(sys.argv[1])
    with tempfile.TemporaryDirectory() as tmp:
        write(bundled_requests(), target, Path(tmp))
    for path in sorted(target.rglob("*")):
        if path.is_file() and not path.name.startswith("samples_"):
            path.unlink()  # results_*.json name the local task paths; the samples are the fixture
    print(target)
