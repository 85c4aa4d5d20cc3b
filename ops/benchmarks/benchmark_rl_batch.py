"""Grading latency of one GRPO batch on modebench.rl's persistent pool, next to the per-call loop.

One batch is 256 prompts x 8 completions = 2,048 completions of mixed domains from the bundled
release (levels 1-3, prompts taken round-robin over the configurations). Each prompt's 8
completions are 5 certified witnesses (distinct modes where the task has them), a repeat of the
first, a wrong answer and an empty completion, so the batch has the duplicates, failures and
several modes per prompt of a real rollout group. Two mixes: ``non-mathir`` (countdown, graph
coloring, pantry plan, python factors) and ``all`` (plus MathIR).

* ``fresh`` (reported first: what a training run sees): every step grades *new* completions,
  never graded before by that process, as a policy's rollouts are. Step ``s`` decorates each
  completion with text the domain's answer surface ignores (a short reasoning preamble before
  ``Final answer: \\boxed{...}`` where the domain reads a box, else surrounding whitespace, chosen
  per cell by checking that the verdicts and mode keys do not change), so every (reference,
  response) pair is new while the work per completion stays that of the base batch. The pool and
  the references are warm (a training run validates its prompts on first sight); the workers'
  result caches are cold for these texts. ``per_call`` is the per-call loop on the same fresh
  completions (the first timed step's batch, which neither process had seen). A decoration keeps
  the extracted answer, so MathIR, whose SymPy work is cached by expression inside the worker,
  is partly warm even here: the goal is stated on the non-MathIR mix.
* ``warm``: the same batch graded ``--steps`` times (the workers' result caches answer most of
  it): the protocol's own cost, a floor, not a training step's cost.
  Besides the median, p95 and best step, ``cpu_ms_per_batch`` gives the mean CPU of this
  process (every thread) and of the workers (from ``/proc``, Linux only) per fresh batch: on a
  shared machine the wall time follows the other jobs, the CPU much less.
* ``cold_seconds``: the first batch on a started pool, references validated, caches empty.
* ``per-call``: the loop a user writes today, ``modebench.api.grade(task, text)`` for each
  completion (one worker round trip each), timed once over the whole batch.
* ``memory``: parent RSS while ``TRLReward`` with a ``RolloutRecorder`` and a ``ModeBank`` grades
  the batch ``--memory-steps`` times, flushing metrics each step (no receipts).

    python ops/benchmarks/benchmark_rl_batch.py [--steps 15] [--memory-steps 1000] [--output FILE]

Figures depend on the machine and its load; say both when quoting them (``docs/rl.md``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "src"))

from modebench.api import Task, grade  # noqa: E402
from modebench.domains import plugin  # noqa: E402
from modebench.rl import BatchGrader, Completion, ModeBank, RolloutRecorder, TRLReward, trainer_rows  # noqa: E402
from modebench.verifier import close_worker  # noqa: E402

NON_MATHIR = ("countdown", "graph_coloring", "pantry_plan", "python_factors")
MIXES = {"non-mathir": NON_MATHIR, "all": (*NON_MATHIR, "mathir")}


def batch(domains: tuple[str, ...], prompts: int = 256, group: int = 8) -> list[Completion]:
    tables = [
        trainer_rows(f"level{level}_{domain}", registry="bundled")
        for level in (1, 2, 3)
        for domain in domains
    ]
    rows = []
    position = 0
    while len(rows) < prompts:
        table = tables[position % len(tables)]
        index = position // len(tables)
        if index >= len(table):
            raise SystemExit("not enough bundled prompts for this batch size")
        rows.append(table[index])
        position += 1
    out = []
    for row in rows:
        witnesses = plugin(row["domain"]).witnesses(row["level"], json.loads(row["answer"]))
        texts = [witnesses[i % len(witnesses)] for i in range(5)] + [witnesses[0], "not a solution", ""]
        out.extend(
            Completion(row["level"], row["domain"], row["answer"], text, row["prompt_id"])
            for text in texts[:group]
        )
    return out


def rss_bytes() -> int:
    with open("/proc/self/statm", encoding="ascii") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def children_cpu_seconds() -> float | None:
    """CPU seconds (user + system) used so far by this process's live children (the workers),
    read from ``/proc`` (Linux); None elsewhere."""
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 0
    if not tick or not os.path.isdir("/proc"):
        return None
    me, total = os.getpid(), 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue  # gone meanwhile
        if int(fields[1]) == me:  # ppid
            total += int(fields[11]) + int(fields[12])  # utime + stime, in clock ticks
    return total / tick


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


STYLES = ("reasoning", "whitespace")


def decorate(text: str, style: str, step: int, index: int) -> str:
    """``text`` made new for step ``step``, row ``index``, in a way its domain's surface ignores."""
    if style == "reasoning":
        note = f"Attempt {step}.{index}: checking the constraints one by one before answering."
        return f"{note}\n\nFinal answer: \\boxed{{{text}}}" if text else note
    return "\n" * (1 + step % 7) + text + " " * (1 + step // 7) + "\t" * (1 + index)


def styles_by_cell(grader: BatchGrader, completions: list[Completion]) -> dict[tuple[Any, Any], str]:
    """Per (level, domain), the first decoration that keeps every verdict and mode key."""
    base = grader.grade(completions)
    out: dict[tuple[Any, Any], str] = {}
    for cell in dict.fromkeys((c.level, c.domain) for c in completions):
        rows = [i for i, c in enumerate(completions) if (c.level, c.domain) == cell]
        for style in STYLES:
            probe = [
                replace(completions[i], response=decorate(completions[i].response, style, 0, i)) for i in rows
            ]
            graded = grader.grade(probe)
            same = all(
                (g.status, g.canonical_key) == (base[i].status, base[i].canonical_key)
                for g, i in zip(graded, rows)
            )
            # An empty completion is malformed bare and stays so decorated, whatever the style.
            if same:
                out[cell] = style
                break
        else:
            raise SystemExit(f"no decoration keeps the verdicts of level {cell[0]} {cell[1]}")
    return out


def fresh(completions: list[Completion], styles: dict[tuple[Any, Any], str], step: int) -> list[Completion]:
    """The batch of step ``step``: every completion decorated anew (steps from 1; 0 is the probe)."""
    return [
        replace(c, response=decorate(c.response, styles[(c.level, c.domain)], step, index))
        for index, c in enumerate(completions)
    ]


def time_batches(
    completions: list[Completion], workers: int, steps: int, styles: dict[tuple[Any, Any], str]
) -> dict[str, Any]:
    with BatchGrader(workers) as grader:
        grader.prestart()
        start = time.perf_counter()
        graded = grader.grade(completions)  # cold: workers started, references validated
        cold = time.perf_counter() - start
        # Fresh completions at every step (steps 1..N; the probe used step 0 on another pool).
        fresh_latencies = []
        verified = []
        batches = [fresh(completions, styles, step) for step in range(1, steps + 1)]
        parent_cpu, workers_cpu = time.process_time(), children_cpu_seconds()
        for batch_of_step in batches:
            start = time.perf_counter()
            results = grader.grade(batch_of_step)
            fresh_latencies.append(time.perf_counter() - start)
            verified.append(sum(result.verified for result in results))
        parent_cpu = time.process_time() - parent_cpu
        after = children_cpu_seconds()
        workers_cpu = None if after is None or workers_cpu is None else after - workers_cpu
        warm_latencies = []
        for _ in range(steps):
            start = time.perf_counter()
            grader.grade(completions)
            warm_latencies.append(time.perf_counter() - start)
    return {
        "workers": workers,
        "fresh": {
            "median_ms": round(1000 * statistics.median(fresh_latencies), 1),
            "p95_ms": round(1000 * percentile(fresh_latencies, 0.95), 1),
            "min_ms": round(1000 * min(fresh_latencies), 1),
            "verified_per_step": sorted(set(verified)),
            # Mean CPU per fresh batch, of this process (all its threads) and of the workers:
            # less sensitive to other jobs than the wall time, though contention inflates it too.
            "cpu_ms_per_batch": {
                "parent": round(1000 * parent_cpu / steps, 1),
                "workers": None if workers_cpu is None else round(1000 * workers_cpu / steps, 1),
            },
        },
        "warm": {
            "median_ms": round(1000 * statistics.median(warm_latencies), 1),
            "p95_ms": round(1000 * percentile(warm_latencies, 0.95), 1),
        },
        "cold_seconds": round(cold, 4),
        "distinct_pairs": len({(c.prompt_id, c.response) for c in completions}),
        "verified": sum(result.verified for result in graded),
    }


def time_per_call(completions: list[Completion], *, repeat: bool = False) -> dict[str, Any]:
    """The per-call loop over ``completions`` on the shared worker; ``repeat``: timed on a second
    pass, when the worker's caches know every completion (the warm comparison)."""
    tasks = {}
    for c in completions:
        tasks.setdefault(c.prompt_id, Task(str(c.prompt_id), c.level, c.domain, "p", json.loads(c.answer)))
    grade(tasks[completions[0].prompt_id], completions[0].response)  # the shared worker is started
    if repeat:
        for c in completions:
            grade(tasks[c.prompt_id], c.response)
    start = time.perf_counter()
    for c in completions:
        grade(tasks[c.prompt_id], c.response)
    seconds = time.perf_counter() - start
    close_worker()
    return {"seconds": round(seconds, 3)}


def memory(completions: list[Completion], steps: int) -> dict[str, Any]:
    grader = BatchGrader(1)
    recorder = RolloutRecorder(bank=ModeBank(8))
    reward = TRLReward(grader, recorder=recorder)
    columns = {
        "answer": [c.answer for c in completions],
        "level": [c.level for c in completions],
        "domain": [c.domain for c in completions],
        "prompt_id": [c.prompt_id for c in completions],
    }
    texts = [c.response for c in completions]
    samples = []
    try:
        for step in range(1, steps + 1):
            reward(prompts=[None] * len(texts), completions=texts, **columns)
            recorder.flush(step)
            recorder.steps.clear()  # a trainer keeps only what it logs
            if step in (1, 10) or step % max(1, steps // 10) == 0:
                samples.append((step, rss_bytes()))
    finally:
        grader.close()
    after_warmup = [rss for step, rss in samples if step >= 10]
    return {
        "steps": steps,
        "rss_mib": {str(step): round(rss / 2**20, 1) for step, rss in samples},
        "growth_after_step_10_mib": round((max(after_warmup) - min(after_warmup)) / 2**20, 1)
        if after_warmup
        else None,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=15)
    parser.add_argument("--memory-steps", type=int, default=1000)
    parser.add_argument("--output", type=Path)
    args = parser.parse_args()
    result: dict[str, Any] = {"completions": 2048, "prompts": 256, "group": 8, "cpus": os.cpu_count(),
                              "loadavg": os.getloadavg(), "mixes": {}}  # fmt: skip
    for name, domains in MIXES.items():
        completions = batch(domains)
        with BatchGrader(1) as probe:
            styles = styles_by_cell(probe, completions)
        entry: dict[str, Any] = {"styles": {f"level{lv}_{d}": style for (lv, d), style in styles.items()}}
        # The per-call loop on fresh completions: step 1's batch, new to the shared worker too.
        entry["per_call_fresh"] = time_per_call(fresh(completions, styles, 1))
        entry["per_call_warm"] = time_per_call(completions, repeat=True)
        entry["batch"] = [time_batches(completions, workers, args.steps, styles) for workers in (1, 2)]
        best_fresh = min(run["fresh"]["median_ms"] for run in entry["batch"]) / 1000
        best_warm = min(run["warm"]["median_ms"] for run in entry["batch"]) / 1000
        entry["fresh_vs_per_call"] = round(entry["per_call_fresh"]["seconds"] / best_fresh, 1)
        entry["warm_vs_per_call"] = round(entry["per_call_warm"]["seconds"] / best_warm, 1)
        result["mixes"][name] = entry
        print(json.dumps({name: entry}), flush=True)
    if args.memory_steps:
        result["memory"] = memory(batch(NON_MATHIR), args.memory_steps)
        print(json.dumps({"memory": result["memory"]}), flush=True)
    result["loadavg_end"] = os.getloadavg()
    if args.output is not None:
        args.output.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
