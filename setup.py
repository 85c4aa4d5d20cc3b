"""Package list and layout (the metadata is in pyproject.toml).

Everything under ``src/`` is found as usual; the project's own frozen release lives at the
top-level ``data/bundled/`` and is installed as the data-only package ``modebench._bundled_release``
so that ``--registry bundled`` works offline after ``pip install``. Each of its directories that
holds files is listed as a (data-only) package too: setuptools would otherwise warn, for every
one of them, that an importable directory is missing from the package list.
"""

from pathlib import Path

from setuptools import find_packages, setup

BUNDLED = "modebench._bundled_release"
BUNDLED_DIR = Path(__file__).resolve().parent / "data" / "bundled"

data_packages = sorted(
    ".".join((BUNDLED, *directory.relative_to(BUNDLED_DIR).parts))
    for directory in BUNDLED_DIR.rglob("*")
    if directory.is_dir() and any(child.is_file() for child in directory.iterdir())
)

setup(
    packages=[*find_packages("src"), BUNDLED, *data_packages],
    package_dir={"": "src", BUNDLED: "data/bundled"},
)
