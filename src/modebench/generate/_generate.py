"""``generate_responses``: plan, send what the ledger lacks, publish, optionally evaluate."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, Any, cast

from modebench.api_types import EvaluationOptions, RunMetadata, Split
from modebench.contracts import install_hint
from modebench.engine import Execution, RunSpec, evaluate
from modebench.engine.outcome import evaluation_receipt
from modebench.generate import _output
from modebench.generate._client import Stats, send_all
from modebench.generate._ledger import Draw, DrawLedger
from modebench.generate._plan import (
    FrozenSplitSource,
    Loaded,
    Source,
    TaskFileSource,
    load_prompts,
    plan_requests,
)
from modebench.generate._pregrade import PreGrader
from modebench.generate._settings import GenerationSettings
from modebench.generate._shards import send_sharded
from modebench.validation import InputError, output_exists

__all__ = ["GENERATE_EXTRA_MESSAGE", "GenerationResult", "generate_responses"]

GENERATE_EXTRA_MESSAGE = f"generation requires the 'generate' extra: {install_hint('generate')}"
#: Sent when no API key is configured: local servers (vLLM, SGLang, llama.cpp) accept any key.
PLACEHOLDER_KEY = "EMPTY"
PathLike = str | os.PathLike[str]


@dataclass(frozen=True)
class GenerationResult:
    output: Path
    run_output: Path
    draws_output: Path
    ledger: Path
    prompts: int
    draws: int
    #: Draws sent by this invocation (the rest were already in the ledger).
    sent: int
    failed: int
    requests: int
    retries: int
    completion_tokens: int
    seconds: float
    run: dict[str, Any]
    #: The receipt summary when evaluation was requested.
    receipt: Any = None
    #: With a receipt: prompts graded while generating and memo hits of the evaluation.
    pregrade: dict[str, Any] | None = None

    def summary(self) -> dict[str, Any]:
        """The JSON the CLI prints."""
        out: dict[str, Any] = {
            "output": os.fspath(self.output),
            "run": os.fspath(self.run_output),
            "draws_file": os.fspath(self.draws_output),
            "ledger": os.fspath(self.ledger),
            "prompts": self.prompts,
            "draws": self.draws,
            "sent": self.sent,
            "failed_draws": self.failed,
            "retries": self.retries,
            "seconds": round(self.seconds, 2),
        }
        if self.receipt is not None:
            out["receipt"] = os.fspath(self.receipt.output)
            out["status"] = self.receipt.status
        if self.pregrade is not None:
            out.update(self.pregrade)
        return out


def _require_openai() -> None:
    try:
        import openai  # noqa: F401, PLC0415 - optional extra: generate (openai)
    except ImportError:
        raise InputError(GENERATE_EXTRA_MESSAGE) from None


def _api_key(name: str) -> str:
    value = os.environ.get(name)
    return value if value else PLACEHOLDER_KEY


def _identity(settings: GenerationSettings, loaded: Loaded) -> dict[str, Any]:
    """What must not change between an interrupted run and its resumption."""
    return {
        "schema": _output.RUN_SCHEMA,
        "model": settings.model,
        "base_url": settings.base_url,
        "k": settings.k,
        "api": settings.api,
        "sampling": settings.sampling(),
        "seed": settings.seed,
        "choices_per_request": settings.choices_per_request,
        "prompt_condition": settings.prompt_condition,
        "prompts": [[p.id, p.messages] for p in loaded.prompts],
    }


def generate_responses(
    source: Source,
    output: PathLike,
    settings: GenerationSettings,
    *,
    run_output: PathLike | None = None,
    retry_failed: bool = False,
    progress: Callable[[dict[str, Any]], None] | None = None,
    receipt: PathLike | None = None,
    options: EvaluationOptions | None = None,
    copy_to: IO[bytes] | None = None,
) -> GenerationResult:
    """Sample ``settings.k`` draws per prompt of ``source`` into an evaluate-ready JSONL file.

    Finished draws go to a ledger next to ``output`` as they arrive; calling again with the same
    arguments after an interruption sends only the missing draws. ``retry_failed`` also resends
    draws that failed after all retries (and then replaces an existing output). ``copy_to`` gets
    the published output's bytes (pipe mode: ``generate --stdout | evaluate -``); only a
    complete, published output is ever copied, so a failed run sends the reader nothing.
    ``options`` are the evaluation's (with ``receipt``); the run metadata just written, and a
    frozen source's configuration, split and registry, are filled in.
    """
    _require_openai()
    started = time.monotonic()
    out = Path(output)
    run_file = Path(run_output) if run_output is not None else _output.run_path(out)
    draws_file = _output.draws_path(out)
    ledger_file = _output.ledger_path(out)
    if out.exists() and not retry_failed:
        raise output_exists(out)
    if receipt is not None and Path(receipt).exists():
        raise output_exists(receipt)
    if receipt is not None and not isinstance(source, (FrozenSplitSource, TaskFileSource)):
        raise InputError("evaluation right after generation needs a frozen config or a task file")
    loaded = load_prompts(source, settings.prompt_condition)
    api_key = _api_key(settings.api_key_env)
    out.parent.mkdir(parents=True, exist_ok=True)
    # With a receipt to make, prompts are graded as their draws complete; the evaluation after
    # publication takes those results instead of grading again (``docs/generate.md``).
    pregrader = PreGrader(source, loaded, settings.k) if receipt is not None else None
    try:
        result = _generate(
            loaded, settings, api_key, out, run_file, draws_file, ledger_file, retry_failed, progress,
            copy_to, pregrader, started,
        )  # fmt: skip
        if pregrader is None or receipt is None:
            return result
        pregrader.finish()  # the prompts completed last are graded while the files are published
        chosen = options if options is not None else EvaluationOptions()
        return _evaluate(result, source, loaded, receipt, chosen, pregrader)
    finally:
        if pregrader is not None:
            pregrader.close()


def _generate(
    loaded: Loaded,
    settings: GenerationSettings,
    api_key: str,
    out: Path,
    run_file: Path,
    draws_file: Path,
    ledger_file: Path,
    retry_failed: bool,
    progress: Callable[[dict[str, Any]], None] | None,
    copy_to: IO[bytes] | None,
    pregrader: PreGrader | None,
    started: float,
) -> GenerationResult:
    with DrawLedger(ledger_file, _identity(settings, loaded)) as ledger:
        if retry_failed:
            ledger.forget_failed()
        if pregrader is not None:  # a resumed run grades the prompts it already has
            pregrader.add(ledger.all_draws(prompt.id for prompt in loaded.prompts))
        requests = plan_requests(
            loaded.prompts, settings.k, settings.choices_per_request, settings.seed, ledger.done()
        )
        stats = Stats(total=sum(r.count for r in requests))
        _emit(progress, stats, "generating", pregrader)
        if requests:

            def on_result(draws: list[Draw]) -> None:
                ledger.record(draws)
                stats.add(draws)
                if pregrader is not None:
                    pregrader.add(draws)
                _emit(progress, stats, "generating", pregrader)

            if settings.processes > 1:
                send_sharded(
                    settings, api_key, loaded.prompts, requests, on_result, settings.processes, ledger.tick
                )
            else:
                send_all(settings, api_key, loaded.prompts, requests, on_result, tick=ledger.tick)
            ledger.flush()
        _emit(progress, stats, "publishing", pregrader)
        run = _output.build_run(settings, loaded, ledger, draws_file.name)
        _output.write_draws(draws_file, loaded, ledger)
        _output.write_run(run_file, run)
        _output.write_output(out, loaded, ledger, replace=retry_failed)
    if copy_to is not None:
        with open(out, "rb") as published:
            shutil.copyfileobj(published, copy_to, 1 << 20)
        copy_to.flush()
    _emit(progress, stats, "complete", pregrader)
    return GenerationResult(
        output=out,
        run_output=run_file,
        draws_output=draws_file,
        ledger=ledger_file,
        prompts=len(loaded.prompts),
        draws=run["draws"]["total"],
        sent=stats.done,
        failed=run["draws"]["failed"],
        requests=stats.requests,
        retries=stats.retries,
        completion_tokens=stats.completion_tokens,
        seconds=time.monotonic() - started,
        run=run,
    )


def _emit(
    progress: Callable[[dict[str, Any]], None] | None, stats: Stats, phase: str, pregrader: PreGrader | None
) -> None:
    if progress is not None:
        event = stats.event(phase)
        if pregrader is not None:
            event["graded"] = pregrader.graded  # prompts graded ahead so far
        progress(event)


def _evaluate(
    result: GenerationResult,
    source: Source,
    loaded: Loaded,
    receipt: PathLike,
    options: EvaluationOptions,
    pregrader: PreGrader,
) -> GenerationResult:
    """Evaluate the published file with the run metadata just written, as ``modebench evaluate``
    does, taking the results of prompts graded while draws arrived from the pre-grader's memo."""
    run = cast(RunMetadata, result.run)
    data_root = None if loaded.data_root is None else Path(loaded.data_root)
    if isinstance(source, FrozenSplitSource):
        options = replace(
            options,
            run=run,
            data_root=data_root,
            config=source.config,
            split=cast(Split, source.split),
            registry=source.registry,
        )
    else:
        options = replace(options, run=run)
    spec = RunSpec.build(result.output, Path(receipt), options, Execution(grader=pregrader.grader))
    evaluated = evaluation_receipt(spec, evaluate(spec), result.output)
    return replace(result, receipt=evaluated, pregrade=pregrader.summary())
