"""The one function every entry point calls: :func:`evaluate` a :class:`RunSpec`.

Before the pipeline runs, standard input (``-``) is spooled into the checkpoint directory
(``docs/evaluation.md``): the checkpoint identity binds the input's hash, which is known only at
end of input, and the spool is what a resume reads. A receipt from ``-`` is the receipt of a file
with the same bytes. A frozen split's registry is read once and its data root resolved (either
may download unless offline). When reference validation cannot run, the v3 failure receipt is
published at the output and the error re-raised.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path
from typing import IO

from modebench._datasets.roots import SplitSource
from modebench.diagnostics import VerifierExecutionError
from modebench.engine import ledger as _ledger
from modebench.engine import pipeline
from modebench.engine.spec import RunSpec
from modebench.identity import file_sha256, software_identity
from modebench.publish import atomic_output
from modebench.receipt.records import Summary
from modebench.receipt.writer import failure_receipt_text
from modebench.validation import InputError, OptionError, output_exists

__all__ = ["evaluate"]

_CHUNK = 1 << 20


def evaluate(spec: RunSpec, stdin: IO[bytes] | None = None) -> Summary:
    """Evaluate ``spec`` into its receipt; return the summary (``stdin``: the stream of ``-``).

    A ``VerifierExecutionError`` (reference validation could not run) publishes the v3 failure
    receipt at the output and is then re-raised. A preflight that fails leaves no checkpoint.
    """
    if not spec.from_stdin:
        return _resolved(spec)
    directory = spec.work_dir
    if spec.execution.resume:
        spool = _resumed_spool(directory, spec.output)
    else:
        spool = _spool(stdin if stdin is not None else sys.stdin.buffer, directory)
    try:
        return _resolved(dataclasses.replace(spec, source=spool, spooled=True).with_run_file())
    except BaseException:
        # Before the checkpoint holds anything, a fresh run leaves nothing behind (the evaluator
        # itself removes a checkpoint whose preflight failed).
        if (
            not spec.execution.resume
            and directory.is_dir()
            and not (directory / _ledger.LEDGER_NAME).exists()
        ):
            _ledger.discard(directory)
        raise


def _resolved(spec: RunSpec) -> Summary:
    options = spec.options
    if options.config is not None:
        # The registry is read once; the pipeline re-checks the split against it.
        root, registry = SplitSource(
            options.config,
            options.split,
            options.data_root,
            options.cache_dir,
            options.offline,
            spec.registry,
        ).open()
        spec = dataclasses.replace(
            spec, options=dataclasses.replace(options, data_root=os.fspath(root)), registry=registry
        )
    try:
        return pipeline.run(spec)
    except VerifierExecutionError as exc:
        receipt = failure_receipt_text(software_identity(), exc.diagnostic, file_sha256(Path(spec.source)))
        with atomic_output(spec.output) as handle:
            handle.write(receipt)
        raise


def _spool(stream: IO[bytes], directory: Path) -> Path:
    """Copy ``stream`` as it arrives into the new checkpoint ``directory``; the final name is given
    only to a completely received, fsynced copy, so a resume can tell a complete spool."""
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


def _resumed_spool(directory: Path, output: Path) -> Path:
    """The completely received standard input of an interrupted run; standard input is not read."""
    spool = directory / _ledger.SPOOL_NAME
    if spool.is_file():
        return spool
    if output.exists():
        raise output_exists(output)
    raise InputError(
        f"cannot resume from standard input: {directory} holds no completely received input; "
        "remove it and run again"
    )
