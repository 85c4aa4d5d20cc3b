"""Rewrite the README.md dataset card of a release directory (default: the project's bundled release).

Only ``README.md`` and its line in the release ``manifest.json`` change; data files are never touched.

    python ops/release/refresh_release_card.py [DIR]
"""

from __future__ import annotations

import argparse
import json

from modebench.dataset_cache import bundled_registry_path
from modebench.hub import refresh_card


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("directory", nargs="?", default=str(bundled_registry_path().parent))
    print(json.dumps(refresh_card(parser.parse_args().directory)))


if __name__ == "__main__":
    main()
