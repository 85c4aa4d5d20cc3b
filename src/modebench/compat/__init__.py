"""The ModeBench 0.4.0 compatibility layer: logic behind the 0.4.0 module names that have no home
elsewhere (the legacy in-process grading helpers, the training-loop prompt templates, the module
aliases). The 0.4.0 names themselves (``modebench.grading``, ``modebench.templates``, …) are thin
modules that re-export from here; ``docs/compatibility.md`` describes the whole surface.
"""
