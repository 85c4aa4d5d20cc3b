"""Children that a test interrupts with SIGINT must be able to receive it.

A shell that starts a job in the background without job control (``make check &`` in a script,
``nohup … &``) sets SIGINT to "ignore" for it, and every process below inherits that; Python then
installs no KeyboardInterrupt handler, so a Ctrl-C test would wait for a signal that can never
arrive. Passing :func:`default_sigint` as ``preexec_fn`` gives the child the terminal's default,
as a user's Ctrl-C at a prompt would find it.
"""

from __future__ import annotations

import signal

__all__ = ["default_sigint"]


def default_sigint() -> None:
    """Run in the child between fork and exec: SIGINT back to its default disposition."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
