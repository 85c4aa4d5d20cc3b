"""``python -m modebench.cli …``, as in 0.4.0 (the same entry point as ``modebench``)."""

from __future__ import annotations

import sys

from modebench.cli import main

if __name__ == "__main__":
    sys.exit(main())
