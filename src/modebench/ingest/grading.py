"""Grading a rollout source step by step, each step's receipt cached by content hash.

A step's evaluate input (what :func:`modebench.ingest.ingest` writes for it) is hashed together
with the split it is graded against; the receipt lives under ``<cache>/<hash>/report.json``. A
completed cached receipt is reused, so re-running a trajectory while training continues grades
only the steps that are new (or whose dump changed).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from modebench import domains
from modebench.api_types import EvaluationOptions
from modebench.engine import Execution, RunSpec, evaluate
from modebench.guard import read_capped
from modebench.identity import grader_identity
from modebench.ingest import PromptIndex, ingest
from modebench.validation import InputError

__all__ = ["CACHE_SCHEMA", "graded_steps"]

CACHE_SCHEMA = "modebench-rollout-grading-v1"


def _completed(receipt: Path) -> bool:
    try:
        payload = json.loads(receipt.read_bytes())
    except (OSError, ValueError):
        return False
    if not isinstance(payload, dict) or payload.get("evaluation", {}).get("status") != "completed":
        return False
    # The plug-ins that graded it must still be the installed ones, to their source files.
    recorded = payload.get("software", {}).get("plugins", {})
    try:
        return not recorded or domains.origins(recorded) == recorded
    except KeyError:  # a plug-in it used is gone
        return False


def graded_steps(
    fmt: str,
    source: str | os.PathLike[str],
    cache_dir: str | os.PathLike[str],
    *,
    index: PromptIndex,
    options: EvaluationOptions,
    workers: int = 1,
    id_field: str | None = None,
) -> tuple[list[tuple[int, Path]], dict[str, Any]]:
    """``(step, receipt)`` for every step of the source, and counts of graded/cached steps.

    ``id_field``: the source field holding the modebench prompt id (as ``ingest --id-field``); it
    changes the converted input, so the content-hash cache tells the two apart by itself.
    """
    cache = Path(cache_dir)
    created = not cache.exists()
    cache.mkdir(parents=True, exist_ok=True)
    try:
        return _graded_steps(
            fmt, source, cache, index=index, options=options, workers=workers, id_field=id_field
        )
    except BaseException:
        if created:  # a failure before any step was graded (a malformed dump) leaves no cache
            with contextlib.suppress(OSError):
                cache.rmdir()
        raise


def _graded_steps(
    fmt: str,
    source: str | os.PathLike[str],
    cache: Path,
    *,
    index: PromptIndex,
    options: EvaluationOptions,
    workers: int,
    id_field: str | None,
) -> tuple[list[tuple[int, Path]], dict[str, Any]]:
    run_file = read_capped(options.run_file, "run") if options.run_file is not None else b""
    identity = json.dumps(
        {"schema": CACHE_SCHEMA, "config": options.config, "split": options.split,
         "registry": options.registry, "run": options.run,
         "run_file_sha256": hashlib.sha256(run_file).hexdigest(),
         "grader": grader_identity(options.data_root, options.cache_dir)},
        sort_keys=True, default=str,
    ).encode()  # fmt: skip
    steps: list[tuple[int, Path]] = []
    counts = {"graded": 0, "cached": 0}
    with tempfile.TemporaryDirectory(dir=cache) as scratch:
        summary = ingest(fmt, source, Path(scratch) / "rollouts.jsonl", index=index, id_field=id_field)
        for entry in summary["files"]:
            if entry["step"] is None:
                raise InputError(f"{os.fspath(source)}: {fmt} source has no training steps")
            step_input = Path(entry["path"])
            digest = hashlib.sha256(identity + b"\0")
            with step_input.open("rb") as handle:  # streamed: a step's file can be large
                while chunk := handle.read(1 << 20):
                    digest.update(chunk)
            target = cache / digest.hexdigest()
            receipt = target / "report.json"
            if _completed(receipt):
                counts["cached"] += 1
            else:
                # An interrupted or failed grading is not reused: start that step afresh.
                shutil.rmtree(target, ignore_errors=True)
                target.mkdir()
                # Moved, not copied: the scratch directory lives in the cache, one file system.
                step_input.replace(target / "input.jsonl")
                execution = Execution(work_dir=target / "work", workers=workers)
                evaluate(
                    RunSpec.build(target / "input.jsonl", receipt, dataclasses.replace(options), execution)
                )
                counts["graded"] += 1
            steps.append((int(entry["step"]), receipt))
    return steps, {**counts, "unmatched": summary["unmatched"]}
