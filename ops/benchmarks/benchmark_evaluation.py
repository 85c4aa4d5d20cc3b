"""Throughput and memory of `modebench evaluate` on generated inputs covering all 25 cells.

Input shapes, k responses per prompt:
* ``mixed``: references drawn from a pool per cell and responses drawn with the skew real model
  output has (a few modes repeat often; wrong and malformed answers recur), so caches help;
* ``distinct``: every (reference, response) pair is distinct (a unique prompt-specific preamble
  precedes each boxed answer), so no result cache can help;
* ``all-distinct``: every prompt has its own freshly generated reference, graded against up to
  five of its certified modes plus distinct wrong and malformed answers;
* ``rl``: shaped like the grading log of an RL run (``RL_MIX`` below): prompts revisit a per-cell
  pool of references as a trainer's epochs do, each prompt's accuracy falls with its level (MathIR,
  the hardest domain, lowest), correct answers collapse onto a prompt's first modes, wrong answers
  are well-formed answers of another instance of the cell (incorrect, not malformed), malformed
  ones are the few shapes a sampler produces (empty/truncated, no boxed answer, an empty box).
  ModeBench 0.4.0 grades it at 150–180 responses per CPU second (1,000 prompts: 164 and 178 in
  two runs, 2 cores, measured under load, so by CPU time); ``mixed``, whose
  MathIR share is mostly correct multi-step answers, costs 0.4.0 about ten times more per response.

Each run happens in a fresh process that reports responses/s, its own peak RSS and the peak RSS
of its worker processes. Results are printed and written as JSON.

    python ops/benchmarks/benchmark_evaluation.py --sizes 1000 10000 --workers 1 2 --shape mixed distinct

``--compare`` runs the side-by-side inputs (rl, 1,000 prompts; mixed, 1,000 prompts;
all-distinct, 652 prompts; k = 8) through the ``modebench evaluate`` command with ``--workers 1``, and, given
``--reference-python`` (an interpreter with ModeBench 0.4.0 installed), through the reference
too, checking that the receipt cells are identical. The per-response rate of every sized run is
then also compared with the reference's rate on the mixed input of the same session.

    python ops/benchmarks/benchmark_evaluation.py --compare --reference-python /path/to/0.4.0/bin/python \
        --sizes 10000 100000 --workers 1 2 --shape mixed
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "src"))

from modebench.contracts import DOMAINS  # noqa: E402
from modebench.domains import plugin  # noqa: E402

POOL_PER_CELL = 8
#: The ``rl`` shape: references per cell (prompts revisit them), accuracy by level, a domain's
#: factor on it, and a domain's share of wrong answers that are well formed (the rest are malformed).
RL_MIX: dict[str, Any] = {
    "pool_per_cell": 24,
    "accuracy_by_level": {1: 0.7, 2: 0.6, 3: 0.5, 4: 0.4, 5: 0.3},
    "domain_factor": {"mathir": 0.1},
    "well_formed_wrong": {"mathir": 0.25},  # default 0.5: a made-up action language is often misformatted
    "malformed": ["", "I am not sure.", "\\boxed{}", "Let me think step by step. First,"],
}
RUN = {
    "model": {"id": "benchmark", "revision": "0"},
    "generation": {"temperature": 1.0},
    "prompt_condition": "registered_hints_v1",
}

DRIVER = """
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
from modebench.streaming import evaluate_file
def cpu(who):
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime
marks = {}
def progress(event):
    if event["phase"] in ("validated", "finalizing"):
        marks.setdefault(event["phase"], (time.perf_counter(), cpu(resource.RUSAGE_SELF)))
started = time.perf_counter()
summary = evaluate_file(sys.argv[2], sys.argv[3], run=json.loads(sys.argv[4]), workers=int(sys.argv[5]),
                        progress=progress)
elapsed = time.perf_counter() - started
validated = marks.get("validated", (started, 0.0))
# ru_maxrss of a process started by fork and exec counts the forking process's size too (Linux
# keeps it across exec); VmHWM is this program's own peak.
parent_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:
    with open("/proc/self/status") as status:
        parent_kib = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
except (OSError, StopIteration):
    pass
print(json.dumps({"seconds": elapsed, "status": summary["status"],
                  "preflight_seconds": validated[0] - started, "preflight_parent_cpu": validated[1],
                  "parent_cpu": cpu(resource.RUSAGE_SELF), "worker_cpu": cpu(resource.RUSAGE_CHILDREN),
                  "parent_rss_kib": parent_kib,
                  "worker_rss_kib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}))
"""


def _pool() -> dict[tuple[int, str], list[tuple[dict[str, Any], list[str]]]]:
    pool = {}
    for domain in DOMAINS:
        found = plugin(domain)
        assert found.generate is not None and found.witnesses is not None
        for level in range(1, 6):
            entries = []
            for seed in range(POOL_PER_CELL):
                row = found.generate(level, random.Random(1000 * level + seed))
                answer = json.loads(row["answer"])
                entries.append((row, found.witnesses(level, answer)[:6]))
            pool[(level, domain)] = entries
    return pool


def _responses(rng: random.Random, witnesses: list[str], k: int, unique: str | None) -> list[str]:
    out = []
    for _ in range(k):
        roll = rng.random()
        if roll < 0.55:  # correct, skewed towards the first modes (mode collapse)
            text = witnesses[min(int(rng.expovariate(1.2)), len(witnesses) - 1)]
        elif roll < 0.8:
            text = rng.choice(["\\boxed{0}", "\\boxed{1}", "\\boxed{42}"])
        else:
            text = rng.choice(["I am not sure.", "not a solution", ""])
        if unique is not None:
            text = (
                f"Attempt {unique}-{len(out)}: reasoning omitted.\n{text}"
                if text
                else f"Attempt {unique}-{len(out)}"
            )
        out.append(text)
    return out


def write_input(path: Path, prompts: int, k: int, shape: str, pool: dict[tuple[int, str], list[Any]]) -> int:
    rng = random.Random(prompts * 7 + k)
    cells = sorted(pool)
    responses = 0
    with open(path, "w", encoding="utf-8") as handle:
        for index in range(prompts):
            level, domain = cells[index % len(cells)]
            row, witnesses = rng.choice(pool[(level, domain)])
            unique = str(index) if shape == "distinct" else None
            record = {
                "id": f"p{index}",
                "level": level,
                "domain": domain,
                "problem": row["problem"],
                "answer": row["answer"],
                "responses": _responses(rng, witnesses, k, unique),
            }
            handle.write(json.dumps(record) + "\n")
            responses += k
    return responses


def _rl_pool() -> dict[tuple[int, str], list[tuple[dict[str, Any], list[str]]]]:
    pool = {}
    for domain in DOMAINS:
        found = plugin(domain)
        assert found.generate is not None and found.witnesses is not None
        for level in range(1, 6):
            entries = []
            for seed in range(RL_MIX["pool_per_cell"]):
                row = found.generate(level, random.Random(f"rl-{level}-{domain}-{seed}"))
                entries.append((row, found.witnesses(level, json.loads(row["answer"]))[:6]))
            pool[(level, domain)] = entries
    return pool


def write_rl(path: Path, prompts: int, k: int) -> int:
    """The ``rl`` shape (module docstring, ``RL_MIX``): all 25 cells in turn, k responses each."""
    pool = _rl_pool()
    cells = sorted(pool)
    rng = random.Random(f"rl-{prompts}-{k}")
    with open(path, "w", encoding="utf-8") as handle:
        for index in range(prompts):
            level, domain = cells[index % len(cells)]
            entries = pool[(level, domain)]
            row, witnesses = rng.choice(entries)
            accuracy = RL_MIX["accuracy_by_level"][level] * RL_MIX["domain_factor"].get(domain, 1.0)
            # A prompt's wrong answers: well-formed answers of two other instances of its cell.
            others = [entry[1][0] for entry in rng.sample(entries, 3) if entry[0] is not row and entry[1]][:2]
            texts = []
            for _ in range(k):
                roll = rng.random()
                if roll < accuracy and witnesses:
                    texts.append(witnesses[min(int(rng.expovariate(1.5)), len(witnesses) - 1)])
                elif others and rng.random() < RL_MIX["well_formed_wrong"].get(domain, 0.5):
                    texts.append(rng.choice(others))
                else:
                    texts.append(rng.choice(RL_MIX["malformed"]))
            record = {
                "id": f"r{index}",
                "level": level,
                "domain": domain,
                "problem": row["problem"],
                "answer": row["answer"],
                "responses": texts,
            }
            handle.write(json.dumps(record) + "\n")
    return prompts * k


def write_all_distinct(path: Path, prompts: int, k: int) -> int:
    """Every prompt its own reference (fresh generator seed); responses distinct within it."""
    cells = [(level, domain) for level in range(1, 6) for domain in DOMAINS]
    wrong = ["\\boxed{0}", "\\boxed{1}", "\\boxed{42}", "not a solution", "I am not sure.", ""]
    responses = 0
    with open(path, "w", encoding="utf-8") as handle:
        for index in range(prompts):
            level, domain = cells[index % len(cells)]
            found = plugin(domain)
            assert found.generate is not None and found.witnesses is not None
            row = found.generate(level, random.Random(f"all-distinct-{index}"))
            texts = found.witnesses(level, json.loads(row["answer"]))[:5]
            texts += [text for text in wrong if text not in texts][: k - len(texts)]
            record = {
                "id": f"d{index}",
                "level": level,
                "domain": domain,
                "problem": row["problem"],
                "answer": row["answer"],
                "responses": texts,
            }
            handle.write(json.dumps(record) + "\n")
            responses += len(texts)
    return responses


def run_cli(python: str, source: Path, scratch: Path, label: str, workers: int = 1) -> dict[str, Any]:
    """``python -m modebench evaluate`` as a user runs it, timed from outside; the receipt's cells."""
    output = scratch / f"{label}-{time.monotonic_ns()}.json"
    run = scratch / "run.json"
    run.write_text(json.dumps(RUN), encoding="utf-8")
    env = dict(os.environ)
    if python == sys.executable:
        env["PYTHONPATH"] = str(ROOT / "src")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        # The console script's entry point, for an interpreter whose package has no __main__ too.
        [python, "-c", "import sys; from modebench.cli import main; sys.exit(main())"]
        + ["evaluate", str(source), "--run", str(run), "--output", str(output)]
        + ["--workers", str(workers), "--progress-every", "0"],
        capture_output=True,
        text=True,
        env=env,
        cwd=scratch,
    )
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if not output.is_file():
        raise RuntimeError(f"{label}: no receipt (exit {done.returncode}): {done.stderr[-2000:]}")
    receipt = json.loads(output.read_text(encoding="utf-8"))
    # CPU seconds of the command and its workers (waited for, so counted): on a loaded machine
    # the rate by CPU time, not by the wall clock, is the one to compare.
    return {
        "seconds": seconds,
        "cpu_seconds": cpu,
        "cells": receipt["cells"],
        "status": receipt["evaluation"]["status"],
    }


def load_average() -> list[float]:
    return [round(value, 2) for value in os.getloadavg()]


COMPARE_INPUTS = {"rl": 1000, "mixed": 1000, "all-distinct": 652}


def _median_run(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The run of median wall time (an odd count: a real run, its own CPU seconds and cells)."""
    return sorted(runs, key=lambda run: run["seconds"])[len(runs) // 2]


def compare(
    pool: dict[tuple[int, str], list[Any]],
    scratch: Path,
    reference: str | None,
    names: list[str],
    repeat: int = 1,
) -> list[dict[str, Any]]:
    """Each input through both sides ``repeat`` times, interleaved (ours, theirs, ours, ...) so
    that a drift of the machine's speed falls on both; each side's median run is reported, with
    every run's wall time beside it."""
    rows = []
    for shape in names:
        prompts = COMPARE_INPUTS[shape]
        source = scratch / f"compare-{shape}-{prompts}.jsonl"
        if shape == "mixed":
            responses = write_input(source, prompts, 8, shape, pool)
        elif shape == "rl":
            responses = write_rl(source, prompts, 8)
        else:
            responses = write_all_distinct(source, prompts, 8)
        row: dict[str, Any] = {"input": shape, "prompts": prompts, "responses": responses, "workers": 1}
        row["load_before"] = load_average()
        our_runs: list[dict[str, Any]] = []
        their_runs: list[dict[str, Any]] = []
        for _ in range(repeat):
            our_runs.append(run_cli(sys.executable, source, scratch, "ours"))
            if reference is not None:
                their_runs.append(run_cli(reference, source, scratch, "reference"))
        ours = _median_run(our_runs)
        if repeat > 1:
            row["runs"] = repeat
            row["all_seconds"] = [round(run["seconds"], 3) for run in our_runs]
            row["cells_identical_every_run"] = all(run["cells"] == ours["cells"] for run in our_runs)
            if reference is not None:
                row["reference_all_seconds"] = [round(run["seconds"], 3) for run in their_runs]
        row["seconds"] = round(ours["seconds"], 2)
        row["responses_per_second"] = round(responses / ours["seconds"], 1)
        row["cpu_seconds"] = round(ours["cpu_seconds"], 2)
        row["responses_per_cpu_second"] = round(responses / ours["cpu_seconds"], 1)
        row["status"] = ours["status"]
        if reference is not None:
            theirs = _median_run(their_runs)
            row["reference_seconds"] = round(theirs["seconds"], 2)
            row["reference_responses_per_second"] = round(responses / theirs["seconds"], 2)
            row["reference_cpu_seconds"] = round(theirs["cpu_seconds"], 2)
            row["reference_responses_per_cpu_second"] = round(responses / theirs["cpu_seconds"], 2)
            row["reference_status"] = theirs["status"]
            row["cells_identical"] = ours["cells"] == theirs["cells"]
            row["speedup"] = round(theirs["seconds"] / ours["seconds"], 1)
            row["cpu_speedup"] = round(theirs["cpu_seconds"] / ours["cpu_seconds"], 1)
        row["load_after"] = load_average()
        rows.append(row)
        print(json.dumps(row), flush=True)
        source.unlink()
    return rows


def run_once(source: Path, workers: int, scratch: Path, src: Path = ROOT / "src") -> dict[str, Any]:
    output = scratch / f"receipt-{time.monotonic_ns()}.json"
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            DRIVER,
            str(src),
            str(source),
            str(output),
            json.dumps(RUN),
            str(workers),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument(
        "--shape",
        nargs="*",
        default=["mixed", "distinct"],
        choices=["rl", "mixed", "distinct", "all-distinct"],
    )
    parser.add_argument("--k", type=int, default=8)
    parser.add_argument("--compare", action="store_true", help="the two side-by-side inputs first")
    parser.add_argument(
        "--repeat", type=int, default=1, help="side-by-side runs per side (odd; the median run is reported)"
    )
    parser.add_argument(
        "--compare-inputs", nargs="+", default=list(COMPARE_INPUTS), choices=list(COMPARE_INPUTS)
    )
    parser.add_argument("--reference-python", help="interpreter with modebench==0.4.0 installed")
    parser.add_argument(
        "--rate-input",
        default="rl",
        choices=list(COMPARE_INPUTS),
        help="sized runs' rates are over this one's",
    )
    parser.add_argument("--output", default=str(ROOT / "ops" / "results" / "evaluation.json"))
    parser.add_argument(
        "--src", default=str(ROOT / "src"), help="the modebench source tree to time (sized runs)"
    )
    args = parser.parse_args()
    if args.repeat < 1 or args.repeat % 2 == 0:
        parser.error("--repeat takes an odd count (the median run is reported)")
    needs_pool = (args.compare and "mixed" in args.compare_inputs) or {"mixed", "distinct"} & set(args.shape)
    pool = _pool() if needs_pool else {}
    rows = []
    compared: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="modebench-bench-") as temp:
        scratch = Path(temp)
        if args.compare:
            compared = compare(pool, scratch, args.reference_python, args.compare_inputs, args.repeat)
        reference_rate = next(
            (
                row.get("reference_responses_per_second")
                for row in compared
                if row["input"] == args.rate_input
            ),
            None,
        )
        for shape in args.shape:
            for size in args.sizes:
                source = scratch / f"{shape}-{size}.jsonl"
                if shape == "all-distinct":
                    responses = write_all_distinct(source, size, args.k)
                elif shape == "rl":
                    responses = write_rl(source, size, args.k)
                else:
                    responses = write_input(source, size, args.k, shape, pool)
                for workers in args.workers:
                    load = load_average()
                    measured = run_once(source, workers, scratch, Path(args.src))
                    row = {
                        "shape": shape,
                        "prompts": size,
                        "k": args.k,
                        "workers": workers,
                        "responses": responses,
                        "seconds": round(measured["seconds"], 2),
                        "responses_per_second": round(responses / measured["seconds"], 1),
                        "parent_peak_rss_mib": round(measured["parent_rss_kib"] / 1024, 1),
                        "worker_peak_rss_mib": round(measured["worker_rss_kib"] / 1024, 1),
                        "status": measured["status"],
                        # CPU seconds by process: on a loaded machine they, not the wall time,
                        # show where the time goes. On C idle cores a run takes about
                        # max(parent, workers' / min(workers, C - 1), (parent + workers') / C).
                        "parent_cpu_seconds": round(measured["parent_cpu"], 2),
                        # The serial share the issue bounds (#41: <= 0.2 ms at 100k prompts).
                        "parent_cpu_ms_per_prompt": round(1000 * measured["parent_cpu"] / size, 3),
                        "worker_cpu_seconds": round(measured["worker_cpu"], 2),
                        # Since #41, prompts are graded while preflight runs: "preflight" ends
                        # at the validated event, by which most prompts are graded too.
                        "preflight_seconds": round(measured["preflight_seconds"], 2),
                        "preflight_parent_cpu_seconds": round(measured["preflight_parent_cpu"], 2),
                        "load_before": load,
                        "load_after": load_average(),
                    }
                    if reference_rate:
                        row[f"rate_over_reference_{args.rate_input}_1k"] = round(
                            row["responses_per_second"] / reference_rate, 1
                        )
                    rows.append(row)
                    print(json.dumps(row), flush=True)
                source.unlink()
    payload: dict[str, Any] = {"benchmark": "modebench evaluate", "cpu_count": os.cpu_count(), "runs": rows}
    if compared:
        payload["side_by_side"] = compared
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    print(f"written: {args.output}")


if __name__ == "__main__":
    main()
