"""The supported, typed Python surface of modebench. Each function delegates to one module."""

from __future__ import annotations

import copy
import dataclasses
import os
import pathlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import nullcontext
from typing import IO, TYPE_CHECKING, Any, cast

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
    RunMetadata,
    Task,
)
from modebench.contracts import Domain, normalize_level
from modebench.diagnostics import VerifierExecutionError
from modebench.engine import Execution, ProgressCallback, RunSpec, evaluate
from modebench.engine.outcome import evaluation_receipt
from modebench.metrics import DEFAULT_MIN_DEFINED_PROMPTS
from modebench.receipt import reader as _reader
from modebench.validation import InputError

if TYPE_CHECKING:
    from modebench.failures.explain import FailureExplanation
    from modebench.generate import GenerationResult, GenerationSettings, Source
    from modebench.stats.table import StatsTable

__all__ = [
    "EvaluationOptions",
    "EvaluationReceipt",
    "GradeResult",
    "InputError",
    "Report",
    "StatsTable",
    "Task",
    "VerifierExecutionError",
    "compare",
    "compare_runs",
    "curves",
    "evaluate_file",
    "evaluate_suite",
    "example_record",
    "explain_unscorable",
    "export_dataset",
    "generate_responses",
    "grade",
    "ingest",
    "iter_results",
    "load_tasks",
    "make_prompt",
    "merge_shards",
    "observed_discordant",
    "prepare_suite",
    "prompt_retention",
    "read_report",
    "render_html",
    "report_table",
    "trajectory",
    "trajectory_arms_html",
    "trajectory_html",
]


def __getattr__(name: str) -> Any:
    # ``modebench.stats`` (the estimators, bootstrap, comparisons) is imported when first used,
    # not by every ``import modebench.api``: grading a response never needs it.
    if name == "StatsTable":
        from modebench.stats.table import StatsTable  # noqa: PLC0415 - deferred: a wing loads on its first call, so importing the API loads the core only

        return StatsTable
    raise AttributeError(f"module 'modebench.api' has no attribute {name!r}")


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
    from modebench import data  # noqa: PLC0415 - deferred: a wing loads on its first call, so importing the API loads the core only

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
    from modebench.hub.export import export_release  # noqa: PLC0415 - deferred: a wing loads on its first call, so importing the API loads the core only

    return export_release(directory, registry=registry, cache_dir=cache_dir, offline=offline)


def prepare_suite(
    directory: PathLike,
    configs: str | Sequence[str],
    split: str = "eval",
    *,
    limit: int | None = None,
    data_root: PathLike | None = None,
    cache_dir: PathLike | None = None,
    offline: bool = False,
    registry: str | None = None,
) -> dict[str, Any]:
    """Export the requests of several frozen configurations as ``directory/<config>.jsonl``.

    ``configs`` is a name, a comma list, a list of those, or ``"all"`` (every configuration of the
    registry with ``split``); ``limit`` keeps the first ``limit`` prompts of each (``docs/suites.md``).
    Returns ``output``, ``configs`` (count), ``prompts`` (total), ``files`` and, if given, ``limit``.
    """
    from modebench.suite.runs import prepare_suite as _prepare_suite  # noqa: PLC0415 - deferred: a wing loads on its first call, so importing the API loads the core only

    return _prepare_suite(
        directory,
        configs,
        split,
        limit=limit,
        data_root=data_root,
        cache_dir=cache_dir,
        offline=offline,
        registry=registry,
    )


def evaluate_suite(
    input_dir: PathLike,
    output_dir: PathLike,
    configs: str | Sequence[str],
    *,
    options: EvaluationOptions | None = None,
    resume: bool = False,
    workers: int = 1,
    progress: Callable[[Progress], None] | None = None,
    backend: str = "local",
    cluster_address: str | None = None,
) -> dict[str, Any]:
    """Evaluate ``input_dir/<config>.jsonl`` for each configuration into ``output_dir/<config>.json``
    (each the receipt a one-configuration ``evaluate_file`` gives) plus the summary
    ``output_dir/suite.json`` that ``report_table`` reads (``docs/suites.md``).

    ``options`` apply to every configuration and leave ``config`` unset. Returns ``output``,
    ``summary``, ``configs``, ``completed``, ``prompts`` and ``status``.
    """
    from modebench.suite.runs import evaluate_suite as _evaluate_suite  # noqa: PLC0415 - deferred: a wing loads on its first call, so importing the API loads the core only

    execution = Execution(
        resume=resume,
        workers=workers,
        progress=cast(ProgressCallback | None, progress),
        backend=backend,
        cluster_address=cluster_address,
    )
    return _evaluate_suite(input_dir, output_dir, configs, options, execution)


def make_prompt(task: Task, condition: str = "registered_hints_v1") -> list[ChatMessage]:
    """The two registered chat messages for ``task``; never includes the reference."""
    from modebench.prompts import make_messages  # noqa: PLC0415 - deferred: a wing loads on its first call, so importing the API loads the core only

    return cast(
        list[ChatMessage], make_messages(task.level, task.domain, {"problem": task.problem}, condition)
    )


def grade(task: Task, response: str) -> GradeResult:
    """Grade one response through the shared isolated worker; never raises for evaluator problems."""
    from modebench.isolation.client import grade_response  # noqa: PLC0415 - deferred: a wing loads on its first call, so importing the API loads the core only

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
    ``input_path="-"`` reads standard input, spooled into the work directory (``docs/evaluation.md``).
    """
    chosen = options if options is not None else EvaluationOptions()
    # The caller's run metadata is copied: the spec holds it for the whole run.
    chosen = dataclasses.replace(chosen, run=copy.deepcopy(chosen.run))
    # 0.4.0's replaceable evaluation hooks (a test's monkeypatch), honoured as its CLI did; None
    # (the usual path, unchanged) unless a caller replaced one.
    from modebench.streaming import call_time_grader  # noqa: PLC0415 - 0.4.0's module, loaded only by an evaluation: importing the API loads the core only

    hooked = call_time_grader(backend, workers)
    with hooked if hooked is not None else nullcontext():
        execution = Execution(
            work_dir=work_dir,
            resume=resume,
            workers=workers,
            progress=cast(ProgressCallback | None, progress),
            backend=backend,
            cluster_address=cluster_address,
            shard=shard,
            grader=hooked,
        )
        spec = RunSpec.build(input_path, output_path, chosen, execution)
        return evaluation_receipt(spec, evaluate(spec), input_path)


def explain_unscorable(
    receipt: PathLike, *, input_path: PathLike | None = None, limit: int = 10
) -> FailureExplanation:
    """The attempts of ``receipt`` that could not be scored: prompt id, record (and input line
    when ``input_path`` is the graded input), draw index, status and detail for the first
    ``limit``, counts for all, and what to do (``.text()``). Reads the result journal when it is
    present and matches the receipt; otherwise says where the diagnostics live."""
    from modebench.failures.explain import explain  # noqa: PLC0415 - deferred: a wing loads on its first call, so importing the API loads the core only

    return explain(receipt, input_path=input_path, limit=limit)


def generate_responses(
    source: Source,
    output: PathLike,
    settings: GenerationSettings,
    *,
    run_output: PathLike | None = None,
    retry_failed: bool = False,
    progress: Callable[[dict[str, Any]], None] | None = None,
    receipt: PathLike | None = None,
    min_defined_prompts: int = DEFAULT_MIN_DEFINED_PROMPTS,
    copy_to: IO[bytes] | None = None,
) -> GenerationResult:
    """Sample ``settings.k`` draws per prompt from an OpenAI-compatible endpoint (``docs/generate.md``).

    Writes evaluate input to ``output`` plus run metadata and a per-draw sidecar; resumable from the
    draw ledger next to ``output``; with ``receipt``, evaluates the output right after the last draw;
    with ``copy_to``, writes the published output's bytes there (for ``evaluate -`` on a pipe).
    """
    from modebench.generate import generate_responses as _generate  # noqa: PLC0415 - deferred: a wing loads on its first call, so importing the API loads the core only

    return _generate(
        source,
        output,
        settings,
        run_output=run_output,
        retry_failed=retry_failed,
        progress=progress,
        receipt=receipt,
        options=EvaluationOptions(min_defined_prompts=min_defined_prompts),
        copy_to=copy_to,
    )


def _cell(cell: dict[str, Any], recorded: frozenset[str]) -> CellSummary:
    pcmd = cell["pcmd"]
    return CellSummary(
        level=normalize_level(cell["level"]),
        domain=cast(Domain, _reader.cell_domain(cell["domain"], recorded)),
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
    receipt = _reader.read_report(path)
    return Report(
        schema=receipt.schema,
        status=cast(EvaluationStatus, receipt.status),
        cells=tuple(_cell(cell, receipt.plugins) for cell in receipt.cells),
        input_sha256=receipt.input_sha256,
    )


def iter_results(path: PathLike) -> Iterator[PromptResult]:
    """Per-prompt results (v4: input order from the verified journal)."""
    for item in _reader.iter_prompt_results(path):
        yield cast(PromptResult, item)


def curves(
    receipt: PathLike,
    k: Sequence[int] | None = None,
    *,
    seed: int = 0,
    resamples: int = 1000,
    level: float = 0.95,
    label: str | None = None,
    cells: Sequence[tuple[int, str]] | None = None,
    domains: Sequence[str] | None = None,
    levels: Sequence[int] | None = None,
) -> StatsTable:
    """Per cell, per domain and over all cells: accuracy, unbiased pass@k, E[distinct@k] (all
    draws) and E[distinct verified modes@k] at each k, PCMD (with ``reportable``), effective modes
    and the within-run retention baseline, each with a clustered standard error and a seeded
    bootstrap interval (``docs/statistics.md``).

    ``receipt``: a receipt, a ``suite.json`` or a directory of receipts. ``k`` picks the points
    (default 1, 2, 4, … and the draws per prompt); ``cells``/``domains``/``levels`` select cells.
    ``.to_pandas()`` or ``.to_records()`` turn the result into a table.
    """
    from modebench.stats import Bootstrap  # noqa: PLC0415 - deferred: a wing loads on its first call, so importing the API loads the core only
    from modebench.stats import curves as _curves  # noqa: PLC0415 - deferred: a wing loads on its first call, so importing the API loads the core only

    return _curves(
        receipt,
        k,
        Bootstrap(seed, resamples, level),
        label=label,
        cells=cells,
        domains=domains,
        levels=levels,
    )


def compare(
    a: PathLike,
    b: PathLike,
    k: Sequence[int] | None = None,
    *,
    seed: int = 0,
    resamples: int = 1000,
    level: float = 0.95,
    **options: Any,
) -> StatsTable:
    """Paired comparison of run ``b`` against run ``a`` (differences B − A): :func:`compare_runs`
    of the two (same options)."""
    return compare_runs([a, b], k, seed=seed, resamples=resamples, level=level, **options)


def compare_runs(
    runs: Sequence[PathLike],
    k: Sequence[int] | None = None,
    *,
    seed: int = 0,
    resamples: int = 1000,
    level: float = 0.95,
    labels: Mapping[str, str] | None = None,
    baseline: str | None = None,
    allow_unequal_draws: bool = False,
    cells: Sequence[tuple[int, str]] | None = None,
    domains: Sequence[str] | None = None,
    levels: Sequence[int] | None = None,
) -> StatsTable:
    """Paired comparison of every run against the baseline (the first, or the one labelled
    ``baseline``; differences B − A): McNemar tests, mode retention beside its within-run baseline,
    Holm-adjusted p-values, per cell, per domain and over all cells (``docs/statistics.md``).

    Each run is a receipt, a ``suite.json`` or a directory of receipts; ``labels`` maps a path as
    given to its label. Runs with different draw counts are refused unless ``allow_unequal_draws``.
    """
    from modebench.stats import Bootstrap  # noqa: PLC0415 - deferred: a wing loads on its first call, so importing the API loads the core only
    from modebench.stats.many import Filters  # noqa: PLC0415 - deferred: a wing loads on its first call, so importing the API loads the core only
    from modebench.stats.many import compare_runs as _compare_runs  # noqa: PLC0415 - deferred: a wing loads on its first call, so importing the API loads the core only
    from modebench.stats.sources import resolve_run  # noqa: PLC0415 - deferred: a wing loads on its first call, so importing the API loads the core only

    given = labels or {}
    resolved = [resolve_run(path, given.get(os.fspath(path))) for path in runs]
    return _compare_runs(
        resolved,
        k,
        Bootstrap(seed, resamples, level),
        baseline=baseline,
        allow_unequal_draws=allow_unequal_draws,
        filters=Filters(cells, domains, levels),
    )


def prompt_retention(a: PathLike, b: PathLike) -> Iterator[dict[str, Any]]:
    """Per matched prompt: the mode keys A found, B found, retained, lost and gained."""
    from modebench.stats import iter_prompt_retention  # noqa: PLC0415 - deferred: a wing loads on its first call, so importing the API loads the core only

    yield from iter_prompt_retention(a, b)


def observed_discordant(comparison: PathLike, outcome: str = "pass_at_draws") -> float:
    """The discordant rate of a binary outcome (``pass_at_draws`` or ``first_draw_pass``) in the
    overall row of a saved ``compare`` JSON document: the input ``power`` sizes the next run with."""
    from modebench.stats import observed_discordant as _observed  # noqa: PLC0415 - deferred: a wing loads on its first call, so importing the API loads the core only
    from modebench.validation import loads  # noqa: PLC0415 - deferred: a wing loads on its first call, so importing the API loads the core only

    with open(comparison, "rb") as handle:
        document = loads(handle.read())
    rate, items = _observed(document, outcome)
    if rate <= 0:
        raise InputError(
            f"{comparison}: no discordant prompts for {outcome} (observed discordant rate 0 of {items} "
            "paired prompts), so no rate to size with; give --discordant with a planning value"
        )
    return rate


def merge_shards(shards: list[PathLike], output_path: PathLike) -> dict[str, Any]:
    """Merge the shard receipts of one run into the receipt and journal of the unsharded run.

    Refuses shards of different runs, duplicates and gaps, naming them. Returns a summary
    (``output``, ``cells``, ``prompts``, ``shards``, ``status``).
    """
    from modebench.backends.shard import merge  # noqa: PLC0415 - deferred: a wing loads on its first call, so importing the API loads the core only

    return merge(shards, output_path)


def render_html(
    runs: Sequence[PathLike],
    output: PathLike,
    *,
    seed: int = 0,
    resamples: int = 1000,
    level: float = 0.95,
    figures_dir: PathLike | None = None,
    labels: Mapping[str, str] | None = None,
    allow_unequal_draws: bool = False,
    cells: Sequence[tuple[int, str]] | None = None,
    domains: Sequence[str] | None = None,
    levels: Sequence[int] | None = None,
) -> dict[str, Any]:
    """Write one self-contained HTML report of the runs to ``output`` (never overwritten); with
    ``figures_dir``, also each figure as a standalone SVG and PDF file for a paper. ``cells``,
    ``domains``, ``levels``: only those cells in the tables, curves, examples and comparisons (as
    :func:`compare_runs`); each run's identity and status blocks stay whole.

    Each run is a receipt, a ``suite.json`` or a directory of receipts; ``labels`` maps a path as
    given to its label (else the ``label`` of the run metadata, else "run A (model id)"). One run:
    identity, cell table with intervals, curves over k, status breakdown, example prompts (a
    section per receipt of a suite); several: also overlaid curves, paired differences and mode
    retention against the first completed run. Runs with different draws per prompt are refused
    unless ``allow_unequal_draws`` (as :func:`compare_runs`). A failed receipt shows its
    diagnostics and no score. Needs the ``plot`` extra. Returns ``output``, ``runs``,
    ``receipts``, ``bytes`` and ``completed`` (``docs/report.md``).
    """
    from modebench.render.html import render_html as _render_html  # noqa: PLC0415 - deferred: a wing loads on its first call, so importing the API loads the core only
    from modebench.stats import Bootstrap  # noqa: PLC0415 - deferred: a wing loads on its first call, so importing the API loads the core only
    from modebench.stats.sources import Filters, resolve_run  # noqa: PLC0415 - deferred: a wing loads on its first call, so importing the API loads the core only

    given = labels or {}
    resolved = [resolve_run(path, given.get(os.fspath(path))) for path in runs]
    return _render_html(
        resolved,
        output,
        Bootstrap(seed, resamples, level),
        figures_dir,
        allow_unequal_draws=allow_unequal_draws,
        filters=Filters(cells, domains, levels),
    )


def example_record(domain: str, level: int = 1) -> dict[str, Any]:
    """One complete evaluate input record of ``domain``: a generated task with its whole reference
    ``answer`` object and one response that verifies (the domain's first witness). An unknown
    domain raises ``ValueError`` naming the valid ones."""
    from modebench.domains._examples import example_record as _example_record  # noqa: PLC0415 - generators load on first call, so importing the API loads the core only

    return _example_record(domain, level)


def report_table(
    receipts: Sequence[PathLike], fmt: str = "text", *, journal: PathLike | None = None
) -> tuple[str, bool]:
    """The receipts' cell table as ``text`` (the classic report), ``json``, ``csv`` or ``markdown``;
    returns (text, whether every receipt completed). A suite summary (``suite.json``), given alone,
    gives one table of all its verified receipts. ``journal``: where one receipt's result journal
    is now, if it was moved away from the receipt (still verified against the receipt's hash)."""
    from modebench.render.report_table import report_table as _report_table  # noqa: PLC0415 - deferred: a wing loads on its first call, so importing the API loads the core only

    return _report_table(list(receipts), fmt, journal)


def ingest(
    fmt: str,
    source: PathLike,
    output_path: PathLike,
    *,
    registry: str | None = None,
    config: str | None = None,
    split: str = "eval",
    data_root: PathLike | None = None,
    cache_dir: PathLike | None = None,
    offline: bool = False,
    id_field: str | None = None,
    lm_eval_filter: str | None = None,
    tokenizer: PathLike | None = None,
) -> dict[str, Any]:
    """Convert Inspect / lm-eval / verl / TRL response logs into evaluate input (``docs/ingest.md``).

    Prompts are matched by the source's prompt ids (or ``id_field``), or — with a registry split
    (``config``) — by exact renderings of the registered prompts (chat templates with and without
    special tokens; ``tokenizer``'s own template too); unmatched prompts are counted and listed in
    the summary, and none matched is an error.
    """
    from modebench import ingest as _ingest  # noqa: PLC0415 - deferred: a wing loads on its first call, so importing the API loads the core only

    index = _ingest.prompt_index(
        registry, config, split, data_root=data_root, cache_dir=cache_dir, offline=offline,
        tokenizer=tokenizer,
    )  # fmt: skip
    return _ingest.ingest(
        fmt, source, output_path, index=index, id_field=id_field, lm_eval_filter=lm_eval_filter
    )


def trajectory(
    runs: Sequence[str],
    k: Sequence[int] | None = None,
    *,
    registry: str | None = None,
    config: str | None = None,
    split: str = "eval",
    data_root: PathLike | None = None,
    cache_dir: PathLike | None = None,
    offline: bool = False,
    grading_cache: PathLike | None = None,
    workers: int = 1,
    run: RunMetadata | None = None,
    run_file: PathLike | None = None,
    id_field: str | None = None,
) -> StatsTable:
    """Per training step and cell: accuracy, pass@k, E[distinct@k], PCMD, effective modes and mode
    retention against the first step (``docs/ingest.md``). ``id_field``: the rollout sources' field
    holding the modebench prompt id, as for :func:`ingest`.

    Each run is a receipt, a ``suite.json`` or a directory of receipts (``PATH``, step = its
    position, or ``STEP=PATH``) or a rollout source
    (``verl:DIR``, ``trl:DIR``) graded against the split ``config`` with each step's receipt cached
    by content hash in ``grading_cache`` (default ``modebench-grading`` in the current directory).
    Grading a rollout source needs the run metadata of a frozen evaluation (``run``/``run_file``).
    """
    from modebench.ingest.runs import resolve_runs  # noqa: PLC0415 - deferred: a wing loads on its first call, so importing the API loads the core only
    from modebench.stats.trajectory import trajectory_table  # noqa: PLC0415 - deferred: a wing loads on its first call, so importing the API loads the core only

    options = EvaluationOptions(
        data_root=data_root,
        config=config,
        split=cast(Any, split),
        registry=registry,
        cache_dir=cache_dir,
        offline=offline,
        # A training run samples a subset of the split's prompts at each step.
        allow_partial=True,
        run=copy.deepcopy(run),
        run_file=run_file,
    )
    cache = grading_cache if grading_cache is not None else pathlib.Path("modebench-grading")
    steps, counts = resolve_runs(runs, cache_dir=cache, options=options, workers=workers, id_field=id_field)
    table = trajectory_table(steps, k)
    return dataclasses.replace(table, meta={**table.meta, "grading": counts})


def trajectory_html(
    runs: Sequence[str],
    output: PathLike,
    k: Sequence[int] | None = None,
    *,
    figures_dir: PathLike | None = None,
    **options: Any,
) -> dict[str, Any]:
    """Write the trajectory of ``runs`` (as :func:`trajectory`, same ``options``) as one
    self-contained HTML page to ``output`` (never overwritten): per cell, figures over training
    step of accuracy, pass@k, E[distinct@k], PCMD, effective modes and mode retention, and their
    table. With ``figures_dir``, also each figure as a standalone SVG and PDF file for a paper.
    Needs the ``plot`` extra. Returns ``output``, ``steps`` and ``bytes`` (``docs/report.md``).
    """
    from modebench.render.trajectory_page import render_trajectory_html, require_plot  # noqa: PLC0415 - deferred: a wing loads on its first call, so importing the API loads the core only

    require_plot()  # before any grading of rollout sources
    return render_trajectory_html(trajectory(runs, k, **options), output, figures_dir)


def trajectory_arms_html(
    arms: Mapping[str, Sequence[str]], output: PathLike, k: Sequence[int] | None = None, **options: Any
) -> dict[str, Any]:
    """Write several arms' trajectories side by side as one HTML page to ``output`` (never
    overwritten): each arm is a name and its runs (as :func:`trajectory`'s ``runs``, same
    ``options``); per cell, accuracy, pass@n, E[distinct@n] and PCMD over training steps with one
    line per arm. Needs the ``plot`` extra. Returns ``output``, ``arms`` and ``bytes``."""
    from modebench.render.trajectory_page import render_arms_trajectory_html, require_plot  # noqa: PLC0415 - deferred: a wing loads on its first call, so importing the API loads the core only

    require_plot()
    return render_arms_trajectory_html(
        {name: trajectory(runs, k, **options) for name, runs in arms.items()}, output
    )
