"""The file evaluation of the ``evaluate`` command, as callers before :mod:`modebench.engine` knew it.

:func:`evaluate_path` builds the :class:`~modebench.engine.RunSpec` and calls
:func:`modebench.engine.evaluate`, which is what the CLI, the API, suites and ``generate`` call.
"""

from __future__ import annotations

import os
from typing import Any

from modebench.api_types import EvaluationOptions
from modebench.backends import Grader
from modebench.engine import Execution, RunSpec, evaluate
from modebench.engine.spec import STDIN, Progress
from modebench.receipt.schema import FAILURE_SCHEMA

__all__ = ["FAILURE_SCHEMA", "STDIN", "evaluate_path"]


def evaluate_path(
    input_path: str | os.PathLike[str],
    output_path: str | os.PathLike[str],
    options: EvaluationOptions,
    *,
    work_dir: str | os.PathLike[str] | None = None,
    resume: bool = False,
    workers: int = 1,
    progress: Progress | None = None,
    backend: str = "local",
    cluster_address: str | None = None,
    shard: str | None = None,
    grader: Grader | None = None,
) -> dict[str, Any]:
    """Evaluate ``input_path`` into a v4 receipt; return the summary (``modebench.engine.evaluate``)."""
    execution = Execution(work_dir, resume, workers, progress, backend, cluster_address, shard, grader)
    return dict(evaluate(RunSpec.build(input_path, output_path, options, execution)))
