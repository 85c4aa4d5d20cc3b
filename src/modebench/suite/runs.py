"""Whole suites: prepare or evaluate several frozen configurations in one call (``docs/suites.md``).

A suite is a directory of files named by configuration. ``prepare_suite`` writes
``DIR/<config>.jsonl`` (the requests of each configuration, exactly what a one-configuration
``prepare`` writes). ``evaluate_suite`` reads ``INPUT_DIR/<config>.jsonl`` (those requests with
their responses) and writes ``OUT/<config>.json`` receipts, each the very receipt a
one-configuration evaluation of that file gives, plus the summary ``OUT/suite.json``.
"""

from __future__ import annotations

import copy
import dataclasses
import os
import secrets
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from modebench import __version__
from modebench._datasets.export import export_requests
from modebench._datasets.roots import preload_registry
from modebench._datasets.sources import RegistryLike
from modebench.api_types import EvaluationOptions
from modebench.diagnostics import VerifierExecutionError
from modebench.engine import Execution, RunSpec, evaluate
from modebench.receipt.schema import FAILURE_SCHEMA
from modebench.suite.configs import expand_configs
from modebench.suite.summary import SCHEMA, SUMMARY_NAME, config_entry, read_summary, write_summary
from modebench.validation import InputError, OptionError, loads, output_exists, positive_integer

__all__ = ["evaluate_suite", "prepare_suite"]

PathLike = str | os.PathLike[str]


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
    """Write ``directory/<config>.jsonl`` for every configuration; the directory appears whole or not at all."""

    target = Path(directory)
    if target.exists():
        raise output_exists(directory)
    if limit is not None:
        positive_integer(limit, "limit", option=True)
    names = expand_configs(configs, split, registry=registry, offline=offline, cache_dir=cache_dir)
    loaded: RegistryLike = preload_registry(registry, offline, cache_dir)  # read once for all configs
    temporary = target.parent / f".{target.name}-{secrets.token_hex(6)}"
    temporary.mkdir(parents=True)  # parents as a one-config prepare makes them
    try:
        counts = {
            name: export_requests(
                temporary / f"{name}.jsonl",
                name,
                split,
                data_root=data_root,
                cache_dir=cache_dir,
                offline=offline,
                registry=loaded,
                limit=limit,
            )["prompts"]
            for name in names
        }
        os.rename(temporary, target)  # refuses an existing non-empty directory that appeared meanwhile
    except BaseException:
        shutil.rmtree(temporary, ignore_errors=True)
        raise
    summary: dict[str, Any] = {
        "output": os.fspath(directory),
        "configs": len(names),
        "prompts": sum(counts.values()),
        "files": {name: f"{name}.jsonl" for name in names},
    }
    if limit is not None:
        summary["limit"] = limit
    return summary


def _inputs(directory: Path, names: list[str]) -> list[Path]:
    if not directory.is_dir():
        raise InputError(f"suite input must be a directory holding <config>.jsonl files: {directory}")
    files = [directory / f"{name}.jsonl" for name in names]
    missing = [path.name for path in files if not path.is_file()]
    if missing:
        raise InputError(f"suite input {directory} lacks {', '.join(missing)}")
    return files


def evaluate_suite(
    input_dir: PathLike,
    output_dir: PathLike,
    configs: str | Sequence[str],
    options: EvaluationOptions | None = None,
    execution: Execution | None = None,
) -> dict[str, Any]:
    """Evaluate ``input_dir/<config>.jsonl`` per configuration into ``output_dir``; write ``suite.json``.

    ``options`` and ``execution`` apply to every configuration (``options.config`` must be unset;
    each configuration's checkpoint is beside its receipt, so ``work_dir`` and ``shard`` are not
    used). A configuration whose reference validation fails gets its failure receipt and
    the suite goes on; an input error stops the suite (finished receipts stay;
    ``execution.resume`` continues). Progress events carry ``config``.
    """
    execution = execution if execution is not None else Execution()
    resume, progress = execution.resume, execution.progress
    chosen = options if options is not None else EvaluationOptions()
    if chosen.config is not None:
        raise OptionError("suite_config", "a suite takes its configurations as configs, not options.config")
    source, target = Path(input_dir), Path(output_dir)
    if target.exists() and not resume:
        raise output_exists(output_dir)
    names = expand_configs(
        configs, chosen.split, registry=chosen.registry, offline=chosen.offline, cache_dir=chosen.cache_dir
    )
    files = _inputs(source, names)
    if resume and (target / SUMMARY_NAME).is_file():
        document, _ = read_summary(target / SUMMARY_NAME)  # a finished suite: verified, then reported
        return _result(target, document)
    created = not target.exists()
    target.mkdir(exist_ok=True)
    entries = []
    try:
        for name, path in zip(names, files):
            receipt = target / f"{name}.json"
            events = None if progress is None else _tagged(progress, name)
            if resume and _failed_before(receipt):
                entries.append(config_entry(name, receipt, target, path.name))
                continue  # a failure receipt is final: resuming reports it again
            try:
                settings = dataclasses.replace(
                    execution,
                    work_dir=None,
                    shard=None,
                    # a configuration the stopped suite never reached simply starts
                    resume=resume
                    and (receipt.exists() or receipt.with_name(receipt.name + ".work").exists()),
                    progress=events,
                )
                options = dataclasses.replace(chosen, config=name, run=copy.deepcopy(chosen.run))
                evaluate(RunSpec.build(path, receipt, options, settings))
            except VerifierExecutionError:
                pass  # its failure receipt is published; the summary lists it as failed
            entries.append(config_entry(name, receipt, target, path.name))
    except BaseException:
        if created and not any(target.iterdir()):
            target.rmdir()  # nothing was published: leave nothing behind
        raise
    document = {
        "schema": SCHEMA,
        "status": "completed" if all(e["status"] == "completed" for e in entries) else "failed",
        "split": chosen.split,
        "registry": chosen.registry,
        "limit": chosen.limit,
        "input_directory": os.fspath(input_dir),
        "software": {"modebench_version": _version()},
        "configs": entries,
    }
    write_summary(target, document)
    return _result(target, document)


def _failed_before(receipt: Path) -> bool:

    if not receipt.is_file():
        return False
    payload = loads(receipt.read_bytes())
    return isinstance(payload, dict) and payload.get("schema") == FAILURE_SCHEMA


def _tagged(progress: Callable[[dict[str, Any]], None], name: str) -> Callable[[dict[str, Any]], None]:
    def emit(event: dict[str, Any]) -> None:
        progress({**event, "config": name})

    return emit


def _version() -> str:

    return __version__


def _result(target: Path, document: dict[str, Any]) -> dict[str, Any]:
    entries = document["configs"]
    return {
        "output": str(target.resolve()),
        "summary": str((target / SUMMARY_NAME).resolve()),
        "configs": len(entries),
        "completed": sum(1 for e in entries if e["status"] == "completed"),
        "prompts": sum(int(e["prompts"] or 0) for e in entries),
        "status": document["status"],
    }
