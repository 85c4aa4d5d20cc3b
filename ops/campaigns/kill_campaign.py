"""Kill campaign: SIGKILL ``modebench evaluate`` at random moments, resume, compare bytes.

Runs one uninterrupted evaluation of a generated input, then chains of interrupted ones: each
invocation is killed (SIGKILL) at a random moment of validation, grading or finalisation and
the next one is the same command plus ``--resume`` (the very first one has no ``--resume``; so
does one whose predecessor died before creating its work directory). Every chain must end with
receipt cells and a journal byte-identical to the uninterrupted run, and nothing but the
journal left in the work directory.

    python ops/campaigns/kill_campaign.py --prompts 20000 --kills 20 --seed 1 --output evidence/kill-campaign-1.json

The test suite runs a reduced version (``tests/engine/test_campaigns.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SRC = Path(__file__).resolve().parents[2] / "src"
ANSWER = {"verifier": "countdown", "numbers": [2, 3, 4], "target": 9}
TEXTS = ["2+3+4", "4+3+2", "(2*3)+4-1", "3*4-2-1", "x", "", "\\boxed{9}", "2*4+3-2"]
PHASES = ("validation", "grading", "finalisation")


def write_input(path: Path, prompts: int, responses: int = 2) -> None:
    rng = random.Random(5)
    with open(path, "w") as handle:
        for index in range(prompts):
            record = {
                "id": f"p{index}",
                "level": 1 + index % 5,
                "domain": "countdown",
                "answer": ANSWER,
                "responses": [rng.choice(TEXTS) + " " * rng.randrange(3) for _ in range(responses)],
            }
            handle.write(json.dumps(record) + "\n")


def _command(source: Path, output: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "modebench", "evaluate", str(source), "--output", str(output), *extra]


def _env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(SRC))


def _events(process: subprocess.Popen[str]) -> Any:
    assert process.stderr is not None
    for line in process.stderr:
        try:
            yield json.loads(line)
        except ValueError:
            yield {"phase": "text", "line": line.rstrip()}


def plan_chain(rng: random.Random, prompts: int, kills: int) -> list[tuple[str, int]]:
    """Kill moments of one chain in run order: some in validation (which restarts from scratch
    when interrupted), most in grading, the last ones in finalisation."""
    validation = max(1, kills // 7)
    final = max(1, kills // 10)
    grading = max(0, kills - validation - final)
    # Validation reports every 100 records, grading every committed prompt.
    plan = [("validation", t) for t in sorted(rng.randrange(0, prompts, 100) for _ in range(validation))]
    plan += [("grading", t) for t in sorted(rng.randrange(0, prompts) for _ in range(grading))]
    plan += [("finalisation", prompts)] * final
    return plan


def _killed_run(
    source: Path, output: Path, phase: str, target: int, delay: float, workers: int
) -> dict[str, Any]:
    """One invocation, SIGKILLed at the planned moment (or when it gets past it)."""
    work = output.with_name(output.name + ".work")
    resume = ["--resume"] if work.exists() else []
    process = subprocess.Popen(
        _command(source, output, *resume, "--progress-every", "1", "--workers", str(workers)),
        env=_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    seen = None
    for event in _events(process):
        name = event.get("phase")
        done = event.get("completed_prompts", 0)
        if (
            (phase == "validation" and name == "validating" and done >= target)
            or (phase == "grading" and name == "grading" and done >= target)
            or (phase == "finalisation" and name == "finalizing")
            or (phase == "validation" and name in ("validated", "grading"))  # validation was skipped
            or (phase == "grading" and name in ("finalizing", "complete"))
        ):
            seen = name
            time.sleep(delay)
            break
    process.send_signal(signal.SIGKILL)
    process.wait()
    return {
        "resumed": bool(resume),
        "aimed_at": phase,
        "killed_after_event": seen,
        "target": target,
        "exit": process.returncode,
    }


def _finish(source: Path, output: Path, workers: int) -> dict[str, Any]:
    work = output.with_name(output.name + ".work")
    resume = ["--resume"] if work.exists() else []
    done = subprocess.run(
        _command(source, output, *resume, "--progress-every", "0", "--workers", str(workers)),
        env=_env(),
        capture_output=True,
        text=True,
        timeout=3600,
    )
    return {"resumed": bool(resume), "exit": done.returncode, "stderr": done.stderr[-2000:]}


def campaign(root: Path, prompts: int, kills: int, per_chain: int, seed: int) -> dict[str, Any]:
    source = root / "in.jsonl"
    write_input(source, prompts)
    started = time.monotonic()
    clean = subprocess.run(
        _command(source, root / "clean.json", "--progress-every", "0"),
        env=_env(),
        capture_output=True,
        timeout=3600,
    )
    if clean.returncode != 0:
        raise SystemExit(clean.stderr.decode())
    clean_seconds = time.monotonic() - started
    clean_cells = json.loads((root / "clean.json").read_text())["cells"]
    clean_journal = (root / "clean.json.work" / "results.jsonl").read_bytes()
    rng = random.Random(seed)
    results: list[dict[str, Any]] = []

    def close(output: Path, steps: list[dict[str, Any]]) -> None:
        final = _finish(source, output, 1 + len(results) % 2)
        work = output.with_name(output.name + ".work")
        ok = (
            final["exit"] == 0
            and output.exists()
            and json.loads(output.read_text())["cells"] == clean_cells
            and (work / "results.jsonl").read_bytes() == clean_journal
            and {entry.name for entry in work.iterdir()} == {"results.jsonl"}
        )
        results.append({"chain": len(results), "kills": steps, "final": final, "identical": ok})

    killed = 0
    while killed < kills:
        output = root / f"chain{len(results)}.json"
        steps: list[dict[str, Any]] = []
        for phase, target in plan_chain(rng, prompts, min(per_chain, kills - killed)):
            step = _killed_run(source, output, phase, target, rng.uniform(0.0, 0.2), 1 + len(steps) % 2)
            steps.append(step)
            killed += step["exit"] == -signal.SIGKILL
            if output.exists() and not (output.with_name(output.name + ".work") / "ledger.sqlite3").exists():
                break  # published and tidied: this chain can take no more kills
        close(output, steps)
    kills_done = [step for chain in results for step in chain["kills"] if step["exit"] == -signal.SIGKILL]
    return {
        "prompts": prompts,
        "responses_per_prompt": 2,
        "uninterrupted_seconds": round(clean_seconds, 1),
        "campaign_seconds": round(time.monotonic() - started, 1),
        "sigkills": len(kills_done),
        "sigkills_by_phase_aimed": {
            phase: sum(s["aimed_at"] == phase for s in kills_done) for phase in PHASES
        },
        "sigkills_after_event": sorted({str(s["killed_after_event"]) for s in kills_done}),
        "chains": len(results),
        "chains_identical": sum(chain["identical"] for chain in results),
        "all_identical": all(chain["identical"] for chain in results),
        "details": results,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--prompts", type=int, default=20000)
    parser.add_argument("--kills", type=int, default=40)
    parser.add_argument("--per-chain", type=int, default=20, help="kills before a chain is finished")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--output", help="write the result JSON here (e.g. evidence/kill-campaign.json)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="modebench-kill-") as directory:
        summary = campaign(Path(directory), args.prompts, args.kills, args.per_chain, args.seed)
    text = json.dumps(summary, indent=1) + "\n"
    if args.output:
        Path(args.output).write_text(text)
    short = {key: value for key, value in summary.items() if key != "details"}
    print(json.dumps(short, indent=1))
    return 0 if summary["all_identical"] else 1


if __name__ == "__main__":
    sys.exit(main())
