"""0.4.0 name of :mod:`modebench.isolation.pool`, the local pool of N workers, results in input order.

The same module object, not a copy: a name that callers replace on this module at call time
(``monkeypatch.setattr``) is replaced where the code looks it up.
"""

import sys

from modebench.isolation import pool as _home
from modebench.isolation.pool import *  # noqa: F403 - the 0.4.0 names, for type checkers

sys.modules[__name__] = _home

# ModeBench 0.4.0 surface names (docs/compatibility.md) that live above the worker side: attached
# to the same module object here, in the 0.4.0 module, so that the worker side never imports them.
from modebench.evaluation import grade_prepared  # noqa: E402
from modebench.isolation.client import grade_with_worker  # noqa: E402

for _name, _value in (("grade_prepared", grade_prepared), ("grade_with_worker", grade_with_worker)):
    setattr(_home, _name, _value)
_home.__all__ = [*_home.__all__, "grade_prepared", "grade_with_worker"]
