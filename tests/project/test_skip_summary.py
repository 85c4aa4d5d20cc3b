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
