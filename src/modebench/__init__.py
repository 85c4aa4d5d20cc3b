"""ModeBench: exact correctness and solution-mode diversity for saved model responses.

The public, typed surface is :mod:`modebench.api`; this module only carries the version.
"""

__version__ = "0.5.0"

__all__ = ["__version__"]
