"""Benchmark: ingest + grade of a verl rollout dump against ``evaluate`` on the same responses.

    .venv/bin/python ops/benchmarks/benchmark_ingest.py                       # 1,000,000 responses, 8 steps
    .venv/bin/python ops/benchmarks/benchmark_ingest.py --responses 200000    # a smaller run on a loaded machine

The dump is what verl writes to ``trainer.rollout_data_dir``: ``{step}.jsonl``, one line per rollout
with ``input`` (the ChatML-templated prompt), ``output`` and ``score``. Its prompts are the 32 of the
bundled ``level1_countdown`` split (``--registry bundled``, offline), each sampled many times per
step, as a trainer revisits its prompts; the responses are RL-shaped: every rollout's text is
distinct (its own reasoning preamble) while its boxed answer comes from a skewed per-prompt pool —
a few correct expressions (the modes, which shrink over the steps: the collapse), wrong ones and
malformed ones.

Three paths grade the same responses, each as the user would run it (CLI subprocesses):

(a) ``modebench ingest verl DIR --output X.jsonl`` then ``modebench evaluate`` on each step's file;
(b) ``modebench trajectory verl:DIR`` (ingest and grade on the fly, cold grading cache);
(c) ``modebench evaluate`` alone on each step's evaluate input, written directly by this script
    (what a hand-written converter would produce — byte-identical to what ingest writes).

For each: wall seconds, CPU seconds of the process tree (``RUSAGE_CHILDREN``, the subprocesses and
their grading workers), peak RSS of the largest process, and the load average at the end. Results
are printed and, with ``--json``, written to a file. (b) is also re-run warm (every step cached).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from fractions import Fraction
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "src"))

from modebench._datasets.export import prepare_requests  # noqa: E402
from modebench._datasets.roots import SplitSource  # noqa: E402
from modebench.api import grade, load_tasks  # noqa: E402

CONFIG = "level1_countdown"
REGISTRY = ["--registry", "bundled", "--config", CONFIG]
RUN = {
    "model": {"id": "benchmark", "revision": "0"},
    "generation": {"temperature": 1.0},
    "prompt_condition": "registered_hints_v1",
}
WORDS = "try combine subtract multiply divide numbers target check again so then maybe".split()


_OPS = {
    "+": lambda x, y: x + y,
    "-": lambda x, y: x - y,
    "*": lambda x, y: x * y,
    "/": lambda x, y: x / y,
}


def _solutions(numbers: list[int], target: int) -> list[str]:
    """Expressions over the three numbers (each once) that equal the target, by brute force."""
    found: list[str] = []
    for a, b, c in itertools.permutations(Fraction(n) for n in numbers):
        for p, q in itertools.product(_OPS, repeat=2):
            for left in (True, False):
                try:
                    value = _OPS[q](_OPS[p](a, b), c) if left else _OPS[p](a, _OPS[q](b, c))
                except ZeroDivisionError:
                    continue
                text = f"({a}{p}{b}){q}{c}" if left else f"{a}{p}({b}{q}{c})"
                if value == target and text not in found:
                    found.append(text)
    return found


def _pools(tasks: list[Any]) -> list[dict[str, list[str]]]:
    """Per prompt: verified answers (its modes), wrong answers, malformed ones."""
    pools = []
    for task in tasks:
        answers = _solutions(task.answer["numbers"], task.answer["target"])
        verified = [a for a in answers if grade(task, f"\\boxed{{{a}}}")["verified"]][:6]
        pools.append(
            {
                "verified": verified,
                "wrong": [f"{'+'.join(map(str, task.answer['numbers']))}+{n}" for n in range(3)],
                "malformed": ["no idea", "\\boxed{}", "the answer is 7"],
            }
        )
    return pools


def _response(rng: random.Random, pool: dict[str, list[str]], step: int, steps: int) -> str:
    # Collapse by construction: the number of modes still produced shrinks with the step.
    modes = pool["verified"][: max(1, len(pool["verified"]) - (len(pool["verified"]) * step) // steps)]
    kind = rng.random()
    if kind < 0.6 and modes:
        answer = modes[min(int(rng.expovariate(1.2)), len(modes) - 1)]
    elif kind < 0.9:
        answer = rng.choice(pool["wrong"])
    else:
        return " ".join(rng.choices(WORDS, k=30)) + " " + rng.choice(pool["malformed"])
    return " ".join(rng.choices(WORDS, k=30)) + f" \\boxed{{{answer}}}"


def write_dump(base: Path, responses: int, steps: int) -> tuple[Path, Path, int]:
    """The verl dump ``base/dump/{step}.jsonl`` and the evaluate inputs ``base/direct/{step}.jsonl``."""
    root, source = SplitSource(CONFIG, "eval", None, None, True, "bundled").open()
    requests = list(prepare_requests(root, CONFIG, registry=source))
    tasks = list(load_tasks(CONFIG, registry="bundled"))
    pools = _pools(tasks)
    per_prompt = max(1, responses // (steps * len(requests)))
    dump, direct = base / "dump", base / "direct"
    dump.mkdir()
    direct.mkdir()
    rng = random.Random(20261201)
    for step in range(steps):
        drawn = [
            [_response(rng, pools[p], step, steps) for _ in range(per_prompt)] for p in range(len(requests))
        ]
        # verl logs the n rollouts of a prompt together, and a prompt again later in the batch.
        with (dump / f"{step}.jsonl").open("w", encoding="utf-8") as handle:
            for half in (0, 1):
                for p, request in enumerate(requests):
                    prompt = "".join(
                        f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in request["messages"]
                    )
                    prompt += "<|im_start|>assistant\n"
                    cut = per_prompt // 2
                    for text in drawn[p][:cut] if half == 0 else drawn[p][cut:]:
                        handle.write(json.dumps({"input": prompt, "output": text, "score": 0.0}) + "\n")
        with (direct / f"{step}.jsonl").open("w", encoding="utf-8") as handle:
            for p, request in enumerate(requests):
                handle.write(
                    json.dumps({"id": request["id"], "responses": drawn[p]}, ensure_ascii=False) + "\n"
                )
    return dump, direct, per_prompt * steps * len(requests)


# Runs one path's commands and reports the peak RSS of its largest descendant (the CLI process or
# one of its grading workers: rusage of waited-for grandchildren is folded into their parent's).
WRAPPER = """
import json, resource, subprocess, sys
for command in json.loads(sys.argv[1]):
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


def _measure(label: str, commands: list[list[str]], env: dict[str, str]) -> dict[str, Any]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", WRAPPER, json.dumps(commands)],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {
        "path": label,
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu, 2),
        "peak_rss_mib": round(int(done.stdout) / 1024, 1),
        "loadavg": [round(x, 2) for x in os.getloadavg()],
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--responses", type=int, default=1_000_000, help="responses in the dump (default: 1,000,000)"
    )
    parser.add_argument("--steps", type=int, default=8, help="training steps in the dump (default: 8)")
    parser.add_argument("--workers", type=int, default=1, help="grading worker processes (default: 1)")
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--tmp", type=Path, help="scratch directory (default: a temporary one, removed)")
    args = parser.parse_args()
    modebench = str(Path(sys.executable).with_name("modebench"))
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    scratch = Path(tempfile.mkdtemp(prefix="bench-ingest-", dir=args.tmp))
    try:
        started = time.perf_counter()
        dump, direct, total = write_dump(scratch, args.responses, args.steps)
        size = sum(p.stat().st_size for p in dump.iterdir())
        print(f"dump: {total:,} responses, {args.steps} steps × 32 prompts, {size / 2**20:.0f} MiB, "
              f"written in {time.perf_counter() - started:.1f} s", flush=True)  # fmt: skip
        run = scratch / "run.json"
        run.write_text(json.dumps(RUN))
        steps = range(args.steps)
        workers = ["--workers", str(args.workers), "--progress-every", "0", "--allow-partial"]

        def evaluate(folder: Path, stem: str, tag: str) -> list[list[str]]:
            return [
                [modebench, "evaluate", str(folder / f"{stem}{s}.jsonl"), *REGISTRY, "--run", str(run),
                 "--output", str(scratch / f"{tag}-{s}.json"), *workers]
                for s in steps
            ]  # fmt: skip

        results = []
        ingest = [modebench, "ingest", "verl", str(dump), "--output", str(scratch / "x.jsonl"), *REGISTRY]
        results.append(_measure("(c) evaluate alone", evaluate(direct, "", "c"), env))
        print(json.dumps(results[-1]), flush=True)
        results.append(_measure("(a) ingest", [ingest], env))
        print(json.dumps(results[-1]), flush=True)
        for s in steps:  # ingest writes exactly the evaluate input a converter would
            assert (scratch / f"x.step-{s}.jsonl").read_bytes() == (direct / f"{s}.jsonl").read_bytes()
        results.append(_measure("(a) then evaluate", evaluate(scratch, "x.step-", "a"), env))
        print(json.dumps(results[-1]), flush=True)
        trajectory = [modebench, "trajectory", f"verl:{dump}", *REGISTRY, "--run", str(run), "--format", "json",
                      "--grading-cache", str(scratch / "cache"), "--workers", str(args.workers)]  # fmt: skip
        results.append(_measure("(b) trajectory, cold cache", [trajectory], env))
        print(json.dumps(results[-1]), flush=True)
        results.append(_measure("(b) trajectory, warm cache", [trajectory], env))
        print(json.dumps(results[-1]), flush=True)
        for s in steps:  # all three paths publish the same cells
            cells = [json.loads((scratch / f"{t}-{s}.json").read_bytes())["cells"] for t in "ac"]
            assert cells[0] == cells[1], s
        summary = _summary(results, total)
        print(json.dumps(summary, indent=2))
        if args.json:
            args.json.write_text(json.dumps({"responses": total, "steps": args.steps, "workers": args.workers,
                                             "results": results, "summary": summary}, indent=2) + "\n")  # fmt: skip
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _summary(results: list[dict[str, Any]], total: int) -> dict[str, Any]:
    by = {r["path"]: r for r in results}
    a_wall = by["(a) ingest"]["wall_s"] + by["(a) then evaluate"]["wall_s"]
    a_cpu = by["(a) ingest"]["cpu_s"] + by["(a) then evaluate"]["cpu_s"]
    rows = {
        "(a) ingest + evaluate": (a_wall, a_cpu),
        "(b) trajectory (cold)": (by["(b) trajectory, cold cache"]["wall_s"], by["(b) trajectory, cold cache"]["cpu_s"]),
        "(c) evaluate alone": (by["(c) evaluate alone"]["wall_s"], by["(c) evaluate alone"]["cpu_s"]),
    }  # fmt: skip
    return {
        name: {
            "wall_s": round(wall, 2),
            "cpu_s": round(cpu, 2),
            "responses_per_cpu_s": round(total / cpu),
            "responses_per_wall_s": round(total / wall),
        }
        for name, (wall, cpu) in rows.items()
    }


if __name__ == "__main__":
    main()
