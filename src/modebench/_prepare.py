"""0.4.0 name of :mod:`modebench.isolation.prepare`, the workers' preflight of input lines.

The same module object, not a copy: a name that callers replace on this module at call time
(``monkeypatch.setattr``) is replaced where the code looks it up.
"""

import sys

from modebench.isolation import prepare as _home
from modebench.isolation.prepare import *  # noqa: F403 - the 0.4.0 names, for type checkers

sys.modules[__name__] = _home
