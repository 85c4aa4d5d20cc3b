"""The run specification: every option of one evaluation, parsed once and checked once.

:meth:`RunSpec.build` is the one place an ``evaluate`` option is parsed (a shard's ``I/N``, an
id list file, a run-metadata file) and validated (every cross-field rule, with its message);
the pipeline reads the finished, frozen spec and checks nothing of the options again. Adding an
option: a field of :class:`modebench.api_types.EvaluationOptions` (or of :class:`Execution`), its
rule here, its use where it acts, and its flag in ``modebench.cli.evaluation``. An option that
changes results enters the checkpoint identity by :mod:`modebench.engine.identity`'s one rule.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from modebench.api_types import EvaluationOptions
from modebench.backends import Grader
from modebench.failures import policy
from modebench.guard import read_capped
from modebench.intake.ids import PromptIds, read_ids
from modebench.intake.preflight import Options
from modebench.intake.shards import Shard, parse_shard
from modebench.isolation.pool import MAX_WORKERS
from modebench.publish import destination
from modebench.run_metadata import validate_run
from modebench.validation import InputError, OptionError, loads, positive_integer

#: The input name that means standard input.
STDIN = "-"

Progress = Callable[[dict[str, Any]], None]

__all__ = ["STDIN", "Execution", "Progress", "RunSpec"]


@dataclass(frozen=True)
class Execution:
    """Where and how a run executes; none of it changes a verdict, a key or a receipt's cells.

    ``shard`` is ``"I/N"`` (or a parsed :class:`Shard`); ``grader`` replaces the back end's grader
    (the caller starts and closes it; ``generate`` passes one fed while draws arrived).
    """

    work_dir: str | os.PathLike[str] | None = None
    resume: bool = False
    workers: int = 1
    progress: Progress | None = None
    backend: str = "local"
    cluster_address: str | None = None
    shard: str | Shard | None = None
    grader: Grader | None = None


@dataclass(frozen=True)
class RunSpec:
    """One evaluation, validated: the pipeline's only argument (``modebench.engine.evaluate``).

    ``source`` is the input as given (``"-"``: standard input); ``spooled`` says it is standard
    input already copied into the checkpoint directory. ``registry`` and ``data_root`` are what
    the caller gave until the split is resolved (then the registry read once and the root).
    """

    source: str | os.PathLike[str]
    output: Path
    work_dir: Path
    options: Options
    registry: Any
    cache_dir: str | os.PathLike[str] | None
    offline: bool
    limit: int | None
    unscorable: str
    keep_checkpoint: bool
    resume: bool
    workers: int
    progress: Progress | None
    backend: str
    cluster_address: str | None
    shard: Shard | None
    grader: Grader | None
    spooled: bool = False
    #: Standard input's run-metadata file, read once the input has ended (a producer piping the
    #: input may write it last); :meth:`with_run_file` reads it.
    pending_run_file: Path | None = None

    @property
    def from_stdin(self) -> bool:
        return os.fspath(self.source) == STDIN

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
        checked = Options.build(
            min_defined_prompts=options.min_defined_prompts,
            run=run,
            data_root=options.data_root,
            config=options.config,
            split=options.split,
            allow_partial=options.allow_partial,
            prompt_ids=prompt_ids,
        )
        _check_limit(options.limit, checked)
        _check_policy(options.unscorable, shard)
        output = destination(output_path)  # a link there is refused, never followed
        return cls(
            source=input_path,
            output=output,
            work_dir=work_directory(output, execution.work_dir),
            options=checked,
            registry=options.registry,
            cache_dir=options.cache_dir,
            offline=options.offline,
            limit=options.limit,
            unscorable=options.unscorable,
            keep_checkpoint=options.keep_checkpoint,
            resume=execution.resume,
            workers=execution.workers,
            progress=execution.progress,
            backend=execution.backend,
            cluster_address=execution.cluster_address,
            shard=shard,
            grader=execution.grader,
            pending_run_file=pending,
        )

    def with_run_file(self) -> RunSpec:
        """This spec with its pending run-metadata file read and validated (as ``build`` would)."""
        if self.pending_run_file is None:
            return self
        run = validate_run(loads(read_capped(self.pending_run_file, "run")))
        return dataclasses.replace(
            self, options=dataclasses.replace(self.options, run=run), pending_run_file=None
        )


def work_directory(output: Path, work_dir: str | os.PathLike[str] | None) -> Path:
    """The checkpoint directory: ``work_dir``, else ``<output>.work`` beside the (resolved) output."""
    return Path(work_dir).resolve() if work_dir is not None else output.with_name(output.name + ".work")


def refuse_existing(output: str | os.PathLike[str], resume: bool) -> None:
    """A fresh run never overwrites: its output must not exist (a resume may find it published)."""
    destination(output)  # a link at the output is refused, never followed
    if Path(output).exists() and not resume:
        raise InputError(f"output already exists: {os.fspath(output)}")


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
    if execution.cluster_address is not None and execution.backend != "ray":
        raise OptionError("address_requires_ray", "a cluster address applies only to the ray back end")


def _prompt_ids(ids: Any) -> PromptIds | None:
    if ids is None or isinstance(ids, PromptIds):
        return ids
    return read_ids(ids)


def _check_limit(limit: int | None, options: Options) -> None:
    if limit is None:
        return
    positive_integer(limit, "limit", option=True)
    if options.config is None:
        raise OptionError("limit_requires_config", "limit requires a frozen config")


def _check_policy(unscorable: str, shard: Shard | None) -> None:
    if policy.check(unscorable) != policy.FAIL_RUN and shard is not None:
        raise OptionError(
            "unscorable_shard", "the unscorable policy of a sharded run is not supported; use fail-run"
        )
