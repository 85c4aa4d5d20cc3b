"""ModeBench: exact correctness and solution-mode diversity for saved model responses.

The public, typed surface is :mod:`modebench.api`; this module only carries the version.
"""

from typing import Any

__version__ = "0.5.0"

__all__ = ["__version__", "cell_summary", "mode_diversity"]


def __getattr__(name: str) -> Any:
    # Compatibility names of 0.4.0, resolved lazily so that importing the package stays light.
    if name in ("mode_diversity", "cell_summary"):
        from modebench import metrics  # noqa: PLC0415 - 0.4.0 names, resolved when used: `import modebench` stays light

        return getattr(metrics, name)
    raise AttributeError(f"module 'modebench' has no attribute {name!r}")
