"""Publishing a finished run: the evaluate input, the per-draw sidecar and the run metadata.

Everything is read back from the ledger in prompt order and draw order, never in completion
order, so an interrupted and resumed run publishes the same bytes as an uninterrupted one.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

from modebench.generate._ledger import Draw, DrawLedger
from modebench.generate._plan import SEED_DERIVATION, Loaded
from modebench.generate._settings import GenerationSettings
from modebench.publish import atomic_output
from modebench.run_metadata import validate_run

__all__ = [
    "FAILED_DRAW_RESPONSE",
    "RUN_SCHEMA",
    "build_run",
    "response_text",
    "write_draws",
    "write_output",
    "write_run",
]

RUN_SCHEMA = "modebench-generation-run-v1"
#: A failed draw is kept in the evaluate input as this response, which grades ``malformed``:
#: dropping it would raise accuracy, and the evaluator requires the same draw count everywhere.
FAILED_DRAW_RESPONSE = ""
#: At most this many failed draws are listed one by one in run metadata (all are in the sidecar).
LISTED_FAILURES = 100


def response_text(draw: Draw) -> str:
    """The draw's response in the evaluate input (also what ``generate --evaluate`` grades ahead)."""
    return draw.text if draw.ok else FAILED_DRAW_RESPONSE


def write_output(path: Path, loaded: Loaded, ledger: DrawLedger, *, replace: bool) -> None:
    with atomic_output(path, replace=replace) as handle:
        for prompt in loaded.prompts:
            responses = [response_text(d) for d in ledger.draws(prompt.id)]
            handle.write(json.dumps({**prompt.record, "responses": responses}, allow_nan=False) + "\n")


def write_draws(path: Path, loaded: Loaded, ledger: DrawLedger) -> None:
    with atomic_output(path, replace=True) as handle:
        for draw in ledger.all_draws(prompt.id for prompt in loaded.prompts):
            handle.write(json.dumps(draw.sidecar(), allow_nan=False) + "\n")


def write_run(path: Path, run: dict[str, Any]) -> None:
    with atomic_output(path, replace=True) as handle:
        handle.write(json.dumps(run, indent=2) + "\n")


def _revision(settings: GenerationSettings, draws: list[Draw]) -> str:
    """The declared revision, else what the server reported (model names @ fingerprints)."""
    if settings.model_revision is not None:
        return settings.model_revision
    models = sorted({d.model for d in draws if d.model})
    fingerprints = sorted({d.fingerprint for d in draws if d.fingerprint})
    if not models and not fingerprints:
        return "unreported"
    text = ",".join(models) if models else settings.model
    return f"{text}@{','.join(fingerprints)}" if fingerprints else text


def build_run(
    settings: GenerationSettings, loaded: Loaded, ledger: DrawLedger, draws_file: str | None
) -> dict[str, Any]:
    """Run metadata filled from what was sent and what the server reported (``docs/generate.md``)."""
    draws = list(ledger.all_draws(prompt.id for prompt in loaded.prompts))
    failed = [d for d in draws if not d.ok]
    generation: dict[str, Any] = {
        "draws_per_prompt": settings.k,
        "api": "chat.completions" if settings.api == "chat" else "completions",
        **settings.sampling(),
        "seed": settings.seed,
        "seed_derivation": SEED_DERIVATION if settings.seed is not None else None,
        "choices_per_request": settings.choices_per_request,
    }
    if settings.api == "completions":
        generation["prompt_template"] = "chatml"
    run: dict[str, Any] = {
        "schema": RUN_SCHEMA,
        "model": {"id": settings.model, "revision": _revision(settings, draws)},
        "generation": generation,
        "prompt_condition": settings.prompt_condition,
        "endpoint": {"base_url": settings.base_url},
        "server": {
            "models": sorted({d.model for d in draws if d.model}),
            "system_fingerprints": sorted({d.fingerprint for d in draws if d.fingerprint}),
        },
        "source": loaded.description,
        "draws": {
            "prompts": len(loaded.prompts),
            "total": len(draws),
            "completed": len(draws) - len(failed),
            "failed": len(failed),
            "failed_draw_response": FAILED_DRAW_RESPONSE,
            "failures": [
                {"id": d.prompt, "draw": d.draw, "error": d.error} for d in failed[:LISTED_FAILURES]
            ],
            "finish_reasons": dict(sorted(Counter(d.finish_reason or "none" for d in draws if d.ok).items())),
            "usage": {
                "prompt_tokens": sum(d.prompt_tokens or 0 for d in draws),
                "completion_tokens": sum(d.completion_tokens or 0 for d in draws),
            },
            "sidecar": draws_file,
        },
    }
    return validate_run(run)


def draws_path(output: Path) -> Path:
    return output.with_suffix(".draws.jsonl")


def run_path(output: Path) -> Path:
    return output.with_suffix(".run.json")


def ledger_path(output: Path) -> Path:
    return output.with_suffix(".ledger.sqlite")


def fspath(path: Path) -> str:
    return os.fspath(path)
