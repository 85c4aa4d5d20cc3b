"""Per-prompt results assembled on the worker: the ``prompts`` request, both ends.

The parent used to rebuild every item reply, assemble each prompt's result, encode it canonically,
compress it and tally it: most of its work per prompt, serial, while the workers held the attempts.
A ``prompts`` request hands the worker the stored prepared records themselves (canonical JSON,
spliced into the request as they are, so the parent neither decodes nor encodes them); the worker
plans each prompt exactly as the parent did (``Plan``: the caller-side caps, identical responses
graded once), grades its texts with the very ``groups`` machinery (same deadlines, caches and item
reply lines, so a failure is located and reported exactly as before), rebuilds each reply as the
parent would (``protocol.rebuilt_reply``: ``item_reply`` on its compact line) and then sends one more line per prompt:

* ``A<header>\\t<journal line>``: the header is ``[packed, level, domain, k, status_counts,
  counted, accuracy, pass_at_k, distinct_at_k, pcmd]`` (``packed``: base64 of the result text as the
  ledger stores it, :mod:`modebench.isolation.packing`); the journal line is the one ``receipt.writer.journal_line``
  writes, so the parent only links it into the digest chain, stores it and tallies the header;
* ``N``: "assemble this one yourself" (a reply the parent's checks refuse, a result over the
  reply cap); the parent decodes the prompt's item lines and assembles it as before.

Anything else (a worker that dies, times out or answers out of shape) leaves the rest of the
request to the parent's ``groups`` path from the first unfinished item on, so every status,
detail and restart is the one the ``groups`` request gives. What stays in the parent, in input
order: the chain link, the ledger row, the journal line and the cell tally.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import Any, NamedTuple

from modebench.diagnostics import MAX_REPLY_BYTES, result
from modebench.domains._pipeline import encode_answer, parent_precheck, request_overhead, text_precheck
from modebench.identity import canonical
from modebench.isolation.packing import pack_text
from modebench.isolation.protocol import item_line, rebuilt_reply

__all__ = ["Assembled", "Plan", "assembled_reply", "parse_assembled", "prompts_request", "worker_prompts"]

_ENCODE = json.JSONEncoder(allow_nan=False).encode
_DECODE = json.JSONDecoder().decode


#: The worker's ``encode_answer`` of stored prompts' parsed references, by (level, domain,
#: reference_sha256): RL logs grade the same problem prompt after prompt, and a stored record's
#: ``reference_sha256`` is the digest of the canonical text of its very ``row["answer"]`` (the
#: record was decoded from that text, so equal digests decode to equal objects, which encode
#: alike). Cleared when full.
_ANSWERS: dict[tuple[Any, Any, str], str] = {}
_ANSWERS_LIMIT = 4096


def _answer_json(prepared: dict[str, Any], shared: bool) -> str:
    answer = prepared["row"]["answer"]
    binding = prepared.get("binding")
    digest = binding.get("reference_sha256") if shared and isinstance(binding, dict) else None
    if type(digest) is not str:
        return encode_answer(answer)
    key = (prepared["level"], prepared["domain"], digest)
    found = _ANSWERS.get(key)
    if found is None:
        found = encode_answer(answer)
        if len(_ANSWERS) >= _ANSWERS_LIMIT:
            _ANSWERS.clear()
        _ANSWERS[key] = found
    return found


class Plan:
    """One prompt on its way to a worker: caller-side verdicts, and distinct texts still to grade.

    ``stored``: ``prepared`` was decoded from a stored prepared record's canonical text (the
    ``prompts`` request), so its reference's encoding may be shared with earlier prompts.
    """

    __slots__ = ("attempts", "pending", "answer_json")

    def __init__(self, prepared: dict[str, Any], stored: bool = False) -> None:
        level, domain, row = prepared["level"], prepared["domain"], prepared["row"]
        texts: list[str] = prepared["raw"]["responses"]
        self.attempts: list[dict[str, Any] | None] = [None] * len(texts)
        self.pending: dict[str, list[int]] = {}
        self.answer_json = ""
        try:
            # Encoded once: it sizes every request of this prompt and travels in them as is.
            self.answer_json = _answer_json(prepared, stored)
            overhead = request_overhead(level, domain, None, self.answer_json)
        except (TypeError, ValueError, RecursionError):
            self.attempts = [parent_precheck(level, domain, row, text) for text in texts]
            return
        for index, text in enumerate(texts):
            early = self.attempts[index] = text_precheck(overhead, text)
            if early is None:
                self.pending.setdefault(text, []).append(index)  # identical responses are graded once

    def finish(self, texts: list[str], replies: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The prompt's attempts in response order, given the replies to ``texts`` (its pending
        texts in order); repeats get their own copies."""
        attempts = self.attempts
        for text, reply in zip(texts, replies):
            first, *repeats = self.pending[text]
            attempts[first] = reply
            for index in repeats:
                attempts[index] = dict(reply)  # each attempt owns its record
        return [attempt for attempt in attempts if attempt is not None]


class Assembled(NamedTuple):
    """A prompt's result as the worker assembled it: what the parent's serial steps need."""

    line: str  # the journal line
    packed: bytes  # the result text as the ledger stores it
    cell: tuple[int, str, int]
    status_counts: dict[str, int]
    counted: dict[str, int]
    accuracy: float | None
    pass_at_k: float | None
    distinct_at_k: int | None
    pcmd: float | None


def prompts_request(policy: str, prompts: list[tuple[int, str]]) -> bytes:
    """The ``prompts`` request for ``(seq, prepared_json)`` pairs (canonical JSON, spliced in)."""
    body = ", ".join(f"[{seq}, {text}]" for seq, text in prompts)
    return (
        '{"operation": "prompts", "policy": ' + _ENCODE(policy) + ', "prompts": [' + body + "]}\n"
    ).encode("ascii")


def parse_assembled(line: bytes) -> Assembled:
    """Decode an ``A`` line (parent side); raises ValueError when it is out of shape."""
    header_bytes, separator, journal = line[1:].partition(b"\t")
    header = _DECODE(header_bytes.decode("ascii"))
    if not separator or not journal.endswith(b"\n") or not isinstance(header, list) or len(header) != 10:
        raise ValueError("invalid assembled result")
    packed, level, domain, k, counts, counted, accuracy, passed, distinct, pcmd = header
    if not (
        isinstance(packed, str)
        and isinstance(level, int)
        and isinstance(domain, str)
        and isinstance(k, int)
        and isinstance(counts, dict)
        and isinstance(counted, dict)
        and (distinct is None or isinstance(distinct, int))
    ):
        raise ValueError("invalid assembled result")
    return Assembled(
        journal.decode("ascii"),
        base64.b64decode(packed, validate=True),
        (level, domain, k),
        counts,
        counted,
        accuracy,
        passed,
        distinct,
        pcmd,
    )


# -- worker side -----------------------------------------------------------------------------------
#: The worker's ``groups`` step for one prompt (``worker_main._grade_group``): grades a group's
#: texts, sending one item line each; False once a fatal reply was sent.
GradeGroup = Callable[[Any, list[dict[str, Any]], Any], bool]


def worker_prompts(request: dict[str, Any], grade_group: GradeGroup, output: Any) -> list[dict[str, Any]]:
    """Serve a ``prompts`` request (worker side); the item replies, the last one fatal if grading
    must stop (the worker then exits, as after a ``groups`` request)."""
    policy, prompts = request.get("policy"), request.get("prompts")
    if not isinstance(policy, str) or not isinstance(prompts, list):
        reply = result("worker_failure", detail="invalid worker request")
        output.send(item_line(reply, None), last=True)
        return [reply]
    everything: list[dict[str, Any]] = []
    for entry in prompts:
        try:
            seq, prepared = entry
            plan = Plan(prepared, stored=True)
            texts = list(plan.pending)
        except Exception:  # not a prepared record: the parent's own planning reports it
            output.send(b"N\n")
            continue
        replies: list[dict[str, Any]] = []
        if texts:
            group = {
                "level": prepared["level"],
                "domain": prepared["domain"],
                "answer_json": plan.answer_json,
                "texts": texts,
            }
            if not grade_group(group, replies, output):
                return everything + replies
        everything.extend(replies)
        output.send(assembled_reply(seq, prepared, plan, texts, replies, policy))
    return everything


def assembled_reply(
    seq: int,
    prepared: dict[str, Any],
    plan: Plan,
    texts: list[str],
    replies: list[dict[str, Any]],
    policy: str,
) -> bytes:
    """The ``A`` line of one graded prompt, or ``N`` when the parent must assemble it itself."""
    # Receipt-format code, imported on the first prompts request only (the worker's start-up).
    from modebench.failures.policy import apply  # noqa: PLC0415 - worker start-up
    from modebench.metrics import POOLED, prompt_mode_diversity  # noqa: PLC0415 - worker start-up
    from modebench.receipt.tallies import StatusTally  # noqa: PLC0415 - worker start-up
    from modebench.receipt.writer import journal_line, prompt_result  # noqa: PLC0415 - worker start-up

    try:
        # Each reply exactly as the parent rebuilds it from its item line (and with its checks).
        rebuilt = [rebuilt_reply(reply, text) for text, reply in zip(texts, replies)]
        attempts = apply(policy, plan.finish(texts, rebuilt))
        outcome = prompt_result(prepared, attempts)
        result_json = canonical(outcome)
        line = journal_line(seq, prepared, result_json)
        tally = StatusTally(policy)
        tally.add(outcome)
        accuracy = outcome["accuracy"]
        pcmd = prompt_mode_diversity(outcome["draws"], POOLED) if accuracy is not None else None
        header = [
            base64.b64encode(pack_text(result_json)).decode("ascii"),
            prepared["level"],
            prepared["domain"],
            len(prepared["raw"]["responses"]),
            tally.counts,
            tally.counted,
            accuracy,
            outcome["pass_at_k"],
            outcome["distinct_at_k"],
            pcmd,
        ]
        data = ("A" + _ENCODE(header) + "\t" + line).encode("ascii")
    except Exception:  # the parent's own assembly meets (and reports) the same problem
        return b"N\n"
    return data if len(data) <= MAX_REPLY_BYTES else b"N\n"
