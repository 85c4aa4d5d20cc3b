"""Benchmark: ingest (+ grade) of a verl rollout dump vs ``evaluate`` on the same responses.

Usage: .venv/bin/python ops/benchmark_ingest.py [INGEST_RESPONSES] [GRADE_RESPONSES]

1. Ingest only: a verl dump of INGEST_RESPONSES responses (default 1,000,000) over the 32 prompts of
   the bundled level1_countdown split, many steps → per-step evaluate input; reports responses/s.
2. Ingest + grade (the trajectory path, cold grading cache) of a dump of GRADE_RESPONSES
   (default 8,192) against plain ``evaluate`` of the very same per-step input files.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

from modebench._datasets.export import prepare_requests
from modebench._datasets.roots import SplitSource
from modebench._file_evaluation import evaluate_path
from modebench.api_types import EvaluationOptions
from modebench.ingest import ingest, prompt_index
from modebench.ingest.grading import graded_steps

CONFIG = "level1_countdown"
RUN = {
    "model": {"id": "bench", "revision": "1"},
    "generation": {"draws_per_prompt": 16},
    "prompt_condition": "registered_hints_v1",
}


def chatml(messages: list[dict[str, str]]) -> str:
    return "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages)


def dump(folder: Path, responses: int, per_prompt: int) -> int:
    root, source = SplitSource(CONFIG, "eval", None, None, False, "bundled").open()
    prompts = [chatml(r["messages"]) for r in prepare_requests(root, CONFIG, registry=source)]
    per_step = len(prompts) * per_prompt
    steps = max(1, responses // per_step)
    for step in range(steps):
        with (folder / f"{step}.jsonl").open("w") as handle:
            for p, prompt in enumerate(prompts):
                for r in range(per_prompt):
                    line = {"input": prompt, "output": f"\\boxed{{{p}+{r % 7}-{step}}}", "score": 0.0}
                    handle.write(json.dumps(line) + "\n")
    return steps * per_step


def main() -> None:
    big = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    small = int(sys.argv[2]) if len(sys.argv) > 2 else 8_192
    index = prompt_index("bundled", CONFIG)
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        (base / "big").mkdir()
        total = dump(base / "big", big, 250)
        start = time.perf_counter()
        summary = ingest("verl", base / "big", base / "big.jsonl", index=index)
        seconds = time.perf_counter() - start
        assert summary["responses"] == total and summary["unmatched"] == 0
        print(f"ingest only: {total} responses, {len(summary['files'])} steps in {seconds:.1f} s "
              f"= {total / seconds:,.0f} responses/s")  # fmt: skip

        (base / "small").mkdir()
        total = dump(base / "small", small, 16)
        options = EvaluationOptions(config=CONFIG, registry="bundled", run=RUN, allow_partial=True)
        files = ingest("verl", base / "small", base / "again.jsonl", index=index)["files"]
        # Warm-up (imports, split cache, page cache) so neither timed side pays for it.
        evaluate_path(files[0]["path"], base / "warm.json", options, work_dir=base / "warm")
        start = time.perf_counter()
        steps, counts = graded_steps("verl", base / "small", base / "cache", index=index, options=options)
        ingest_grade = time.perf_counter() - start
        assert counts["graded"] == len(steps)
        start = time.perf_counter()
        for number, entry in enumerate(files):
            evaluate_path(
                entry["path"], base / f"eval-{number}.json", options, work_dir=base / f"work-{number}"
            )
        evaluate_only = time.perf_counter() - start
        print(f"ingest + grade: {total} responses, {len(steps)} steps in {ingest_grade:.1f} s "
              f"= {total / ingest_grade:,.0f} responses/s")  # fmt: skip
        print(
            f"evaluate on the same inputs: {evaluate_only:.1f} s = {total / evaluate_only:,.0f} responses/s"
        )
        start = time.perf_counter()
        _, counts = graded_steps("verl", base / "small", base / "cache", index=index, options=options)
        print(f"re-run with the cache: {time.perf_counter() - start:.2f} s, graded {counts['graded']}, "
              f"cached {counts['cached']}")  # fmt: skip


if __name__ == "__main__":
    main()
