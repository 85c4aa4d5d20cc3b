"""The Inspect AI extension (the ``inspect`` extra): tasks, scorer and reducers.

Inspect loads :mod:`modebench.integrations.inspect._registry` through the ``inspect_ai``
entry point, so ``inspect eval modebench/level1_countdown --epochs 8`` finds the tasks. The
reducers are the estimator functions of :mod:`modebench.stats`; see ``docs/ingest.md``.
"""
