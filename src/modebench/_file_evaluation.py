"""File evaluation with every option the ``evaluate`` command has: the one place that checks
option combinations, reads the run metadata, loads a registry once, resolves the data root,
runs the streaming evaluator and, when reference validation fails, publishes the failure receipt.

``modebench.api.evaluate_file`` and the ``evaluate`` command both call :func:`evaluate_path`, so
the two give byte-identical receipts for the same inputs.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from modebench.api_types import EvaluationOptions
from modebench.diagnostics import VerifierExecutionError
from modebench.validation import InputError, OptionError, loads

__all__ = ["FAILURE_SCHEMA", "evaluate_path"]

#: The schema name of the failure receipt (the v3 name, as ModeBench 0.4.0 writes it).
FAILURE_SCHEMA = "modebench-saved-responses-v3"


def _check(options: EvaluationOptions, output: str | os.PathLike[str], resume: bool) -> None:
    if (options.cache_dir is not None or options.offline) and options.config is None:
        raise OptionError("cache_requires_config", "cache_dir and offline require a dataset config")
    if options.registry is not None and options.config is None:
        raise OptionError("registry_requires_config", "registry requires a dataset config")
    if options.run is not None and options.run_file is not None:
        raise OptionError("run_twice", "give run or run_file, not both")
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
) -> dict[str, Any]:
    """Evaluate ``input_path`` into a v4 receipt; return the summary of the streaming evaluator.

    A ``VerifierExecutionError`` (reference validation could not run) publishes the v3 failure
    receipt at ``output_path`` and is then re-raised. A preflight that fails leaves no checkpoint.
    """
    from modebench.streaming import evaluate_file

    _check(options, output_path, resume)
    if cluster_address is not None and backend != "ray":
        raise OptionError("address_requires_ray", "a cluster address applies only to the ray back end")
    from modebench.backends.shard import parse_shard

    selected = parse_shard(shard) if shard is not None else None
    prompt_ids = None
    if options.ids is not None:
        from modebench.suite.ids import read_ids

        prompt_ids = read_ids(options.ids)
    run = options.run
    if options.run_file is not None:
        run = loads(Path(options.run_file).read_bytes())
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
            prompt_ids=prompt_ids,
        )
    except VerifierExecutionError as exc:
        _failure_receipt(output_path, exc, Path(input_path))
        raise
