"""Downloads bounded by one overall deadline and a byte cap.

A stalled socket must not block past the deadline: every connection gets the time *remaining*
until one overall deadline, for the connect and for the response headers, and the body loop
re-arms the socket timeout before each read. ``urlopen``, ``MAX_DOWNLOAD_BYTES`` and
``DOWNLOAD_TIMEOUT_SECONDS`` are read from ``modebench.dataset_cache`` at call time, so that
callers (and tests) can replace them there.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from modebench._datasets.settings import public
from modebench.validation import InputError

__all__ = ["CHUNK_BYTES", "DOWNLOAD_TIMEOUT_SECONDS", "MAX_DOWNLOAD_BYTES", "transfer", "urlopen"]

MAX_DOWNLOAD_BYTES = 33_554_432
DOWNLOAD_TIMEOUT_SECONDS = 30
CHUNK_BYTES = 65_536


def urlopen(url: str, timeout: float = DOWNLOAD_TIMEOUT_SECONDS) -> Any:
    """Open ``url`` so that connecting and receiving the headers end within ``timeout`` seconds."""
    # The HTTP stack (http.client, ssl, urllib.request: about 13 ms) loads on the first
    # download, not with every command that imports the dataset modules.
    from modebench._datasets.deadline_http import opener  # noqa: PLC0415 - see above

    return opener(time.monotonic() + timeout).open(url, timeout=timeout)


def _socket_of(response: Any) -> Any:
    # http.client keeps the socket behind a buffered SocketIO; fakes and file:// responses have none.
    import socket  # noqa: PLC0415 - loaded with the first download (see urlopen)

    raw = getattr(getattr(response, "fp", None), "raw", None)
    sock = getattr(raw, "_sock", None)
    return sock if isinstance(sock, socket.socket) else None


def transfer(url: str, sink: Callable[[bytes], None], what: str, hint: str = "") -> None:
    """Stream ``url`` into ``sink`` under the byte cap and one overall deadline."""
    import http.client  # noqa: PLC0415 - loaded with the first download (see urlopen)

    from modebench._datasets.deadline_http import remaining  # noqa: PLC0415 - as http.client

    settings = public()  # the public names, read at call time

    limit = settings.MAX_DOWNLOAD_BYTES
    timeout = settings.DOWNLOAD_TIMEOUT_SECONDS
    deadline = time.monotonic() + timeout
    total = 0
    try:
        with settings.urlopen(url, timeout=timeout) as response:
            declared = getattr(response, "headers", None)
            length = declared.get("Content-Length") if declared is not None else None
            if length is not None and length.isdigit() and int(length) > limit:
                raise InputError(f"{what} exceeds byte limit")
            while True:
                if time.monotonic() >= deadline:
                    raise InputError(f"{what} deadline exceeded")
                sock = _socket_of(response)
                if sock is not None:
                    sock.settimeout(remaining(deadline))
                chunk = response.read1(CHUNK_BYTES)
                if not chunk:
                    break
                total += len(chunk)
                if time.monotonic() >= deadline:
                    raise InputError(f"{what} deadline exceeded")
                if total > limit:
                    raise InputError(f"{what} exceeds byte limit")
                sink(chunk)
            # http.client's read1 ends quietly at a premature EOF; a short body is a failed transfer.
            missing = getattr(response, "length", None)
            if isinstance(missing, int) and missing > 0:
                raise http.client.IncompleteRead(b"", missing)
    except InputError:
        raise
    except (OSError, http.client.HTTPException, ValueError) as exc:
        # A timeout of our own deadline-bounded socket ends at the overall deadline; any other one
        # (a server's, or a replaced ``urlopen``'s) fails the transfer as 0.4.0 said it.
        if isinstance(exc, TimeoutError) and time.monotonic() >= deadline - 0.05:
            raise InputError(f"{what} deadline exceeded") from None
        if time.monotonic() >= deadline:
            raise InputError(f"{what} deadline exceeded") from None
        raise InputError(f"{what} failed: {exc}{hint}") from None
