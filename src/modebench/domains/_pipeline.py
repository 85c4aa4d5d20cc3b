"""The one grading front end: order of checks, graded_text rules, signal → status.

``parent_precheck`` holds the steps the reference performs in the calling process before a
worker is contacted; ``grade_local`` holds the worker-side steps. Both are pure and are used by
the worker, by tests and by the in-process benchmark; the public ``grade_response`` adds the
process boundary on top.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from json.encoder import encode_basestring_ascii
from typing import Any

from modebench.bounded_cache import EXPANSION, OVERHEAD, REFERENCE_BUDGET, ByteBoundedCache
from modebench.contracts import LEVELS, normalize_domain, normalize_level
from modebench.diagnostics import (
    MAX_REFERENCE_BYTES,
    MAX_REPLY_BYTES,
    MAX_REQUEST_BYTES,
    MAX_RESPONSE_CHARS,
    result,
)
from modebench.domains import names, origin, plugin
from modebench.domains._protocol import (
    MISSING,
    Correct,
    DomainPlugin,
    Incorrect,
    InvalidReference,
    Malformed,
    Said,
    either,
    field_hint,
)
from modebench.validation import InputError, loads

# len(json.dumps({"operation": "grade", "level": L, "domain": D, "answer": A, "text": T})) minus
# the four encoded values, plus the trailing newline.
_GRADE_ENVELOPE = len('{"operation": "grade", "level": , "domain": , "answer": , "text": }') + 1


class ReferenceProblem(Exception):
    """Reference validation failed; ``detail`` is the full, user-facing message (the contract's
    text) and ``hint`` the field, the value found and the value expected, when known."""

    def __init__(self, detail: str, hint: str | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.hint = hint


def encoded_size(value: Any) -> int:
    """Bytes of ``json.dumps(value, allow_nan=False)`` (ASCII-escaped, so bytes == chars)."""
    # A request's level and domain, sized for every prompt: ``json.dumps`` writes an exact str
    # with ``encode_basestring_ascii`` and an exact int with ``int.__repr__`` (raising the same
    # ValueError past the interpreter's digit limit), so their sizes need no encoder object.
    kind = type(value)
    if kind is str:
        return len(encode_basestring_ascii(value))
    if kind is int:
        return len(int.__repr__(value))
    return len(json.dumps(value, allow_nan=False))


class EncodedAnswer(dict[str, Any]):
    """A copy of a reference answer object that carries its wire encoding (``encode_answer``).

    For callers that send the same validated reference again and again (a trainer sends every
    prompt of a step, step after step): the encoding is made once, here, and ``encode_answer``
    returns it instead of encoding the whole reference for every request. The copy is the
    caller's private object and must not be changed after it is made (nothing checks that).
    """

    __slots__ = ("encoded",)

    def __init__(self, answer: Mapping[str, Any]) -> None:
        super().__init__(answer)
        self.encoded = json.dumps(answer, allow_nan=False)


def encode_answer(answer: Any) -> str:
    """The one wire encoding of a reference answer; raises TypeError/ValueError for non-JSON.

    Finite JSON encodes identically with or without ``allow_nan``, so this string is also the
    worker's reference-cache key for the answer. An ``EncodedAnswer`` gives the encoding it
    carries (the same string: it was made by the same call).
    """
    if type(answer) is EncodedAnswer:
        return answer.encoded
    return json.dumps(answer, allow_nan=False)


def request_overhead(level: Any, domain: Any, answer: Any, answer_json: str | None = None) -> int:
    """Bytes of a grade request apart from its text; raises TypeError/ValueError for non-JSON.

    Pass ``answer_json`` (from ``encode_answer``) when the caller has it, to skip re-encoding.
    """
    answer_size = len(answer_json) if answer_json is not None else encoded_size(answer)
    return _GRADE_ENVELOPE + encoded_size(level) + encoded_size(domain) + answer_size


def text_precheck(overhead: int, text: Any) -> dict[str, Any] | None:
    """The response-side caps of one request with the given overhead; None when it may be sent."""
    if isinstance(text, str):
        if len(text) > MAX_RESPONSE_CHARS:
            return result("resource_limit", detail="response character limit exceeded")
        # No character escapes to more than 12 bytes: only long texts need the exact size.
        if overhead + 12 * len(text) + 2 <= MAX_REQUEST_BYTES:
            return None
    if overhead + encoded_size(text) > MAX_REQUEST_BYTES:
        return result("resource_limit", detail="request byte limit exceeded")
    return None


def parent_precheck(level: Any, domain: Any, row: Any, text: Any) -> dict[str, Any] | None:
    """Caller-side checks of the reference, in order; a result dict ends grading early."""
    if isinstance(text, str) and len(text) > MAX_RESPONSE_CHARS:
        return result("resource_limit", detail="response character limit exceeded")
    if not isinstance(row, Mapping) or "answer" not in row:
        return result("invalid_reference", detail="row requires answer")
    try:
        return text_precheck(request_overhead(level, domain, row["answer"]), text)
    except (TypeError, ValueError, RecursionError):
        return result("invalid_reference", detail="request is not finite JSON")


_UNDECODED = object()  # ``_lookup``: the answer is known only by its encoding


class ReferenceCache:
    """Validated references keyed by (level, domain, encoded answer): each is checked once."""

    def __init__(self, capacity: int = 4096, budget: int = REFERENCE_BUDGET) -> None:
        # Bounded in bytes too (``modebench.bounded_cache``): a parsed reference can be large.
        self._entries: ByteBoundedCache[tuple[int, str, str], tuple[dict[str, Any], Any]] = ByteBoundedCache(
            budget, capacity
        )
        self._last: tuple[Any, int, str, tuple[dict[str, Any], Any]] | None = None

    def get(self, level: int, found: DomainPlugin, answer: Any) -> tuple[dict[str, Any], Any]:
        """Return ``(decoded answer object, parsed reference)`` or raise ReferenceProblem."""
        # A batch grades many texts against the very same decoded answer object: skip re-encoding
        # it. Holding the object keeps its id from being reused while it is remembered.
        last = self._last
        if last is not None and last[0] is answer and last[1] == level and last[2] == found.name:
            return last[3]
        hit = self._lookup(level, found, json.dumps(answer), answer)
        self._last = (answer, level, found.name, hit)
        return hit

    def get_encoded(self, level: int, found: DomainPlugin, encoded: str) -> tuple[dict[str, Any], Any]:
        """``get`` for an answer that arrives still encoded (``encode_answer``): a cache hit
        needs no decoding at all, a miss decodes it exactly as the request line would have."""
        return self._lookup(level, found, encoded, _UNDECODED)

    def _lookup(
        self, level: int, found: DomainPlugin, encoded: str, answer: Any
    ) -> tuple[dict[str, Any], Any]:
        key = (level, found.name, encoded)
        hit = self._entries.get(key)
        if hit is not None:
            return hit
        if answer is _UNDECODED:
            answer = json.loads(encoded)
        hit = _validate(level, found, answer, encoded)
        self._entries.put(key, hit, OVERHEAD + EXPANSION * len(encoded))
        if isinstance(answer, str):
            self._alias(level, found, hit)
        return hit

    def _alias(self, level: int, found: DomainPlugin, hit: tuple[dict[str, Any], Any]) -> None:
        """Keep a reference given as a JSON string under its object's encoding too.

        Preflight checks the record's ``answer`` as written (often a string holding the JSON);
        grading sends the decoded object. ``_validate`` of that object's encoding ``e`` repeats
        exactly what the string's check did: ``json.loads(e)`` is a dict equal to the decoded one
        (same keys in the same order, same values and types: JSON text decoded, encoded and
        decoded again round-trips exactly), the verifier check reads the same field, and the
        domain validates an equal dict. Only the byte limit is measured on ``e`` itself, so a
        larger ``e`` is left to its own check (which then reports it).
        """
        try:
            encoded = json.dumps(hit[0])
        except (TypeError, ValueError, RecursionError):  # pragma: no cover - decoded JSON encodes
            return
        if len(encoded.encode("utf-8")) > MAX_REFERENCE_BYTES:
            return
        key = (level, found.name, encoded)
        if self._entries.get(key) is None:
            self._entries.put(key, hit, OVERHEAD + EXPANSION * len(encoded))


def _validate(level: int, found: DomainPlugin, answer: Any, encoded: str) -> tuple[dict[str, Any], Any]:
    size = len(encoded.encode("utf-8"))
    if size > MAX_REFERENCE_BYTES:
        raise ReferenceProblem(
            "reference byte limit exceeded",
            field_hint("answer", Said(f"{size:,} bytes of JSON"), f"at most {MAX_REFERENCE_BYTES:,} bytes"),
        )
    if isinstance(answer, str):
        try:
            answer = loads(answer)
        except InputError as exc:
            raise ReferenceProblem(
                str(exc),
                field_hint("answer", answer, "an object, or a string holding the JSON encoding of one"),
            ) from None
    if not isinstance(answer, dict):
        raise ReferenceProblem(
            "answer must be an object or a JSON-encoded object",
            field_hint("answer", answer, 'an object with a "verifier" field (or a string holding its JSON)'),
        )
    verifier = answer.get("verifier")
    if not (isinstance(verifier, str) and verifier in found.verifiers):
        raise ReferenceProblem(
            f"answer.verifier {verifier!r} does not match domain {found.name!r}",
            field_hint(
                "answer.verifier",
                answer.get("verifier", MISSING),
                f"{either(found.verifiers)} for domain {either([found.name])}",
            ),
        )
    try:
        parsed = found.validate_reference(level, answer)
    except InvalidReference as exc:
        raise ReferenceProblem(f"invalid {found.name} reference: {exc.detail}", _hint(found, exc)) from None
    return answer, parsed


def _hint(found: DomainPlugin, problem: InvalidReference) -> str:
    """The domain's own hint, else (a plug-in without hints) where its reference format is written down."""
    if problem.hint is not None:
        return problem.hint
    where = f"docs/scoring/{found.name}.md" if origin(found.name) is None else "its plug-in's documentation"
    return f"the {found.name} answer object, every field with a complete example: {where}"


def identity_hint(level: Any, domain: Any) -> str | None:
    """The hint for a task whose level or domain does not normalise (level first, as checked)."""
    try:
        normalize_level(level)
    except ValueError:
        return field_hint("level", level, f'an integer {either(LEVELS)} (or the text "3" or "level3")')
    try:
        normalize_domain(domain)
    except ValueError:
        return field_hint("domain", domain, either(names()))
    return None


#: The process-wide cache of validated references (the worker's, or an in-process caller's).
REFERENCES = ReferenceCache()


def resolve(level: Any, domain: Any) -> tuple[int, DomainPlugin]:
    """Normalise level and domain; raise ReferenceProblem with the normalisation message."""
    try:
        return normalize_level(level), plugin(normalize_domain(domain))
    except ValueError as exc:
        raise ReferenceProblem(str(exc), identity_hint(level, domain)) from None


def check_reference(
    level: Any, domain: Any, answer: Any, cache: ReferenceCache = REFERENCES
) -> dict[str, Any]:
    """Worker-side ``reference`` operation: the decoded answer object, or ReferenceProblem."""
    number, found = resolve(level, domain)
    return cache.get(number, found, answer)[0]


def grade_local(
    level: Any, domain: Any, answer: Any, text: Any, cache: ReferenceCache = REFERENCES
) -> dict[str, Any]:
    """Worker-side grading of one JSON-clean request (no deadline, no reply guard)."""
    try:
        number, found = resolve(level, domain)
        parsed = cache.get(number, found, answer)[1]
    except ReferenceProblem as exc:
        return invalid_reference(exc, text)
    return grade_text(number, found, parsed, text)


def invalid_reference(problem: ReferenceProblem, text: Any) -> dict[str, Any]:
    """The result of any text graded against a reference that failed validation."""
    return result("invalid_reference", text=text if isinstance(text, str) else "", detail=problem.detail)


def grade_text(number: int, found: DomainPlugin, parsed: Any, text: Any) -> dict[str, Any]:
    """Worker-side grading of one text against an already validated reference."""
    if not isinstance(text, str):
        return result("malformed", detail="response text must be a string")
    if len(text) > MAX_RESPONSE_CHARS:
        return result("resource_limit", detail="response character limit exceeded")
    # The three verdicts' results are spelled out as ``diagnostics.result`` builds them (the five
    # contract members in contract order): this runs once per graded text, the function call
    # and keyword packing would be a good part of a short text's cost.
    try:
        verdict: Correct = found.grade(number, parsed, text)
    except Malformed as exc:
        shown = text if exc.graded_text is None else exc.graded_text
        return {
            "status": "malformed",
            "verified": False,
            "canonical_key": None,
            "graded_text": shown,
            "detail": exc.detail,
        }
    except Incorrect as exc:
        shown = text if exc.graded_text is None else exc.graded_text
        return {
            "status": "incorrect",
            "verified": False,
            "canonical_key": None,
            "graded_text": shown,
            "detail": exc.detail,
        }
    shown = text if verdict.graded_text is None else verdict.graded_text
    if verdict.extra:
        return result("correct", key=verdict.key, text=shown, **verdict.extra)
    return {
        "status": "correct",
        "verified": True,
        "canonical_key": verdict.key,
        "graded_text": shown,
        "detail": None,
    }


def reply_guard(reply: dict[str, Any]) -> dict[str, Any]:
    """The reference's 256 KiB reply cap, measured on this reply as if sent alone."""
    # Measured on the reply the reference's worker writes for this result: the same members in
    # the same order, ``json.dumps`` defaults (ASCII escapes, ``", "``/``": "``) and a newline;
    # ``detail`` texts are the reference's own, so their lengths agree too (docs/fidelity.md).
    if len(reply) == 5:
        # Cheap bound first: no character escapes to more than 12 bytes.
        text = reply.get("graded_text") or ""
        key = reply.get("canonical_key") or ""
        if 12 * (len(text) + len(key) + len(reply.get("detail") or "")) + 4096 < MAX_REPLY_BYTES:
            return reply
    if len(json.dumps(reply)) + 1 > MAX_REPLY_BYTES:
        return result("worker_failure", detail="worker reply byte limit exceeded")
    return reply


def grade_in_process(level: Any, domain: Any, row: Any, text: Any) -> dict[str, Any]:
    """The full contract without a process boundary (trusted callers: tests, benchmarks).

    The row is round-tripped through JSON like a worker request, so tuples, non-string keys and
    other JSON coercions behave exactly as they do across the boundary.
    """
    early = parent_precheck(level, domain, row, text)
    if early is not None:
        return early
    level, domain, answer, text = json.loads(json.dumps([level, domain, row["answer"], text]))
    return reply_guard(grade_local(level, domain, answer, text))


__all__ = [
    "REFERENCES",
    "EncodedAnswer",
    "ReferenceCache",
    "ReferenceProblem",
    "check_reference",
    "encode_answer",
    "grade_in_process",
    "grade_local",
    "grade_text",
    "identity_hint",
    "invalid_reference",
    "parent_precheck",
    "reply_guard",
    "request_overhead",
    "text_precheck",
]
