"""Connections and handlers bounded by one overall deadline (``transfer.urlopen``'s HTTP stack).

Kept apart from ``transfer`` so that http.client, ssl and urllib.request load with the first
download rather than with every command that imports the dataset modules.
"""

from __future__ import annotations

import functools
import http.client
import time
import urllib.request
from typing import Any

__all__ = ["opener", "remaining"]


def remaining(deadline: float) -> float:
    """Seconds left until ``deadline`` (``time.monotonic``), at least a millisecond."""
    return max(deadline - time.monotonic(), 0.001)


class _DeadlineConnection:
    """Connect (TCP, TLS) and wait for headers only as long as the overall deadline allows."""

    timeout: float | None
    sock: Any

    def __init__(self, *args: Any, deadline: float, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline = deadline

    def connect(self) -> None:
        self.timeout = remaining(self._deadline)
        super().connect()  # type: ignore[misc]
        self.sock.settimeout(remaining(self._deadline))


class _DeadlineHTTPConnection(_DeadlineConnection, http.client.HTTPConnection):
    pass


class _DeadlineHTTPSConnection(_DeadlineConnection, http.client.HTTPSConnection):
    pass


class _HTTPHandler(urllib.request.HTTPHandler):
    def __init__(self, deadline: float) -> None:
        super().__init__()
        self._deadline = deadline

    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(functools.partial(_DeadlineHTTPConnection, deadline=self._deadline), req)


class _HTTPSHandler(urllib.request.HTTPSHandler):
    def __init__(self, deadline: float) -> None:
        super().__init__()
        self._deadline = deadline

    def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        connection = functools.partial(_DeadlineHTTPSConnection, deadline=self._deadline)
        return self.do_open(connection, req, context=self._context)  # type: ignore[attr-defined]


def opener(deadline: float) -> urllib.request.OpenerDirector:
    """An opener whose HTTP and HTTPS connections connect and read headers within ``deadline``."""
    return urllib.request.build_opener(_HTTPHandler(deadline), _HTTPSHandler(deadline))
