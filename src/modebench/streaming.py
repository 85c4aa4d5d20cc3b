"""0.4.0's ``modebench.streaming``: the streaming, checkpointed evaluator as 0.4.0 called it.

The evaluator itself is :mod:`modebench.engine` (spec → preflight → grading → receipt);
:func:`evaluate_file` keeps 0.4.0's keyword signature (and the keywords added since), builds a
:class:`~modebench.engine.RunSpec` and runs the pipeline on it. ``software_identity`` is looked
up here at call time, so a caller that replaces it here changes what the receipt records.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Iterator
from typing import Any

from modebench import metrics
from modebench.api_types import (
    EvaluationOptions,
    Progress,  # 0.4.0's name here: the progress event (a TypedDict)
)
from modebench.backends import Grader, make_grader, unprepared
from modebench.engine import pipeline
from modebench.engine.checkpoint import graded_rows
from modebench.engine.grading import COMMIT_PROMPTS, COMMIT_SECONDS
from modebench.engine.ledger import checkpoint
from modebench.engine.preflight import PLUGINS_KEY, PREFLIGHT_KEYS
from modebench.engine.spec import Execution, RunSpec, work_directory
from modebench.engine.spec import ProgressCallback as _ProgressCallback
from modebench.failures import policy
from modebench.identity import canonical, file_sha256, software_identity
from modebench.intake.ids import PromptIds
from modebench.intake.lines import decoded as _decoded
from modebench.intake.lines import input_file, iter_jsonl
from modebench.intake.preflight import prepared_text
from modebench.intake.shards import Shard
from modebench.metrics import CellAccumulator
from modebench.publish import atomic_output
from modebench.receipt.run_identity import checkpoint_identity
from modebench.receipt.schema import (
    CHECKPOINT_SCHEMA,
    JOURNAL_NAME,
    MAX_INPUT_LINE_BYTES,
    MAX_RESPONSES_PER_PROMPT,
    REPORT_SCHEMA,
    RESULT_FORMAT,
)
from modebench.receipt.tallies import CellKey
from modebench.receipt.tallies import tally_results as tally
from modebench.receipt.writer import journal_line as _journal_line
from modebench.receipt.writer import journal_reference, receipt_text

__all__ = [
    "CHECKPOINT_SCHEMA",
    "COMMIT_PROMPTS",
    "COMMIT_SECONDS",
    "CellAccumulator",
    "CellKey",
    "JOURNAL_NAME",
    "MAX_INPUT_LINE_BYTES",
    "MAX_RESPONSES_PER_PROMPT",
    "PLUGINS_KEY",
    "PREFLIGHT_KEYS",
    "REPORT_SCHEMA",
    "RESULT_FORMAT",
    "Progress",
    "atomic_output",
    "canonical",
    "checkpoint",
    "checkpoint_identity",
    "evaluate_file",
    "file_sha256",
    "graded_rows",
    "input_file",
    "iter_jsonl",
    "journal_reference",
    "prepared_text",
    "receipt_text",
    "software_identity",
    "tally",
    "work_directory",
    "_decoded",
    "_journal_line",
]


def evaluate_file(
    input_path: str | os.PathLike[str],
    output_path: str | os.PathLike[str],
    *,
    min_defined_prompts: Any = metrics.DEFAULT_MIN_DEFINED_PROMPTS,
    run: Any = None,
    data_root: Any = None,
    config: Any = None,
    split: Any = "eval",
    allow_partial: Any = False,
    registry: Any = None,
    work_dir: str | os.PathLike[str] | None = None,
    resume: bool = False,
    progress: _ProgressCallback | None = None,
    workers: int = 1,
    keep_checkpoint: bool = False,
    backend: str = "local",
    cluster_address: str | None = None,
    shard: Shard | None = None,
    limit: int | None = None,
    spooled: bool = False,
    prompt_ids: PromptIds | None = None,
    unscorable: str = policy.FAIL_RUN,
    grader: Grader | None = None,
) -> dict[str, Any]:
    """Evaluate a JSONL file of saved responses; publish a v4 receipt; return a summary.

    The split (``config``, ``data_root``, ``registry``) is used as given: no cache lookup and no
    download (``modebench.api.evaluate_file`` does those). ``spooled``: the input is standard
    input already copied into the work directory. The other keywords are
    :class:`~modebench.api_types.EvaluationOptions` fields and :class:`~modebench.engine.Execution`
    settings of the same names.
    """
    options = EvaluationOptions(
        min_defined_prompts=min_defined_prompts,
        run=run,
        data_root=data_root,
        config=config,
        split=split,
        allow_partial=allow_partial,
        registry=registry,
        keep_checkpoint=keep_checkpoint,
        limit=limit,
        ids=prompt_ids,  # type: ignore[arg-type]  # a parsed list is accepted as well as a path
        unscorable=unscorable,
    )
    hooked_grader = call_time_grader(backend, workers) if grader is None else None
    if hooked_grader is not None:
        # A caller replaced one of evaluation's call-time hooks (0.4.0's monkeypatch points):
        # grade through them, as 0.4.0's evaluate_file did. Never taken otherwise.
        with hooked_grader as hooked:
            return evaluate_file(
                input_path, output_path, min_defined_prompts=min_defined_prompts, run=run,
                data_root=data_root, config=config, split=split, allow_partial=allow_partial,
                registry=registry, work_dir=work_dir, resume=resume, progress=progress, workers=workers,
                keep_checkpoint=keep_checkpoint, backend=backend, cluster_address=cluster_address,
                shard=shard, limit=limit, spooled=spooled, prompt_ids=prompt_ids, unscorable=unscorable,
                grader=hooked,
            )  # fmt: skip
    execution = Execution(
        work_dir=work_dir,
        resume=resume,
        workers=workers,
        progress=progress,
        backend=backend,
        cluster_address=cluster_address,
        shard=shard,
        grader=grader,
    )
    spec = RunSpec.build(input_path, output_path, options, execution)
    if spooled:
        spec = dataclasses.replace(spec, spooled=True)
    return dict(pipeline.run(spec, software=software_identity()))


def call_time_grader(backend: str, workers: int) -> Grader | None:
    """A grader through evaluation's call-time hooks when a caller replaced one of them (local
    back end only), else None: the usual path is then unchanged. Enter it before use."""
    if backend != "local" or not evaluation.replaced_hooks():
        return None
    return _CallTimeHooks(make_grader(backend, workers), grading=workers == 1)


class _CallTimeHooks:
    """A grader that validates references through ``evaluation.validate_reference`` and, with
    one worker, grades through ``evaluation.grade_prepared`` (whose default calls
    ``evaluation.grade_response``), each looked up per call; everything else is the inner pool's.

    Used only when a caller replaced one of those hooks, so the usual path is unchanged.
    """

    def __init__(self, inner: Grader, *, grading: bool) -> None:
        self.inner = inner
        self.workers = inner.workers
        self.grading = grading

    def __enter__(self) -> _CallTimeHooks:
        self.inner.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.inner.__exit__(*exc)

    def close(self) -> None:
        self.inner.close()

    def prestart(self) -> None:
        self.inner.prestart()

    def reference_check(self, level: Any, domain: Any, answer: Any) -> dict[str, Any]:
        return evaluation.validate_reference(level, domain, answer)

    def prepared_lines(
        self, run: dict[str, Any] | None, lines: Iterable[tuple[int, bytes]]
    ) -> Iterator[tuple[int, bytes, Any]]:
        return unprepared(lines)  # every record through this process's preflight (and the hook)

    def results(
        self, items: Iterable[tuple[int, dict[str, Any]]]
    ) -> Iterator[tuple[int, dict[str, Any], list[dict[str, Any]]]]:
        if not self.grading:
            yield from self.inner.results(items)
            return
        for seq, prepared in items:
            graded = evaluation.grade_prepared(prepared)
            yield seq, prepared, [attempt for draw in graded["draws"] for attempt in draw["attempts"]]


# ModeBench 0.4.0 surface names (docs/compatibility.md).
from modebench import evaluation  # noqa: E402
from modebench.diagnostics import UNSCORABLE  # noqa: E402
from modebench.engine.ledger import SeenSet as DiskSeen  # noqa: E402
from modebench.metrics import POOLED, effective_modes, prompt_mode_diversity  # noqa: E402

__all__ += ["DiskSeen", "POOLED", "UNSCORABLE", "effective_modes", "evaluation", "prompt_mode_diversity"]

# Names 0.4.0's module carried at its top level (re-exports), kept importable here.
from collections.abc import Callable as Callable  # noqa: E402

from modebench.identity import digest_json as digest_json  # noqa: E402
from modebench.validation import InputError as InputError  # noqa: E402
from modebench.validation import loads as loads  # noqa: E402
from modebench.validation import positive_integer as positive_integer  # noqa: E402
