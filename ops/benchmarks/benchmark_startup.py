"""Start-up cost: what a one-prompt run and a first ``grade()`` cost before any real work.

Each measurement runs in a fresh interpreter, timed from outside; CPU seconds are the child
process tree's (the interpreter and the grading workers it starts), which a loaded machine
inflates far less than wall time. The median of ``--repeat`` runs is reported.

    python ops/benchmarks/benchmark_startup.py --repeat 5

* ``bare python``: ``python -c pass`` (the floor);
* ``import modebench.api``: the public surface;
* ``first grade()``: import, then ``api.grade`` of one countdown response (starts the worker);
* ``first MathIR grade()``: the same for one MathIR response to a released-family menu reference
  (the worker warms MathIR: its transition table, not SymPy, which the table makes unnecessary);
* ``one-prompt evaluate``: ``modebench evaluate`` of one countdown prompt (k = 8), CLI to receipt.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
TASK = {"numbers": [2, 4, 5], "target": 7, "verifier": "countdown"}
FIRST_GRADE = (
    "from modebench.api import Task, grade\n"
    f"task = Task('t', 1, 'countdown', 'Make 7 from 2, 4, 5.', {TASK!r})\n"
    "assert grade(task, '\\\\boxed{(5-2)+4}')['status'] == 'correct'\n"
)
#: The MathIR reference of docs/scoring/mathir.md (family ``x_over_a_plus_b_eq_c``).
MATHIR_TASK = {
    "verifier": "mathir_action_menu",
    "mathir_version": "linear-menu-v1",
    "bindings": {"a": 2, "b": -9, "c": -1},
    "initial_lhs": "add(div(x,a),b)",
    "initial_rhs": "c",
    "max_steps": 4,
    "actions": {
        "A": "div(a)",
        "B": "add(b)",
        "C": "sub(b)",
        "D": "sub(c)",
        "E": "sub(mul(a,b))",
        "F": "mul(a)",
    },
}
FIRST_MATHIR_GRADE = (
    "from modebench.api import Task, grade\n"
    f"task = Task('m', 1, 'mathir', 'Solve for x.', {MATHIR_TASK!r})\n"
    "assert grade(task, '\\\\boxed{C;F}')['status'] == 'correct'\n"
)
RECORD = {
    "id": "p0",
    "level": 1,
    "domain": "countdown",
    "answer": json.dumps(TASK),
    "responses": ["\\boxed{(5-2)+4}", "\\boxed{5+4/2}", "\\boxed{42}", "no idea"] * 2,
}
RUN = {
    "model": {"id": "startup", "revision": "0"},
    "generation": {"temperature": 1.0},
    "prompt_condition": "registered_hints_v1",
}


def timed(command: list[str], cwd: Path) -> tuple[float, float]:
    """Wall and CPU seconds (user + system, the whole process tree) of one command."""
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(command, cwd=cwd, env=env, check=True, capture_output=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--output", default=str(ROOT / "ops" / "results" / "startup.json"))
    args = parser.parse_args()
    python = sys.executable
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="modebench-startup-") as temp:
        scratch = Path(temp)
        (scratch / "one.jsonl").write_text(json.dumps(RECORD) + "\n", encoding="utf-8")
        (scratch / "run.json").write_text(json.dumps(RUN), encoding="utf-8")
        cases: dict[str, Any] = {
            "bare python": lambda _: [python, "-c", "pass"],
            "import modebench.api": lambda _: [python, "-c", "import modebench.api"],
            "first grade()": lambda _: [python, "-c", FIRST_GRADE],
            "first MathIR grade()": lambda _: [python, "-c", FIRST_MATHIR_GRADE],
            "one-prompt evaluate": lambda index: [
                python,
                "-c",
                "import sys; from modebench.cli import main; sys.exit(main())",
                "evaluate",
                "one.jsonl",
                "--run",
                "run.json",
                "--output",
                f"out-{index}.json",
                "--workers",
                "1",
                "--progress-every",
                "0",
            ],
        }
        for name, command in cases.items():
            load = [round(value, 2) for value in os.getloadavg()]
            samples = [timed(command(index), scratch) for index in range(args.repeat)]
            row = {
                "case": name,
                "wall_seconds": round(statistics.median(wall for wall, _ in samples), 3),
                "cpu_seconds": round(statistics.median(cpu for _, cpu in samples), 3),
                "repeat": args.repeat,
                "load": load,
            }
            rows.append(row)
            print(json.dumps(row), flush=True)
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    payload = {"benchmark": "start-up", "cpu_count": os.cpu_count(), "runs": rows}
    Path(args.output).write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    print(f"written: {args.output}")


if __name__ == "__main__":
    main()
