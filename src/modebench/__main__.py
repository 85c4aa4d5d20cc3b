"""``python -m modebench`` runs the command-line interface."""

import sys

from modebench.cli import main

sys.exit(main())
