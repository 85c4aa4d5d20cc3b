"""The example third-party plug-in, made discoverable in this process for tests.

``plugin_site/`` holds the distribution metadata pip would write for ``examples/domain-plugin``
(its entry point and version); with it and the example's sources on ``sys.path``, discovery goes
through ``importlib.metadata`` exactly as for an installed plug-in. The full install into a fresh
virtual environment is tested in ``tests/domains/test_domain_plugin_install.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from modebench import domains
from modebench.domains._registry import discover, named
from modebench.verifier import close_worker

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "domain-plugin"
EXAMPLE_DOMAIN = "modebench_queens/queens"
SITE = Path(__file__).resolve().parent / "plugin_site"


def forget_plugins() -> None:
    """Forget discovered plug-ins, and the example's modules, so that the next lookup is fresh."""
    discover.cache_clear()
    named.cache_clear()
    domains.plugin.cache_clear()
    # The shared worker of the in-memory evaluator may have started before the plug-in was on the
    # path (an earlier test): a fresh one finds it, as a new process does.
    close_worker()
    for module in [name for name in sys.modules if name.split(".")[0] == "modebench_queens"]:
        del sys.modules[module]
