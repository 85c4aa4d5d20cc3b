"""File evaluation with every option the ``evaluate`` command has: the one place that checks
option combinations, reads the run metadata, loads a registry once, resolves the data root,
runs the streaming evaluator and, when reference validation fails, publishes the failure receipt.

Standard input (``-``) is spooled into the checkpoint directory first (``docs/evaluation.md``):
the checkpoint identity binds the input's hash, which is known only at end of input, and the
spool is what a resume reads. A receipt from ``-`` is the receipt of a file with the same bytes.

``modebench.api.evaluate_file`` and the ``evaluate`` command both call :func:`evaluate_path`, so
the two give byte-identical receipts for the same inputs.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from modebench.api_types import EvaluationOptions
from modebench.diagnostics import VerifierExecutionError
from modebench.guard import read_capped
from modebench.publish import destination
from modebench.validation import InputError, OptionError, loads

if TYPE_CHECKING:
    from modebench.backends import Grader

__all__ = ["FAILURE_SCHEMA", "STDIN", "evaluate_path"]

#: The schema name of the failure receipt (the v3 name, as ModeBench 0.4.0 writes it).
FAILURE_SCHEMA = "modebench-saved-responses-v3"
#: The input name that means standard input.
STDIN = "-"
_CHUNK = 1 << 20


def _check(options: EvaluationOptions, output: str | os.PathLike[str], resume: bool) -> None:
    if (options.cache_dir is not None or options.offline) and options.config is None:
        raise OptionError("cache_requires_config", "cache_dir and offline require a dataset config")
    if options.registry is not None and options.config is None:
        raise OptionError("registry_requires_config", "registry requires a dataset config")
    if options.run is not None and options.run_file is not None:
        raise OptionError("run_twice", "give run or run_file, not both")
    destination(output)  # a link at the output is refused, never followed
    if Path(output).exists() and not resume:  # resuming a finished run returns its summary
        raise InputError(f"output already exists: {os.fspath(output)}")


def _failure_receipt(output: str | os.PathLike[str], error: VerifierExecutionError, source: Path) -> None:
    from modebench.identity import file_sha256, software_identity
    from modebench.publish import atomic_output

    receipt = {
        "schema": FAILURE_SCHEMA,
        "software": software_identity(),
        "evaluation": {"status": "failed"},
        "failure": error.diagnostic,
        "cells": [],
        "input_sha256": file_sha256(source),
    }
    with atomic_output(output) as handle:
        handle.write(json.dumps(receipt, indent=2) + "\n")


def evaluate_path(
    input_path: str | os.PathLike[str],
    output_path: str | os.PathLike[str],
    options: EvaluationOptions,
    *,
    work_dir: str | os.PathLike[str] | None = None,
    resume: bool = False,
    workers: int = 1,
    progress: Callable[[dict[str, Any]], None] | None = None,
    backend: str = "local",
    cluster_address: str | None = None,
    shard: str | None = None,
    grader: Grader | None = None,
) -> dict[str, Any]:
    """Evaluate ``input_path`` into a v4 receipt; return the summary of the streaming evaluator.

    ``grader`` replaces the back end's grader (``modebench.streaming.evaluate_file``).

    A ``VerifierExecutionError`` (reference validation could not run) publishes the v3 failure
    receipt at ``output_path`` and is then re-raised. A preflight that fails leaves no checkpoint.
    """
    _check(options, output_path, resume)
    if cluster_address is not None and backend != "ray":
        raise OptionError("address_requires_ray", "a cluster address applies only to the ray back end")
    if os.fspath(input_path) != STDIN:
        return _evaluate(input_path, output_path, options, work_dir, resume, workers, progress, backend,
                         cluster_address, shard, grader=grader)  # fmt: skip
    if shard is not None:
        raise InputError("standard input cannot be graded in shards; save it to a file first")
    from modebench import _ledger
    from modebench.streaming import work_directory

    directory = work_directory(Path(output_path).resolve(), work_dir)
    spool = _resumed_spool(directory, output_path) if resume else _spool(sys.stdin.buffer, directory)
    try:
        return _evaluate(spool, output_path, options, work_dir, resume, workers, progress, backend,
                         cluster_address, shard, spooled=True, grader=grader)  # fmt: skip
    except BaseException:
        # Before the checkpoint holds anything, a fresh run leaves nothing behind (the evaluator
        # itself removes a checkpoint whose preflight failed).
        if not resume and directory.is_dir() and not (directory / _ledger.LEDGER_NAME).exists():
            _ledger.discard(directory)
        raise


def _spool(stream: IO[bytes], directory: Path) -> Path:
    """Copy ``stream`` as it arrives into the new checkpoint ``directory``; the final name is given
    only to a completely received, fsynced copy, so a resume can tell a complete spool."""
    from modebench import _ledger

    try:
        directory.mkdir(parents=True, exist_ok=False)
    except FileExistsError:
        raise OptionError(
            "checkpoint_exists",
            f"checkpoint already exists: {directory}; resume it or use a new destination",
            path=directory,
        ) from None
    spool = directory / _ledger.SPOOL_NAME
    partial = spool.with_name(spool.name + ".part")
    try:
        read = getattr(stream, "read1", stream.read)  # read1: whatever has arrived, not a full chunk
        with open(partial, "wb") as handle:
            while chunk := read(_CHUNK):
                handle.write(chunk)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(partial, spool)
        descriptor = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
    except BaseException:
        _ledger.discard(directory)
        raise
    return spool


def _resumed_spool(directory: Path, output: str | os.PathLike[str]) -> Path:
    """The completely received standard input of an interrupted run; standard input is not read."""
    from modebench import _ledger

    spool = directory / _ledger.SPOOL_NAME
    if spool.is_file():
        return spool
    if Path(output).exists():
        raise InputError(f"output already exists: {os.fspath(output)}")
    raise InputError(
        f"cannot resume from standard input: {directory} holds no completely received input; "
        "remove it and run again"
    )


def _evaluate(
    input_path: str | os.PathLike[str],
    output_path: str | os.PathLike[str],
    options: EvaluationOptions,
    work_dir: str | os.PathLike[str] | None,
    resume: bool,
    workers: int,
    progress: Callable[[dict[str, Any]], None] | None,
    backend: str,
    cluster_address: str | None,
    shard: str | None,
    *,
    spooled: bool = False,
    grader: Grader | None = None,
) -> dict[str, Any]:
    from modebench.backends.shard import parse_shard
    from modebench.streaming import evaluate_file

    selected = parse_shard(shard) if shard is not None else None
    prompt_ids = None
    if options.ids is not None:
        from modebench.suite.ids import read_ids

        prompt_ids = read_ids(options.ids)
    run = options.run
    if options.run_file is not None:
        run = loads(read_capped(options.run_file, "run"))
    data_root: str | os.PathLike[str] | None = options.data_root
    registry: Any = options.registry
    if options.config is not None:
        from modebench._datasets.roots import SplitSource

        # The registry is read once; the evaluator re-checks the split against it.
        data_root, registry = SplitSource(
            options.config, options.split, options.data_root, options.cache_dir, options.offline, registry
        ).open()
    try:
        return evaluate_file(
            input_path,
            output_path,
            min_defined_prompts=options.min_defined_prompts,
            run=run,
            data_root=data_root,
            config=options.config,
            split=options.split,
            allow_partial=options.allow_partial,
            registry=registry,
            work_dir=work_dir,
            resume=resume,
            progress=progress,
            workers=workers,
            keep_checkpoint=options.keep_checkpoint,
            backend=backend,
            cluster_address=cluster_address,
            shard=selected,
            limit=options.limit,
            unscorable=options.unscorable,
            spooled=spooled,
            prompt_ids=prompt_ids,
            grader=grader,
        )
    except VerifierExecutionError as exc:
        _failure_receipt(output_path, exc, Path(input_path))
        raise
