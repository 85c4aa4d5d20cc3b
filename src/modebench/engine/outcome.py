"""What ``modebench.api.evaluate_file`` returns for a finished evaluation: the typed receipt summary."""

from __future__ import annotations

import os
import pathlib
from typing import cast

from modebench.api_types import EvaluationReceipt, EvaluationStatus
from modebench.engine.spec import RunSpec
from modebench.failures.explain import explain
from modebench.failures.policy import FAIL_RUN
from modebench.receipt.records import Summary

__all__ = ["evaluation_receipt"]


def evaluation_receipt(
    spec: RunSpec, summary: Summary, input_path: str | os.PathLike[str]
) -> EvaluationReceipt:
    """The typed summary of ``spec``'s finished run, with its unscorable attempts explained.

    A shard receipt is explained once merged; an explanation never fails a finished run.
    """
    explanation = None
    if spec.shard is None and (summary["status"] != "completed" or spec.options.unscorable != FAIL_RUN):
        try:
            found = explain(summary["output"], input_path=input_path, limit=10)
        except (ValueError, OSError):
            found = None
        explanation = found if found is not None and (found.counts or found.unavailable) else None
    return EvaluationReceipt(
        output=pathlib.Path(summary["output"]),
        status=cast(EvaluationStatus, summary["status"]),
        prompts=int(summary["prompts"]),
        cells=int(summary["cells"]),
        work_dir=pathlib.Path(summary["work_dir"]),
        dataset_kind="frozen" if summary["dataset_kind"] == "frozen" else "custom",
        unscorable=explanation,
    )
