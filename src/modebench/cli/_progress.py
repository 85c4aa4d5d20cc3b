"""Progress on stderr: a live bar with ETA on a terminal, sparse JSON events otherwise.

How often an event is printed is the CLI's choice; what an event says is not: off a terminal each
line is the library's event (``phase``, ``completed_prompts``, ``total_prompts``) plus
``elapsed_seconds``, unchanged since 0.4.0. The rules (``docs/progress.md``):

* ``--progress-every 0``: nothing.
* ``--progress-every N``: the first event of every phase, then an event whenever the count reaches
  another multiple of N — in every phase (0.4.0 applied N only to grading and printed every
  hundredth validated record regardless).
* no ``--progress-every``: on a terminal a bar; otherwise the first event of every phase, then at
  most one event every ``QUIET_SECONDS`` — a 40,000-prompt run writes a few dozen lines, not 800.

The bar is hand-written (one ``\\r`` line, redrawn at most ``REDRAW_SECONDS`` apart): a progress
library would be a dependency of the core install for forty lines of code.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any, TextIO

__all__ = ["QUIET_SECONDS", "Bar", "EventFilter", "clock", "count_lines", "eta_text", "write_json"]

#: Default spacing of JSON events off a terminal (the first event of each phase is always printed).
QUIET_SECONDS = 10.0
#: Minimum spacing of bar redraws (a phase's first event and the final one are always drawn).
REDRAW_SECONDS = 0.2
BAR_WIDTH = 24


class EventFilter:
    """Which events are printed: every N (explicit) or time-spaced (default), per phase."""

    def __init__(self, every: int | None, count: Callable[[dict[str, Any]], int]) -> None:
        self.every = every
        self.count = count
        self.phase: str | None = None
        self.last_count = 0
        self.last_time = 0.0

    def __call__(self, event: dict[str, Any], now: float) -> bool:
        if self.every == 0:
            return False
        done = self.count(event)
        if event["phase"] != self.phase:
            printed = True
        elif self.every is None:
            printed = now - self.last_time >= QUIET_SECONDS
        else:
            printed = done // self.every > self.last_count // self.every
        if printed:
            self.phase, self.last_count, self.last_time = event["phase"], done, now
        return printed


def clock(seconds: float) -> str:
    """``1:02:03`` / ``4:05``."""
    hours, rest = divmod(int(seconds + 0.5), 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def eta_text(seconds: float | None) -> str:
    """``ETA 4:05``, or ``ETA --:--`` while no rate is known."""
    return "ETA --:--" if seconds is None else f"ETA {clock(seconds)}"


class Bar:
    """One redrawn line per phase: ``phase [####....] done/total unit  rate/s  ETA m:ss  extra``.

    ``total`` may be an estimate (shown as ``~total``); the ETA assumes the phase's rate so far.
    """

    def __init__(self, stream: TextIO, unit: str) -> None:
        self.stream = stream
        self.unit = unit
        self.phase: str | None = None
        self.phase_started = 0.0
        self.phase_first = 0
        self.last_draw = 0.0
        self.width = 0
        self.skipped: str | None = None  # a line not drawn (too soon after the previous one)

    def update(
        self,
        phase: str,
        done: int,
        total: int | None,
        now: float,
        *,
        estimated: bool = False,
        extra: str = "",
        final: bool = False,
    ) -> None:
        if phase != self.phase:
            if self.phase is not None:  # finish the previous phase's line with its latest numbers
                if self.skipped is not None:
                    self._write(self.skipped)
                self.stream.write("\n")
            self.phase, self.phase_started, self.phase_first = phase, now, done
        elif not final and now - self.last_draw < REDRAW_SECONDS:
            self.skipped = self._line(phase, done, total, now, estimated, extra)
            return
        self.last_draw = now
        self._write(self._line(phase, done, total, now, estimated, extra))
        if final:
            self.stream.write("\n")
            self.phase = None
        self.stream.flush()

    def _write(self, line: str) -> None:
        self.stream.write("\r" + line.ljust(self.width))
        self.skipped = None

    def _line(self, phase: str, done: int, total: int | None, now: float, estimated: bool, extra: str) -> str:
        elapsed = now - self.phase_started
        progressed = done - self.phase_first
        rate = progressed / elapsed if elapsed > 0 and progressed > 0 else None
        if total:
            shown = min(done, total)
            filled = int(BAR_WIDTH * shown / total)
            remaining = (total - shown) / rate if rate else (0.0 if shown >= total else None)
            count = f"{done}/{'~' if estimated else ''}{total} {self.unit}"
            line = f"{phase:<10} [{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {count}"
            line += f"  {rate:,.0f}/s" if rate else ""
            line += f"  {eta_text(remaining)}" if shown < total else f"  took {clock(elapsed)}"
        else:
            line = f"{phase:<10} {done} {self.unit}" + (f"  {rate:,.0f}/s" if rate else "")
        line += f"  {extra}" if extra else ""
        self.width = max(self.width, len(line))
        return line


def count_lines(path: str | os.PathLike[str]) -> int | None:
    """Nonblank lines of a file (about the records validation will read), ``None`` if unreadable.

    A byte scan — about 1.5 CPU seconds per GiB (``ops/benchmarks/benchmark_progress.py``), a small fraction
    of validating that GiB — made only for the terminal bar: it gives validation a total and an ETA.
    """
    lines = 0
    carry = b""  # the unfinished last line of the previous chunk
    try:
        with open(path, "rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                pieces = (carry + chunk).split(b"\n")
                carry = pieces.pop()[-4096:]  # enough to know whether it is blank
                lines += sum(1 for piece in pieces if piece.strip())
    except OSError:
        return None
    return lines + bool(carry.strip())


def write_json(stream: TextIO, event: dict[str, Any], elapsed: float) -> None:
    """One contractual event line: the library's event plus ``elapsed_seconds`` (2 decimals)."""
    stream.write(json.dumps({**event, "elapsed_seconds": round(elapsed, 2)}) + "\n")
    stream.flush()
