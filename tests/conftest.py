"""Suite-wide settings and hooks.

- Property tests are judged on correctness, never on wall-clock speed (the hypothesis profile).
- Tests that need the ModeBench 0.4.0 reference data carry the ``reference`` marker (or use the
  ``reference_dir`` fixture, or ``tests.reference_data.require_reference``): without the data they
  skip with one reason, and the end of the run says how many did and where the data goes; every
  other skip (no browser, an extra not installed) is counted there by its reason too.
- ``slow``: tests under :data:`SLOW` (and any test marked ``@pytest.mark.slow``) start servers,
  clusters, browsers or many subprocesses; ``make test-fast`` (``-m "not slow"``) leaves them out.
- pytest-xdist (``make check`` runs ``-n auto --dist loadfile``): every test of a module goes to one
  worker, so a module-scoped set-up (one Ray cluster, one browser, one installed venv) is made
  once; session fixtures are made once per worker.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from fnmatch import fnmatch
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from tests.reference_data import MISSING, REFERENCE, SKIP_REASON, have_reference, require_reference

# CI machines are small and shared; a slow example is not a failure (speed has its own benchmarks).
settings.register_profile("modebench", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("modebench")


#: Paths (or glob patterns) under tests/ whose tests are integration tests (servers, clusters,
#: browsers, many subprocesses, fresh virtual environments) or take tens of seconds each: marked
#: ``slow`` here, so a new test in them is too.
SLOW = (
    "backends/",
    "generate/",
    "hub/",
    "integrations/",
    "render/test_browser.py",
    "project/test_docs_examples.py",
    "domains/test_domain_plugin_install.py",
    "engine/test_hardening.py",
    "engine/test_hardening_two.py",
    "engine/test_kill_resume.py",
    "project/test_readme_commands.py",
    "isolation/test_worker.py",
    "isolation/test_worker_protocol.py",
    # Exhaustive or live checks that take tens of seconds each: domain enumerations checked by
    # brute force, the real lm-eval CLI and large Inspect logs, the reduced kill/malformed
    # campaigns, parallel journal passes, the browser layout pages.
    "domains/*/test_generate.py",
    "ingest/test_real_artifacts.py",
    "ingest/test_inspect_streaming.py",
    "render/test_layout.py",
    "stats/test_parallel_pass.py",
    "engine/test_campaigns.py",
)
_TESTS = Path(__file__).resolve().parent


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    skip = None if have_reference() else pytest.mark.skip(reason=SKIP_REASON)
    for item in items:
        try:
            relative = item.path.resolve().relative_to(_TESTS).as_posix()
        except ValueError:
            relative = ""
        if any(relative.startswith(entry) or fnmatch(relative, entry) for entry in SLOW):
            item.add_marker(pytest.mark.slow)
        if skip is not None and item.get_closest_marker("reference") is not None:
            item.add_marker(skip)


@pytest.fixture
def reference_dir() -> Path:
    """The reference data's directory; the test skips with the one reason when it is absent."""
    return require_reference()


def _reason(report: pytest.TestReport) -> str:
    # A skip's longrepr is (path, line, reason); under pytest-xdist it arrives as a list.
    longrepr = report.longrepr
    if isinstance(longrepr, (tuple, list)) and len(longrepr) == 3:
        reason = str(longrepr[2])
    else:
        reason = str(longrepr)
    return reason.removeprefix("Skipped: ")


def skip_summary(reports: Sequence[pytest.TestReport]) -> list[tuple[str, list[str]]]:
    """The end-of-run sections that say what was skipped and why: (title, lines) pairs.

    Reference-data skips get one section with where the data goes; every other skip reason (a
    missing browser, an extra that is not installed) is counted in a second one, so a newcomer's
    run never checks less than CI's without saying so.
    """
    reasons = [_reason(report) for report in reports]
    sections: list[tuple[str, list[str]]] = []
    missing = sum(MISSING in reason for reason in reasons)
    if missing:
        sections.append(
            (
                "ModeBench 0.4.0 reference data",
                [
                    f"{missing} tests were skipped: {MISSING} at {REFERENCE}.",
                    "They check verdicts, keys, prompts and files against the published 0.4.0 release.",
                    "To run them, put the 0.4.0 reference data (its source release: src/, tests/fixtures/, ...)",
                    "in ../shared/reference/ beside this checkout, or point MODEBENCH_REFERENCE_DIR at it,",
                    "then run `make check` again. CI always has it; never copy it into the repository.",
                ],
            )
        )
    others = Counter(reason for reason in reasons if MISSING not in reason)
    if others:
        lines = [f"{sum(others.values())} more tests were skipped, by reason:"]
        lines += [f"{count:>5}  {reason}" for reason, count in sorted(others.items())]
        lines.append("To run them, install what each reason names (.ci/run shows how CI does it).")
        sections.append(("Other skipped tests", lines))
    return sections


@pytest.hookimpl(trylast=True)
def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    for title, lines in skip_summary(terminalreporter.stats.get("skipped", [])):
        terminalreporter.section(title, sep="-", yellow=True, bold=True)
        for line in lines:
            terminalreporter.write_line(line)
