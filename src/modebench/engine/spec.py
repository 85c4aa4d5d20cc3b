"""The run specification: every option of one evaluation, parsed once and checked once.

A :class:`RunSpec` holds the caller's :class:`~modebench.api_types.EvaluationOptions` and
:class:`Execution` whole (as inspect_ai's ``TaskRunOptions`` holds its ``EvalConfig``), plus what
:meth:`RunSpec.build` parsed from them (a shard's ``I/N``, an id list file, a run-metadata file).
This module states every cross-field rule of the options and its message, once
(:func:`check_options` for what the v3 in-memory evaluator shares; the rest in ``build``); the
pipeline reads the finished, frozen spec and checks nothing again. The spec also computes its
own checkpoint identity (:meth:`RunSpec.identity`) by the one rule of
:mod:`modebench.receipt.run_identity`. Adding an option: a field of ``EvaluationOptions`` with its
identity mark, its rule here, its use where it acts (``modebench/cli/evaluation.py`` for its flag,
mapped in ``EvaluationOptions.from_args``).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from modebench._datasets.sources import RegistryLike
from modebench.api_types import EvaluationOptions, RunMetadata
from modebench.backends.grader import Grader
from modebench.failures import policy
from modebench.guard import read_capped
from modebench.identity import canonical
from modebench.intake.ids import PromptIds, read_ids
from modebench.intake.shards import Shard, parse_shard
from modebench.isolation.pool import MAX_WORKERS
from modebench.publish import destination
from modebench.receipt.run_identity import bound_options, checkpoint_identity
from modebench.run_metadata import validate_run
from modebench.validation import InputError, OptionError, loads, output_exists, positive_integer

#: The input name that means standard input.
STDIN = "-"

#: What receives a run's progress events (``modebench.api_types.Progress`` dictionaries).
ProgressCallback = Callable[[dict[str, Any]], None]

__all__ = [
    "STDIN",
    "Execution",
    "ProgressCallback",
    "RunSpec",
    "check_backend",
    "check_options",
    "refuse_existing",
    "work_directory",
]


@dataclass(frozen=True)
class Execution:
    """Where and how a run executes; none of it changes a verdict, a key or a receipt's cells.

    ``shard`` is ``"I/N"`` (or a parsed :class:`Shard`; a built spec holds the parsed one);
    ``grader`` replaces the back end's grader (the caller starts and closes it; ``generate``
    passes one fed while draws arrived).
    """

    work_dir: str | os.PathLike[str] | None = None
    resume: bool = False
    workers: int = 1
    progress: ProgressCallback | None = None
    backend: str = "local"
    cluster_address: str | None = None
    shard: str | Shard | None = None
    grader: Grader | None = None


@dataclass(frozen=True)
class RunSpec:
    """One evaluation, validated: the pipeline's only argument (``modebench.engine.evaluate``).

    ``source`` is the input as given (``"-"``: standard input); ``spooled`` says it is standard
    input already copied into the checkpoint directory. ``options.run`` holds the validated run
    metadata (read from ``options.run_file`` when one was given); ``prompt_ids`` the id list
    ``options.ids`` names. ``registry`` is ``options.registry`` until the split is resolved,
    then the registry read once.
    """

    source: str | os.PathLike[str]
    output: Path
    work_dir: Path
    options: EvaluationOptions
    execution: Execution
    prompt_ids: PromptIds | None = None
    registry: RegistryLike = None
    spooled: bool = False
    #: Standard input's run-metadata file, read once the input has ended (a producer piping the
    #: input may write it last); :meth:`with_run_file` reads it.
    pending_run_file: Path | None = None

    @property
    def from_stdin(self) -> bool:
        return os.fspath(self.source) == STDIN

    @property
    def shard(self) -> Shard | None:
        """The parsed shard (``build`` parses ``execution.shard``)."""
        return cast(Shard | None, self.execution.shard)

    @property
    def run(self) -> dict[str, Any] | None:
        """The validated run metadata, when the options give one."""
        return cast(dict[str, Any] | None, self.options.run)

    @classmethod
    def build(
        cls,
        input_path: str | os.PathLike[str],
        output_path: str | os.PathLike[str],
        options: EvaluationOptions,
        execution: Execution = Execution(),
    ) -> RunSpec:
        """Parse and validate every option, in the order the checks have always been made.

        Rules that name options raise :class:`OptionError` (the CLI says them with its flags);
        ``options.ids`` may also be a :class:`PromptIds` and ``options.run`` validated metadata.
        """
        _check_combinations(options, output_path, execution)
        stdin = os.fspath(input_path) == STDIN
        if stdin and execution.shard is not None:
            raise InputError("standard input cannot be graded in shards; save it to a file first")
        shard = parse_shard(execution.shard) if isinstance(execution.shard, str) else execution.shard
        prompt_ids = _prompt_ids(options.ids)
        run: Any = options.run
        pending = None
        if options.run_file is not None and stdin:
            pending = Path(options.run_file)
        elif options.run_file is not None:
            run = loads(read_capped(options.run_file, "run"))
        positive_integer(execution.workers, "workers")
        if execution.backend == "local" and execution.workers > MAX_WORKERS:
            raise InputError(f"workers must be between 1 and {MAX_WORKERS}")
        checked = check_options(dataclasses.replace(options, run=run))
        _check_limit(checked)
        _check_policy(checked.unscorable, shard)
        output = destination(output_path)  # a link there is refused, never followed
        return cls(
            source=input_path,
            output=output,
            work_dir=work_directory(output, execution.work_dir),
            options=checked,
            execution=dataclasses.replace(execution, shard=shard),
            prompt_ids=prompt_ids,
            registry=options.registry,
            pending_run_file=pending,
        )

    def with_run_file(self) -> RunSpec:
        """This spec with its pending run-metadata file read and validated (as ``build`` would)."""
        if self.pending_run_file is None:
            return self
        run = validate_run(loads(read_capped(self.pending_run_file, "run")))
        return dataclasses.replace(
            self, options=dataclasses.replace(self.options, run=cast(RunMetadata, run)), pending_run_file=None
        )

    def identity(self, input_sha: str, frozen: Any, software: dict[str, Any]) -> dict[str, Any]:
        """The checkpoint identity of this run over an input of hash ``input_sha`` (as JSON reads
        it back): the options bound by the one rule, each as it entered the run."""
        values = {item.name: getattr(self.options, item.name) for item in dataclasses.fields(self.options)}
        values["ids"] = self.prompt_ids.ordered() if self.prompt_ids is not None else None
        bound = checkpoint_identity(input_sha, bound_options(values), frozen, software, self.shard)
        return loads(canonical(bound))  # type: ignore[no-any-return]


def check_options(options: EvaluationOptions) -> EvaluationOptions:
    """The options' own rules (shared with the v3 in-memory evaluator); ``run`` comes back validated."""
    positive_integer(options.min_defined_prompts, "min_defined_prompts")
    if not isinstance(options.allow_partial, bool):
        raise InputError("allow_partial must be a boolean")
    if options.config is None and (
        options.data_root is not None or options.allow_partial or options.split != "eval"
    ):
        raise InputError("data_root, split, and allow_partial require a frozen config")
    if options.run is None:
        return options
    return dataclasses.replace(options, run=cast(RunMetadata, validate_run(options.run)))


def check_backend(backend: str, address: str | None) -> None:
    """A cluster address names a Ray cluster: with any other back end it is an error."""
    if address is not None and backend != "ray":
        raise OptionError("address_requires_ray", "a cluster address applies only to the ray back end")


def work_directory(output: Path, work_dir: str | os.PathLike[str] | None) -> Path:
    """The checkpoint directory: ``work_dir``, else ``<output>.work`` beside the (resolved) output."""
    return Path(work_dir).resolve() if work_dir is not None else output.with_name(output.name + ".work")


def refuse_existing(output: str | os.PathLike[str], resume: bool) -> None:
    """A fresh run never overwrites: its output must not exist (a resume may find it published)."""
    destination(output)  # a link at the output is refused, never followed
    if Path(output).exists() and not resume:
        raise output_exists(output)


def _check_combinations(
    options: EvaluationOptions, output: str | os.PathLike[str], execution: Execution
) -> None:
    if (options.cache_dir is not None or options.offline) and options.config is None:
        raise OptionError("cache_requires_config", "cache_dir and offline require a dataset config")
    if options.registry is not None and options.config is None:
        raise OptionError("registry_requires_config", "registry requires a dataset config")
    if options.run is not None and options.run_file is not None:
        raise OptionError("run_twice", "give run or run_file, not both")
    refuse_existing(output, execution.resume)  # resuming a finished run returns its summary
    check_backend(execution.backend, execution.cluster_address)


def _prompt_ids(ids: Any) -> PromptIds | None:
    if ids is None or isinstance(ids, PromptIds):
        return ids
    return read_ids(ids)


def _check_limit(options: EvaluationOptions) -> None:
    if options.limit is None:
        return
    positive_integer(options.limit, "limit", option=True)
    if options.config is None:
        raise OptionError("limit_requires_config", "limit requires a frozen config")


def _check_policy(unscorable: str, shard: Shard | None) -> None:
    if policy.check(unscorable) != policy.FAIL_RUN and shard is not None:
        raise OptionError(
            "unscorable_shard", "the unscorable policy of a sharded run is not supported; use fail-run"
        )
