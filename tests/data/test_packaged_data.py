"""The bundled release lives in the top-level ``data/bundled/``; the sdist and the wheel ship it
byte for byte, so ``--registry bundled`` works offline after ``pip install``."""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from modebench.dataset_cache import bundled_release_root, load_registry

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "data" / "bundled"


def _tree(directory: Path) -> dict[str, bytes]:
    return {
        path.relative_to(directory).as_posix(): path.read_bytes()
        for path in sorted(directory.rglob("*"))
        if path.is_file()
    }


def test_a_checkout_reads_the_bundled_release_from_data() -> None:
    assert bundled_release_root().resolve() == DATA.resolve()
    registry = load_registry("bundled")
    assert registry.local_root == (DATA / "data").resolve()
    assert registry.raw == (DATA / "registry.json").read_bytes()
    # the files the registry names are all there (25 configurations, one eval split each)
    assert {record["data_file"] for record in registry.records} == {
        path for path in _tree(DATA) if path.endswith(".parquet")
    }


@pytest.mark.slow  # builds an sdist and a wheel
def test_sdist_and_wheel_ship_exactly_data_bundled(tmp_path: Path) -> None:
    # The sdist first, then the wheel built from that sdist (what `make dist` does).
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    done = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(tmp_path), str(ROOT)],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    )
    # No setuptools warnings (license metadata in SPDX form, every bundled directory a package,
    # a MANIFEST.in whose every rule matches): `make demo` and `make dist` print none.
    output = done.stdout + done.stderr
    assert [line for line in output.splitlines() if "warning" in line.lower()] == []
    expected = _tree(DATA)
    assert len([name for name in expected if name.endswith(".parquet")]) == 25
    (wheel,) = tmp_path.glob("*.whl")
    prefix = "modebench/_bundled_release/"
    with zipfile.ZipFile(wheel) as archive:
        shipped = {
            name[len(prefix) :]: archive.read(name)
            for name in archive.namelist()
            if name.startswith(prefix) and not name.endswith("/")
        }
        assert not [name for name in archive.namelist() if name.startswith("modebench/releases/")]
    assert shipped == expected
    (sdist,) = tmp_path.glob("*.tar.gz")
    with tarfile.open(sdist) as archive:
        members = [m for m in archive.getmembers() if m.isfile() and "/data/bundled/" in m.name]
        in_sdist = {}
        for member in members:
            handle = archive.extractfile(member)
            assert handle is not None
            in_sdist[member.name.split("/data/bundled/", 1)[1]] = handle.read()
    assert in_sdist == expected
