"""Package list and layout (the metadata is in pyproject.toml).

Everything under ``src/`` is found as usual; the project's own frozen release lives at the
top-level ``data/bundled/`` and is installed as the data-only package ``modebench._bundled_release``
so that ``--registry bundled`` works offline after ``pip install``.
"""

from setuptools import find_packages, setup

BUNDLED = "modebench._bundled_release"

setup(
    packages=[*find_packages("src"), BUNDLED],
    package_dir={"": "src", BUNDLED: "data/bundled"},
)
