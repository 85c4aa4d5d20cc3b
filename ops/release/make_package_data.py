"""Write the generated package-root data files of 0.4.0 (``dataset_cards.json``,
``data-sources.json``) from this project's own data; see ``modebench.compat.package_data``.

Usage (from the repository root): ``python ops/release/make_package_data.py``; then ``make inventory``.
"""

from __future__ import annotations

from pathlib import Path

from modebench.compat.package_data import GENERATED, generated_bytes

TARGET = Path(__file__).resolve().parents[2] / "src" / "modebench"


def main() -> None:
    for name in GENERATED:
        (TARGET / name).write_bytes(generated_bytes(name))
        print(f"wrote src/modebench/{name}")


if __name__ == "__main__":
    main()
