"""The end of a run says what was skipped and why (tests/conftest.py ``skip_summary``)."""

from __future__ import annotations

import pytest

from tests.conftest import skip_summary
from tests.reference_data import SKIP_REASON


def _skipped(reason: str, *, as_list: bool = False) -> pytest.TestReport:
    # The shape pytest gives a skip report: longrepr (path, line, "Skipped: reason"); a list under xdist.
    longrepr = ("tests/x.py", 3, f"Skipped: {reason}")
    return pytest.TestReport(
        "tests/x.py::t",
        ("tests/x.py", 3, "t"),
        {},
        "skipped",
        list(longrepr) if as_list else longrepr,
        "setup",
    )


def test_reference_and_other_skips_get_a_section_each() -> None:
    chromium = "needs Debian's chromium at /usr/bin/chromium"
    reports = [_skipped(SKIP_REASON), _skipped(SKIP_REASON, as_list=True)]
    reports += [_skipped(chromium), _skipped(chromium, as_list=True), _skipped("needs the rl extra")]
    sections = dict(skip_summary(reports))
    assert sections["ModeBench 0.4.0 reference data"][0].startswith("2 tests were skipped: ")
    other = sections["Other skipped tests"]
    assert other[0] == "3 more tests were skipped, by reason:"
    assert f"    2  {chromium}" in other
    assert "    1  needs the rl extra" in other


def test_a_run_with_nothing_skipped_adds_no_section() -> None:
    assert skip_summary([]) == []
    only_other = skip_summary([_skipped("needs SIGALRM")])
    assert [title for title, _ in only_other] == ["Other skipped tests"]


def test_a_hanging_test_fails_naming_itself(tmp_path: object, pytestconfig: pytest.Config) -> None:
    """pytest-timeout is on for every run (``timeout`` in pyproject, generous); a test that hangs
    fails with its own name instead of stalling the run (here with a 2 s limit)."""
    import subprocess
    import sys
    from pathlib import Path

    assert int(pytestconfig.getini("timeout")) >= 600  # the project's limit, from pyproject.toml
    test = Path(str(tmp_path)) / "test_hangs.py"
    test.write_text("import time\n\ndef test_stuck():\n    time.sleep(60)\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--timeout", "2", str(test)],
        capture_output=True, text=True, timeout=120, cwd=str(tmp_path),
    )  # fmt: skip
    assert done.returncode == 1
    assert "Timeout" in done.stdout and "test_stuck" in done.stdout
