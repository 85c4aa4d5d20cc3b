"""Preflight of input lines on the verifier workers: the parent's per-record work, in parallel.

Validating an input record (strict decoding, Phase A checks, the reference, the prompt binding)
and encoding its prepared record are pure per line, given the run the record is bound with; they
are most of the parent's work in a run. The ``prepare`` request hands a window of raw input lines
to a worker, which runs the very same ``Preflight`` code the parent runs and answers, per line,
either the prepared record's canonical text or ``null``. ``null`` means "do it yourself": the
parent then handles that line in process exactly as before, so every error, its text and its
order are the ones the in-process path gives (the worker only ever accelerates the common case).

What stays in the parent, in input order: the input digest, duplicate prompts, run consistency,
counts, the records digest and the ledger (``modebench.engine.preflight``).

Request: ``{"operation": "prepare", "run": <run or null>, "lines": [[number, text], ...]}``;
reply: one line per input line, ``null`` or ``[level, domain, id, k, start, end]``, a tab, and the
prepared record's canonical text as it is (ASCII JSON: no tab, no newline, so nothing is escaped
or unescaped on either side), where ``prepared_text[start:end]`` is the canonical raw record (the
records digest hashes it). :func:`prepared_reply` reads it back as
``[level, domain, id, k, prepared_text, start, end]``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any, cast

from modebench import domains
from modebench.api_types import EvaluationOptions, RunMetadata
from modebench.diagnostics import MAX_REPLY_BYTES, UNSCORABLE
from modebench.identity import canonical, digest_json, sha256_text
from modebench.intake.preflight import Preflight, prepared_text
from modebench.validation import loads

__all__ = [
    "MAX_LINE_BYTES",
    "MAX_REQUEST_LINES_BYTES",
    "assumed_run_digest",
    "prepare_lines",
    "prepared_reply",
    "request_line",
]

#: Lines longer than this are prepared in the parent (a reply must stay under the reply cap).
MAX_LINE_BYTES = 65_536
#: Raw input bytes per ``prepare`` request.
MAX_REQUEST_LINES_BYTES = 1 << 20
_ENCODE = json.JSONEncoder(allow_nan=False).encode
#: Parsed references by (level, domain, answer), shared by every request this worker serves.
_REFERENCES: dict[tuple[int, str, str], tuple[dict[str, Any], str]] = {}
_DECODE = json.JSONDecoder().decode


class Fatal(Exception):
    """A reference check ended unscorably (timeout, memory, crash): the worker must exit."""


class _Unclaimed:
    """A duplicate set that never finds one: duplicates are the parent's to find, in order."""

    def claim(self, key: object) -> bool:
        return True


def assumed_run_digest(run: dict[str, Any] | None) -> str | None:
    """The run digest a worker's bindings assume (the parent's ``Preflight.run_digest`` must match)."""
    return digest_json(run) if run is not None else None


def request_line(run: dict[str, Any] | None, lines: list[tuple[int, str]]) -> bytes:
    """The ``prepare`` request for ``(line number, line text)`` pairs."""
    return (
        '{"operation": "prepare", "run": ' + _ENCODE(run) + ', "lines": ' + _ENCODE(lines) + "}\n"
    ).encode("ascii")


def prepared_reply(line: bytes) -> list[Any] | None:
    """A ``prepare`` reply line read back (parent side): ``[level, domain, id, k, prepared_text,
    start, end]``, or None; raises ValueError when it is out of shape (the worker is replaced
    and the parent prepares those lines itself)."""
    head, tab, text = line.partition(b"\t")
    if not tab:
        if line.strip() != b"null":
            raise ValueError("invalid prepare reply")
        return None
    header = _DECODE(head.decode("ascii"))
    if not (isinstance(header, list) and len(header) == 6 and text.endswith(b"\n")):
        raise ValueError("invalid prepare reply")
    level, domain, rid, k, start, end = header
    return [level, domain, rid, k, text[:-1].decode("ascii"), start, end]


def _prepare_one(preflight: Preflight, number: int, line: str, max_responses: int) -> bytes | None:
    value = loads(line.encode("utf-8"))  # the parent's decoder, on the line's bytes
    if not isinstance(value, dict) or "run" in value:
        return None  # an inline run changes the parent's run state: the parent binds it
    responses = value.get("responses")
    if isinstance(responses, list) and len(responses) > max_responses:
        return None
    prepared = preflight.accept(value, f"line {number}")
    raw_text = canonical(value)
    bound = preflight.bind(prepared)
    if domains.origin(bound["domain"]) is not None:
        return None  # a third-party domain's lines carry its origin: the parent adds it
    bound["record_sha256"] = sha256_text(raw_text)
    text = prepared_text(bound, raw_text)
    start = text.index('"raw":' + raw_text) + 6  # the key "raw" is unique at the top level
    if text[start : start + len(raw_text)] != raw_text:  # pragma: no cover - defensive
        return None
    header = [
        bound["level"],
        bound["domain"],
        bound["id"],
        len(value["responses"]),
        start,
        start + len(raw_text),
    ]
    return (_ENCODE(header) + "\t" + text + "\n").encode("ascii")


def prepare_lines(
    request: dict[str, Any], check_reference: Callable[[Any, Any, Any], dict[str, Any]], max_responses: int
) -> Iterator[bytes]:
    """Reply lines of a ``prepare`` request (worker side); stops after a fatal reference check.

    ``check_reference(level, domain, answer)`` returns the worker's reply to a reference check.
    """
    run = request.get("run")
    lines = request.get("lines")
    if not isinstance(lines, list) or not (run is None or isinstance(run, dict)):
        return

    def validate(level: int, domain: str, answer: Any) -> dict[str, Any]:
        reply = check_reference(level, domain, answer)
        if reply["status"] == "correct" and isinstance(reply.get("reference"), dict):
            parsed: dict[str, Any] = _DECODE(_ENCODE(reply["reference"]))
            return parsed
        if reply["status"] in UNSCORABLE and reply["status"] != "invalid_reference":
            raise Fatal(reply["status"])
        raise ValueError("reference refused")  # the parent reports it, in process

    # One preflight serves the request: its duplicate set and counts are never read (the
    # parent owns those). Its reference cache is the worker's, kept across requests as the
    # parent's lasts a whole preflight (bounded by the same size: a cache, so memory stays flat).
    preflight = Preflight(
        EvaluationOptions(run=cast(RunMetadata | None, run)), validate=validate, seen=_Unclaimed()
    )
    preflight._references = _REFERENCES

    for entry in lines:
        data: bytes | None = None
        fatal = False
        try:
            number, text = entry
            if isinstance(number, int) and isinstance(text, str):
                data = _prepare_one(preflight, number, text, max_responses)
        except Fatal:
            fatal = True
        except MemoryError:
            fatal = True
        except (Exception, RecursionError):
            data = None  # any refusal: the parent handles this line in process
        if data is None or len(data) > MAX_REPLY_BYTES:
            data = b"null\n"
        yield data
        if fatal:
            raise Fatal("reference check failed unscorably")
