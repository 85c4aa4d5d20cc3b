"""The supported, typed Python surface of modebench. Each function delegates to one module."""

from __future__ import annotations

import copy
import dataclasses
import pathlib
from collections.abc import Callable, Iterator
from typing import Any, cast

from modebench.api_types import (
    CellSummary,
    ChatMessage,
    DiversitySummary,
    EvaluationOptions,
    EvaluationReceipt,
    EvaluationStatus,
    GradeResult,
    PathLike,
    Progress,
    PromptResult,
    Report,
    Task,
)
from modebench.contracts import normalize_domain, normalize_level
from modebench.diagnostics import VerifierExecutionError
from modebench.validation import InputError

__all__ = [
    "EvaluationOptions",
    "EvaluationReceipt",
    "GradeResult",
    "InputError",
    "Report",
    "Task",
    "VerifierExecutionError",
    "evaluate_file",
    "grade",
    "iter_results",
    "load_tasks",
    "make_prompt",
    "read_report",
]


def load_tasks(
    config: str,
    split: str = "eval",
    *,
    data_root: PathLike | None = None,
    cache_dir: PathLike | None = None,
    offline: bool = False,
    registry: str | None = None,
) -> Iterator[Task]:
    """Tasks of a frozen split in row order (all work happens on the first ``next()``)."""
    from modebench import data

    yield from data.iter_tasks(
        config, split, data_root=data_root, cache_dir=cache_dir, offline=offline, registry=registry
    )


def make_prompt(task: Task, condition: str = "registered_hints_v1") -> list[ChatMessage]:
    """The two registered chat messages for ``task``; never includes the reference."""
    from modebench.prompts import make_messages

    return cast(
        list[ChatMessage], make_messages(task.level, task.domain, {"problem": task.problem}, condition)
    )


def grade(task: Task, response: str) -> GradeResult:
    """Grade one response through the shared isolated worker; never raises for evaluator problems."""
    from modebench.verifier import grade_response

    return cast(GradeResult, grade_response(task.level, task.domain, {"answer": task.answer}, response))


def evaluate_file(
    input_path: PathLike,
    output_path: PathLike,
    *,
    options: EvaluationOptions | None = None,
    work_dir: PathLike | None = None,
    resume: bool = False,
    workers: int = 1,
    progress: Callable[[Progress], None] | None = None,
) -> EvaluationReceipt:
    """Streaming, checkpointed evaluation of a JSONL file into a v4 receipt.

    Takes every option of the ``evaluate`` command (registry, cache, offline, data root, run
    file, …), checks them the same way and writes the same receipt. When reference validation
    cannot run, the failure receipt is published at ``output_path`` and the
    ``VerifierExecutionError`` is raised. A preflight that fails leaves no checkpoint behind.
    """
    from modebench._file_evaluation import evaluate_path

    chosen = options if options is not None else EvaluationOptions()
    summary = evaluate_path(
        input_path,
        output_path,
        dataclasses.replace(chosen, run=copy.deepcopy(chosen.run)),
        work_dir=work_dir,
        resume=resume,
        workers=workers,
        progress=cast(Callable[[dict[str, Any]], None] | None, progress),
    )
    return EvaluationReceipt(
        output=pathlib.Path(summary["output"]),
        status=cast(EvaluationStatus, summary["status"]),
        prompts=int(summary["prompts"]),
        cells=int(summary["cells"]),
        work_dir=pathlib.Path(summary["work_dir"]),
        dataset_kind=summary["dataset_kind"],
    )


def _cell(cell: dict[str, Any]) -> CellSummary:
    pcmd = cell["pcmd"]
    return CellSummary(
        level=normalize_level(cell["level"]),
        domain=normalize_domain(cell["domain"]),
        k=int(cell["k"]),
        accuracy=cell["accuracy"],
        pass_at_k=cell["pass_at_k"],
        distinct_at_k=cell["distinct_at_k"],
        pcmd=DiversitySummary(
            d_mode=pcmd["d_mode"],
            reportable=bool(pcmd["reportable"]),
            defined_prompts=pcmd.get("defined_prompts"),
            prompts=pcmd.get("prompts"),
            standard_error=pcmd.get("standard_error"),
            reason=pcmd.get("reason"),
        ),
        protocol_notes=tuple(cell.get("protocol_notes", ())),
    )


def read_report(path: PathLike) -> Report:
    """Load and validate a v3/v4 receipt (v4: the journal hash too). Check ``status`` first."""
    from modebench.reporting import read_report as _read_report

    payload = _read_report(path)
    return Report(
        schema=str(payload["schema"]),
        status=cast(EvaluationStatus, payload["evaluation"]["status"]),
        cells=tuple(_cell(cell) for cell in payload["cells"]),
        input_sha256=payload.get("input_sha256"),
    )


def iter_results(path: PathLike) -> Iterator[PromptResult]:
    """Per-prompt results (v4: input order from the verified journal)."""
    from modebench.reporting import iter_prompt_results

    for item in iter_prompt_results(path):
        yield cast(PromptResult, item)
