"""ModeBench: exact correctness and solution-mode diversity for saved model responses.

The public, typed surface is :mod:`modebench.api`; this module carries the version and the
names 0.4.0 exported here (``docs/compatibility.md``).
"""

import importlib
from typing import Any

from modebench.compat import aliases as _aliases

__version__ = "0.5.0"

__all__ = ["__version__", "cell_summary", "mode_diversity", "validated_modebench_outcome_key"]

# ``import modebench.mathir`` and the other 0.4.0 aliases resolve to the modules they name.
_aliases.install()


def __getattr__(name: str) -> Any:
    # Compatibility names of 0.4.0, resolved lazily so that importing the package stays light.
    if name in ("mode_diversity", "cell_summary"):
        from modebench import metrics  # noqa: PLC0415 - 0.4.0 names, resolved when used: `import modebench` stays light

        return getattr(metrics, name)
    if name == "validated_modebench_outcome_key":
        # By name: the grading surface sits above every module that imports this package.
        return importlib.import_module("modebench.grading").validated_modebench_outcome_key
    if f"modebench.{name}" in _aliases.ALIASES:
        return importlib.import_module(f"modebench.{name}")
    raise AttributeError(f"module 'modebench' has no attribute {name!r}")
