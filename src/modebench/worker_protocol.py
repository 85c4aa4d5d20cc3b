"""0.4.0 name of :mod:`modebench.isolation.protocol`, the line protocol between the parent and a worker.

The same module object, not a copy: a name that callers replace on this module at call time
(``monkeypatch.setattr``) is replaced where the code looks it up.
"""

import sys

from modebench.isolation import protocol as _home
from modebench.isolation.protocol import *  # noqa: F403 - the 0.4.0 names, for type checkers

sys.modules[__name__] = _home
