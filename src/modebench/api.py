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
    "export_dataset",
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


def export_dataset(
    directory: PathLike,
    *,
    registry: str | None = None,
    cache_dir: PathLike | None = None,
    offline: bool = False,
) -> dict[str, Any]:
    """Write a registry's verified splits as a Hugging Face dataset directory (``docs/datasets-hub.md``).

    ``registry`` is a path, URL, ``bundled`` or ``hf://datasets/OWNER/NAME@COMMIT``; ``None`` is the
    packaged ModeBench 0.4.0 registry. Returns a summary (output, registry_sha256, configs, splits, rows).
    """
    from modebench.hub.export import export_release

    return export_release(directory, registry=registry, cache_dir=cache_dir, offline=offline)


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
    backend: str = "local",
    cluster_address: str | None = None,
    shard: str | None = None,
) -> EvaluationReceipt:
    """Streaming, checkpointed evaluation of a JSONL file into a v4 receipt.

    ``backend="ray"`` grades on Ray actors (the cluster at ``cluster_address``, or a local one);
    ``shard="I/N"`` grades only that shard into a shard receipt for ``merge_shards``.
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
        backend=backend,
        cluster_address=cluster_address,
        shard=shard,
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


def merge_shards(shards: list[PathLike], output_path: PathLike) -> dict[str, Any]:
    """Merge the shard receipts of one run into the receipt and journal of the unsharded run.

    Refuses shards of different runs, duplicates and gaps, naming them. Returns a summary
    (``output``, ``cells``, ``prompts``, ``shards``, ``status``).
    """
    from modebench.backends.shard import merge

    return merge(shards, output_path)
