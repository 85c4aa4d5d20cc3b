"""A journal line decoded by ``msgspec`` when that provably gives the strict decoder's value.

Decoding a 2 KB journal line with the standard library builds some 150 Python objects and costs
about 60 µs, most of a statistics pass over a 100k-prompt receipt. With ``msgspec`` (the optional
``stats`` extra), a line of the journal's own shape is decoded into typed records instead, and
the result is accepted only when it is *provably* what :func:`modebench.validation.loads` returns:

* the line is ASCII (the journal writer escapes everything else), so no invalid UTF-8 can hide
  in a part ``msgspec`` only skips;
* re-encoding the records gives the line byte for byte. The records hold each field once, in
  sorted order, compactly, with ``msgspec``'s escapes and shortest float texts, so equality rules
  out duplicate keys, whitespace, unknown or missing fields, and any number or string whose text
  is not the one canonical spelling of its value; both decoders follow RFC 8259 (correctly
  rounded floats), so equal canonical text means equal values;
* parts kept as raw JSON (the prompt profile, graded texts, details, outputs, plug-in extras are
  not admitted) are strings, ``null``, or are checked by the strict decoder themselves (the
  profile once per distinct text), which refuses duplicate keys, NaN and overflowing numbers
  inside them.

Any other line (``msgspec`` absent, another shape, an unusual spelling, an invalid line) returns
``None`` and goes through the standard decoders, so values and error messages never depend on
whether the extra is installed. The value has ``prompt_profile`` replaced by ``None``: this is
the ``light`` reading of :mod:`modebench.stats.journal`, for callers that never read it.
"""

from __future__ import annotations

from typing import Any, TypedDict

from modebench.validation import InputError, loads

__all__ = ["AVAILABLE", "PROFILES", "decode_fast", "valid_profile"]

try:
    import msgspec
except ImportError:  # the optional ``stats`` extra
    msgspec = None  # type: ignore[assignment]

AVAILABLE = msgspec is not None
PROFILES_MAX = 1024
#: Prompt profile text → whether the strict decoder accepts it (each cell's profile repeats on
#: every line; the light readings of both decoders share it).
PROFILES: dict[bytes, bool] = {}


def valid_profile(raw: bytes) -> bool:
    """Whether the strict decoder accepts ``raw`` (a prompt profile's text), remembered."""
    valid = PROFILES.get(raw)
    if valid is None:
        try:
            loads(raw)
            valid = True
        except InputError:
            valid = False
        if len(PROFILES) >= PROFILES_MAX:
            PROFILES.clear()
        PROFILES[raw] = valid
    return valid


if msgspec is not None:
    # Attempts are decoded straight into the dicts the callers read: keys the types do not name
    # are dropped by the decoder, so such a line re-encodes shorter and is not admitted.
    class _Contract(TypedDict):
        canonical_key: str | None
        detail: str | None
        graded_text: str
        status: str
        verified: bool

    class _Attempt(_Contract, total=False):
        outputs: list[int]  # python_factors (bounded nesting, unlike Any)
        unscorable_status: str  # a run scored with --unscorable count-as-incorrect

    class _Group(TypedDict):
        attempts: list[_Attempt]

    # Fields in sorted order, as the journal writer sorts keys (re-encoding must give the line).
    class _Result(msgspec.Struct, forbid_unknown_fields=True):
        accuracy: float | None
        distinct_at_k: int | None
        draws: list[_Group]
        id: str
        pass_at_k: float | None
        prompt_profile: msgspec.Raw
        prompt_sha256: str | None
        reference_sha256: str

    class _Line(msgspec.Struct, forbid_unknown_fields=True):
        domain: str
        k: int
        level: int
        record_sha256: str
        result: _Result
        schema: str
        sequence: int

    _DECODER = msgspec.json.Decoder(_Line)
    _ENCODER = msgspec.json.Encoder()
    _FAILED = (msgspec.DecodeError, msgspec.ValidationError, RecursionError)


def decode_fast(line: bytes) -> dict[str, Any] | None:
    """The line's strict value with ``prompt_profile`` as ``None``, or None when not provable."""
    if msgspec is None or not line.isascii():
        return None
    body = line[:-1] if line[-1:] == b"\n" else line
    try:
        record = _DECODER.decode(body)
    except _FAILED:
        return None
    if _ENCODER.encode(record) != body:
        return None
    result = record.result
    profile = bytes(result.prompt_profile)
    if profile != b"null" and not valid_profile(profile):
        return None
    return {
        "domain": record.domain,
        "k": record.k,
        "level": record.level,
        "record_sha256": record.record_sha256,
        "result": {
            "accuracy": result.accuracy,
            "distinct_at_k": result.distinct_at_k,
            "draws": result.draws,
            "id": result.id,
            "pass_at_k": result.pass_at_k,
            "prompt_profile": None,
            "prompt_sha256": result.prompt_sha256,
            "reference_sha256": result.reference_sha256,
        },
        "schema": record.schema,
        "sequence": record.sequence,
    }
