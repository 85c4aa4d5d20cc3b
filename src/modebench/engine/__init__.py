"""The evaluation engine: one run specification, one pipeline.

Every entry point — the CLI, ``modebench.api``, suites, ``generate``, ingest, the Ray back end
and shards — builds a :class:`RunSpec` (:meth:`RunSpec.build`, the one place options are parsed
and checked) from an :class:`~modebench.api_types.EvaluationOptions` and an :class:`Execution`
and calls :func:`evaluate`. ``spec`` (the options, their rules and the run's identity),
``entry`` (standard input, split resolution, failure receipt), ``pipeline`` (checkpoint →
preflight → grading → publication), ``preflight``, ``checkpoint`` (verifying a resumed
checkpoint), ``grading`` and ``ledger`` are its modules, in the order a run uses them.
"""

from modebench.engine.entry import evaluate
from modebench.engine.spec import STDIN, Execution, ProgressCallback, RunSpec

__all__ = ["STDIN", "Execution", "ProgressCallback", "RunSpec", "evaluate"]
