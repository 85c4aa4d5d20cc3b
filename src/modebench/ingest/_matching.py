"""Matching source prompts to registered prompts: by id, else by an exact rendering of the prompt.

The index comes from the split's own request records (``prepare_requests``), so the messages and
hashes are the ones ``modebench prepare`` publishes. A source prompt matches when

* the source names the prompt id (a field the reader knows, or the one given by ``--id-field``); or
* it is a list of chat messages whose canonical hash equals a request's ``prompt_sha256``; or
* it is a string equal (after stripping surrounding whitespace) to one rendering of a request's
  messages: the user message; system and user joined by a blank line, a newline, or nothing (how
  lm-eval prepends ``--system_instruction`` without a chat template); each shipped chat template
  with and without its special tokens (:mod:`modebench.ingest._templates`); and, with
  ``--tokenizer``, the tokenizer's own template, decoded with and without special tokens.

Every rule is exact. A rendering that two registered prompts share is ambiguous and matches
neither. Anything else is unmatched: counted and listed, never guessed. Each match records its
rule, so the summary says how every prompt was found.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from modebench.ingest._templates import renderings, tokenizer_renderings
from modebench.prompts import messages_sha256

__all__ = ["PromptIndex"]

_AMBIGUOUS = ""


def _text_hash(text: str) -> str:
    return hashlib.sha256(text.strip().encode("utf-8")).hexdigest()


def _plain(messages: list[dict[str, str]]) -> Iterator[tuple[str, str]]:
    user = messages[-1]["content"]
    yield "text:user", user
    system = [m["content"] for m in messages[:-1]]
    if system:
        for name, separator in (
            ("blank-line", "\n\n"),
            ("newline", "\n"),
            ("space", " "),
            ("no-separator", ""),
        ):
            yield f"text:system+user:{name}", separator.join([*system, user])


class PromptIndex:
    """Prompt ids of one registry split, by id, message hash and the hash of each rendering."""

    def __init__(
        self,
        requests: Iterable[Mapping[str, Any]] = (),
        *,
        tokenizer: Any = None,
        tokenizer_name: str = "",
    ) -> None:
        self.ids: set[str] = set()
        self._by_messages: dict[str, str] = {}
        # text hash -> (prompt id, rule); a hash two prompts share maps to _AMBIGUOUS
        self._by_text: dict[str, tuple[str, str]] = {}
        self.rules: list[str] = []
        self.example: dict[str, str] = {}
        self.example_id = ""
        for request in requests:
            ident = str(request["id"])
            self.ids.add(ident)
            self._by_messages[str(request["prompt_sha256"])] = ident
            messages = [{"role": str(m["role"]), "content": str(m["content"])} for m in request["messages"]]
            texts = [*_plain(messages), *renderings(messages)]
            if tokenizer is not None:
                texts.extend(tokenizer_renderings(tokenizer, tokenizer_name, messages))
            # renderings that coincide (Qwen2/2.5/3 with a system message) are one rule: "a | b"
            alike: dict[str, tuple[str, list[str]]] = {}
            for rule, text in texts:
                alike.setdefault(_text_hash(text), (text, []))[1].append(rule)
            for key, (text, names) in alike.items():
                rule = " | ".join(names)
                if not self.example_id:
                    self.rules.append(rule)
                    self.example[rule] = text
                found = self._by_text.get(key)
                if found is None:
                    self._by_text[key] = (ident, rule)
                elif found[0] != ident:
                    self._by_text[key] = (_AMBIGUOUS, rule)
            self.example_id = self.example_id or ident

    @property
    def empty(self) -> bool:
        return not self.ids

    def match(self, ident: str | None, prompt: Any, *, id_rule: str = "id") -> tuple[str, str] | None:
        """``(registered prompt id, rule)``, or ``None`` when the source prompt matches none."""
        if ident is not None and (self.empty or ident in self.ids):
            return ident, id_rule
        if isinstance(prompt, list) and all(isinstance(m, Mapping) for m in prompt):
            messages = [{"role": str(m.get("role")), "content": str(m.get("content"))} for m in prompt]
            found = self._by_messages.get(messages_sha256(messages))
            return (found, "messages:prompt_sha256") if found is not None else None
        if isinstance(prompt, str):
            hit = self._by_text.get(_text_hash(prompt))
            if hit is not None and hit[0] != _AMBIGUOUS:
                return hit
        return None

    def tried(self, limit: int = 120) -> str:
        """The rules tried, each with its rendering of the split's first prompt (for error messages)."""
        if self.empty:
            return "no registered prompts (give --registry/--config, or --id-field)"
        parts = [f"renderings of each registered prompt, e.g. {self.example_id}:"]
        for rule in self.rules:
            text = self.example[rule]
            shown = text if len(text) <= limit else text[:limit] + "…"
            parts.append(f"{rule} {shown!r}")
        return "; ".join(parts)
