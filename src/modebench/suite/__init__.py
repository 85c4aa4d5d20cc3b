"""Building a frozen suite: generate a release, calibrate it from a pilot run, size a comparison.

* ``modebench.suite.build`` — a fresh, never-published release (Parquet, registry, manifest);
* ``modebench.suite.cards`` — the datasheet of each configuration of a generated release;
* ``modebench.suite.calibrate`` — difficulty strata and a dev/test split from a pilot receipt;
* ``modebench.suite.power`` — items needed for a paired accuracy comparison (McNemar);
* prompt-id list files (``calibrate`` writes them, ``prepare``/``evaluate`` select) are :mod:`modebench.intake.ids`.

Running a suite (``docs/suites.md``):

* ``modebench.suite.configs`` — which configurations a selection names (comma lists, ``all``);
* ``modebench.suite.runs`` — prepare or evaluate several configurations in one call;
* ``modebench.suite.summary`` — the ``suite.json`` summary: writing, reading and verifying it.
"""
