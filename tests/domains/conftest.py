"""Fixtures of the domain tests: the example third-party plug-in (see ``plugin_example``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.domains.plugin_example import EXAMPLE, EXAMPLE_DOMAIN, SITE, forget_plugins


@pytest.fixture
def example_plugin(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Make the example plug-in discoverable for one test; yields its domain name."""
    monkeypatch.syspath_prepend(str(EXAMPLE / "src"))
    monkeypatch.syspath_prepend(str(SITE))
    forget_plugins()
    yield EXAMPLE_DOMAIN
    monkeypatch.undo()
    forget_plugins()
