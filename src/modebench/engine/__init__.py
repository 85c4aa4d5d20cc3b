"""The evaluation engine: one run specification, one pipeline.

Every entry point — the CLI, ``modebench.api``, suites, ``generate``, ingest, the Ray back end
and shards — builds a :class:`RunSpec` (:meth:`RunSpec.build`, the one place options are parsed
and checked) and calls :func:`evaluate`. ``spec`` (the options and their rules), ``identity``
(the checkpoint identity), ``entry`` (standard input, split resolution, failure receipt),
``pipeline`` (checkpoint → preflight → grading → publication), ``preflight``, ``checkpoint``
(verifying a resumed checkpoint) and ``grading`` are its modules, in the order a run uses them.
"""

from modebench.engine.entry import evaluate
from modebench.engine.identity import identity
from modebench.engine.spec import STDIN, Execution, RunSpec

__all__ = ["STDIN", "Execution", "RunSpec", "evaluate", "identity"]
