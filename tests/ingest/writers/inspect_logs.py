"""Inspect AI logs written by real Inspect running modebench's own task (``modebench/level1_countdown``).

``python tests/ingest/writers/inspect_logs.py OUT_DIR`` runs with the Inspect installed in the
current interpreter; ``… OUT_DIR --inspect-version 0.3.X --venv DIR`` first creates a virtual
environment with that Inspect and this checkout of modebench (``--no-deps`` plus SymPy) and runs
there — how the committed logs of the oldest Inspect the ``inspect`` extra allows were made.

It writes, all offline (Inspect's ``mockllm/model`` and one local model provider):

* ``mockllm.eval`` and ``mockllm.json`` — 3 samples × 2 epochs, both log formats (mockllm answers
  ``\\boxed{1}`` with its token usage given: current mockllm otherwise counts tokens with a
  tiktoken encoding it downloads, and every sample fails offline);
* ``errored.json`` — a provider that fails the second call for the first prompt; with
  ``fail_on_error=False`` that epoch is kept in the log with its ``error``;
* ``eval_set/`` — an ``eval_set`` log directory (with the bookkeeping files ``eval_set`` writes).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[3]
TASK = "modebench/level1_countdown"


def _flaky_provider() -> None:
    """Register ``flaky/once``: answers like mockllm, but fails the 2nd call for the first prompt."""
    from inspect_ai.model import ModelAPI, ModelOutput, ModelUsage, modelapi

    calls: dict[str, int] = {}

    class Flaky(ModelAPI):  # type: ignore[misc]
        async def generate(self, input: Any, tools: Any, tool_choice: Any, config: Any) -> Any:
            text = str(input[-1].content)
            calls[text] = calls.get(text, 0) + 1
            if "[2, 9, 11]" in text and calls[text] == 2:
                raise RuntimeError("provider failure (simulated)")
            output = ModelOutput.from_content(model="once", content="\\boxed{11-9-2}")
            output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
            return output

    @modelapi(name="flaky")  # type: ignore[misc]
    def flaky() -> type[ModelAPI]:
        return Flaky


def _mockllm(calls: int) -> Any:
    """mockllm with exactly ``calls`` outputs (a finite list: ``eval_set`` records model args)."""
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    outputs = []
    for _ in range(calls):
        output = ModelOutput.from_content(model="mockllm/model", content="\\boxed{1}")
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        outputs.append(output)
    return get_model("mockllm/model", custom_outputs=outputs)


def write(out: Path) -> None:
    from inspect_ai import eval as inspect_eval
    from inspect_ai import eval_set

    out.mkdir(parents=True, exist_ok=True)
    scratch = out / ".scratch"
    for fmt in ("eval", "json"):
        logs = inspect_eval(
            TASK, model=_mockllm(6), limit=3, epochs=2, log_dir=str(scratch / fmt), log_format=fmt,
            display="none",
        )  # fmt: skip
        shutil.move(logs[0].location, out / f"mockllm.{fmt}")
    _flaky_provider()
    logs = inspect_eval(
        TASK, model="flaky/once", limit=2, epochs=2, fail_on_error=False, log_dir=str(scratch / "flaky"),
        log_format="json", display="none",
    )  # fmt: skip
    shutil.move(logs[0].location, out / "errored.json")
    eval_set(
        TASK, model=_mockllm(4), limit=2, epochs=2, log_dir=str(out / "eval_set"), log_format="eval",
        display="none",
    )  # fmt: skip
    shutil.rmtree(scratch)


def _in_venv(out: Path, version: str, venv: Path) -> None:
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(python), "-m", "pip", "install", "--quiet"]
    subprocess.run([*pip, f"inspect-ai=={version}", "sympy>=1.12,<2", "pyarrow>=21"], check=True)
    subprocess.run([*pip, "--no-deps", "-e", str(REPO)], check=True)
    env = {**os.environ, "PYTHONPATH": ""}
    subprocess.run([str(python), __file__, str(out)], check=True, env=env)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out", type=Path)
    parser.add_argument("--inspect-version")
    parser.add_argument("--venv", type=Path)
    args = parser.parse_args()
    if args.inspect_version:
        _in_venv(
            args.out.resolve(),
            args.inspect_version,
            args.venv or Path(f".venv-inspect-{args.inspect_version}"),
        )
    else:
        write(args.out)
        import inspect_ai

        (args.out / "INSPECT_VERSION").write_text(getattr(inspect_ai, "__version__", "unknown") + "\n")
    print(args.out)
