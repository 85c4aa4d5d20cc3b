"""The pieces behind ``modebench.dataset_cache`` and ``modebench.data`` (private; import those).

Registries and the cache: ``transfer`` (deadline-bounded downloads), ``paths`` (where the cache
lives), ``sources`` (which registry), ``listing`` (what it offers), ``cache`` (verified fetch).
Frozen splits: ``parquet`` (locate and verify a split, read its rows), ``roots`` (which data
directory), ``export`` (tasks, ``prepare`` requests, ``datasets inspect``), ``frozen`` (the
evaluator's view of a split).
"""
