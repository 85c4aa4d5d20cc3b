"""0.4.0 name of :mod:`modebench.isolation.client`, the shared worker of the parent: one-off grading and reference checks.

The same module object, not a copy: a name that callers replace on this module at call time
(``monkeypatch.setattr``) is replaced where the code looks it up.
"""

import sys

from modebench.isolation import client as _home
from modebench.isolation.client import *  # noqa: F403 - the 0.4.0 names, for type checkers

sys.modules[__name__] = _home
