"""The wire format between the parent and a verifier worker: both ends' encoders and checks.

Single requests (``grade``, ``reference``) and their replies are the JSON objects ModeBench 0.4.0's
workers exchange. The ``groups`` request, which carries many prompts' texts in one line,
and its per-item replies are ours and built for speed:

* request: ``{"operation": "groups", "groups": [{"level", "domain", "answer_json", "texts"}]}``,
  where ``answer_json`` is the answer still encoded, so the worker finds a reference it already
  validated by a dictionary lookup instead of decoding and re-encoding it; item replies are
  buffered by the worker unless the request also says ``"flush": "each"``;
* item reply: ``[status, canonical_key, graded_text, detail]`` plus a fifth element holding any
  extra result members. ``graded_text`` is null when it equals the text as sent, so long
  responses cross the pipe once. The parent rebuilds the full GradeResult, in contract order,
  and validates it exactly as a single reply.

Warm-up: a worker warms (imports SymPy for MathIR, …) only the domains named in its
``MODEBENCH_WARM_DOMAINS`` environment variable before its ``{"ready": true}`` greeting;
``{"operation": "warm", "domains": [...]}`` warms more and is answered by another greeting. Both
happen outside any grading deadline; the parent waits for them under the start-up deadline.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from json.encoder import encode_basestring_ascii
from typing import Any

from modebench.diagnostics import STATUSES

#: Domains a worker warms before its ready greeting (comma-separated canonical names).
WARM_ENV = "MODEBENCH_WARM_DOMAINS"

_CONTRACT = ("status", "verified", "canonical_key", "graded_text", "detail")
_ENCODE = json.JSONEncoder(allow_nan=False).encode  # built once: json.dumps rebuilds it per call
_DECODE = json.JSONDecoder().decode


def groups_request(groups: Sequence[tuple[Any, Any, str, Sequence[Any]]], strict: bool = False) -> bytes:
    """The ``groups`` request line for ``(level, domain, answer_json, texts)`` groups.

    ``strict`` asks the worker to flush every item reply before grading the next (see
    ``verifier_worker._ItemOutput``). Raises TypeError/ValueError when a level, domain or text
    is not finite JSON.
    """
    parts = [
        f'{{"level": {_ENCODE(level)}, "domain": {_ENCODE(domain)}, '
        f'"answer_json": {_ENCODE(answer_json)}, "texts": {_ENCODE(list(texts))}}}'
        for level, domain, answer_json, texts in groups
    ]
    flush = ', "flush": "each"' if strict else ""
    return ('{"operation": "groups"' + flush + ', "groups": [' + ", ".join(parts) + "]}\n").encode("ascii")


def reply_line(reply: dict[str, Any]) -> bytes:
    """A single request's reply, as the reference writes it."""
    return _ENCODE(reply).encode("ascii") + b"\n"


def item_line(reply: dict[str, Any], sent_text: Any) -> bytes:
    """One group item's reply in the compact form (worker side)."""
    shown = reply["graded_text"]
    if sent_text and shown == sent_text:
        shown = None
    if len(reply) > len(_CONTRACT):
        extras = {name: value for name, value in reply.items() if name not in _CONTRACT}
        fields = [reply["status"], reply["canonical_key"], shown, reply["detail"], extras]
        return _ENCODE(fields).encode("ascii") + b"\n"
    # The common case spelled out: the same bytes the encoder would write, a few times faster.
    return (
        f"[{_string(reply['status'])}, {_string(reply['canonical_key'])}, "
        f"{_string(shown)}, {_string(reply['detail'])}]\n"
    ).encode("ascii")


def _string(value: str | None) -> str:
    return "null" if value is None else encode_basestring_ascii(value)


def decode_line(line: bytes) -> Any:
    """Decode one reply line; raises ValueError (or RecursionError) when it is not JSON."""
    return _DECODE(line.decode("utf-8"))


def item_reply(fields: Any, sent_text: Any) -> dict[str, Any]:
    """Rebuild and validate a GradeResult from a compact item reply (parent side).

    A whole-request failure the worker reports before reading any group (an oversized or
    unreadable line) arrives as a single reply object and is taken as it is.
    """
    if isinstance(fields, dict):
        return validate_reply(fields, "groups")
    if not isinstance(fields, list) or len(fields) not in (4, 5):
        raise ValueError("invalid worker item reply")
    status, key, shown, detail = fields[:4]
    if shown is None and isinstance(sent_text, str):
        shown = sent_text
    if not (detail is None or isinstance(detail, str)):
        raise ValueError("invalid worker detail")
    reply = {"status": status, "verified": status == "correct", "canonical_key": key, "graded_text": shown}
    reply["detail"] = detail
    if len(fields) == 5:
        extras = fields[4]
        if not isinstance(extras, dict) or not extras or any(name in _CONTRACT for name in extras):
            raise ValueError("invalid worker extra members")
        reply.update(extras)
    return validate_reply(reply, "groups")


_CONTRACT_KEYS = frozenset(_CONTRACT)


def rebuilt_reply(reply: dict[str, Any], sent_text: Any) -> dict[str, Any]:
    """The reply as the parent rebuilds it from its item line (worker side, for assembly):
    ``item_reply(decode_line(item_line(reply, sent_text)), sent_text)``, with the same checks.

    The common reply (exactly the contract's members; status, graded text, key and detail plain
    ASCII strings or None) skips the JSON round trip, which is the identity on it: ASCII strings
    encode and decode unchanged, the graded text comes back equal to the text sent or to itself,
    and ``verified`` is recomputed from the status either way. Anything else (extra members,
    other types, non-ASCII text, where escapes such as surrogate pairs could change) takes the
    round trip itself, so every reply is rebuilt exactly as the parent would.
    """
    if reply.keys() == _CONTRACT_KEYS:
        status, key, shown, detail = (
            reply["status"],
            reply["canonical_key"],
            reply["graded_text"],
            reply["detail"],
        )
        if (
            type(status) is str
            and type(shown) is str
            and (key is None or type(key) is str)
            and (detail is None or type(detail) is str)
            and status.isascii()
            and shown.isascii()
            and (key is None or key.isascii())
            and (detail is None or detail.isascii())
        ):
            rebuilt = {
                "status": status,
                "verified": status == "correct",
                "canonical_key": key,
                "graded_text": shown,
                "detail": detail,
            }
            return validate_reply(rebuilt, "groups")
    return item_reply(decode_line(item_line(reply, sent_text)), sent_text)


def validate_reply(reply: Any, operation: str) -> dict[str, Any]:
    """The checks ModeBench 0.4.0 applies to a worker reply; raises ValueError."""
    if not isinstance(reply, dict) or reply.get("status") not in STATUSES:
        raise ValueError("invalid worker status")
    status = reply["status"]
    if not isinstance(reply.get("verified"), bool) or reply["verified"] != (status == "correct"):
        raise ValueError("invalid worker verification flag")
    key = reply.get("canonical_key")
    if status == "correct" and operation != "reference":
        if not isinstance(key, str) or not key:
            raise ValueError("missing worker canonical key")
    elif key is not None:
        raise ValueError("unexpected worker canonical key")
    if not isinstance(reply.get("graded_text"), str):
        raise ValueError("invalid worker graded text")
    return reply


__all__ = [
    "decode_line",
    "groups_request",
    "item_line",
    "item_reply",
    "rebuilt_reply",
    "reply_line",
    "validate_reply",
]
