"""0.4.0 name of :mod:`modebench.isolation.process`, the bounded worker process (rlimits, deadlines, restart).

The same module object, not a copy: a name that callers replace on this module at call time
(``monkeypatch.setattr``) is replaced where the code looks it up.
"""

import sys

from modebench.isolation import process as _home
from modebench.isolation.process import *  # noqa: F403 - the 0.4.0 names, for type checkers

sys.modules[__name__] = _home
