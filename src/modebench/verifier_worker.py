"""0.4.0 name of :mod:`modebench.isolation.worker_main`, the worker subprocess's main loop.

The same module object, not a copy: a name that callers replace on this module at call time
(``monkeypatch.setattr``) is replaced where the code looks it up.
"""

import sys

from modebench.isolation import worker_main as _home
from modebench.isolation.worker_main import *  # noqa: F403 - the 0.4.0 names, for type checkers

if __name__ == "__main__":  # ``python -m modebench.verifier_worker`` (``worker_command``'s default)
    _home.main()

sys.modules[__name__] = _home
