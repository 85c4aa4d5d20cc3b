"""Matching source prompts to registered prompts: by id, else by the registered prompt's hash.

The index comes from the split's own request records (``prepare_requests``), so the hashes are the
ones ``modebench prepare`` publishes; nothing is re-rendered here. A source prompt matches when

* it is a list of chat messages whose canonical hash equals a request's ``prompt_sha256``; or
* it is a string equal (after stripping) to a request's user message, or to its system and user
  messages joined by a blank line, or a chat-templated string whose last user turn is one of those
  (ChatML ``<|im_start|>user`` and Llama-3 ``<|start_header_id|>user`` templates).

Anything else is unmatched: counted and listed, never guessed.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from typing import Any

from modebench.prompts import messages_sha256

__all__ = ["PromptIndex"]

_USER_TURNS = (
    re.compile(r"<\|im_start\|>user\n(.*?)<\|im_end\|>", re.S),
    re.compile(r"<\|start_header_id\|>user<\|end_header_id\|>\n\n(.*?)<\|eot_id\|>", re.S),
)


def _text_hash(text: str) -> str:
    return hashlib.sha256(text.strip().encode("utf-8")).hexdigest()


class PromptIndex:
    """Prompt ids of one registry split, by id, message hash and text hash."""

    def __init__(self, requests: Iterable[Mapping[str, Any]] = ()) -> None:
        self.ids: set[str] = set()
        self._by_messages: dict[str, str] = {}
        self._by_text: dict[str, str] = {}
        for request in requests:
            ident = str(request["id"])
            self.ids.add(ident)
            self._by_messages[str(request["prompt_sha256"])] = ident
            messages = request["messages"]
            user = messages[-1]["content"]
            system = "\n\n".join(m["content"] for m in messages)
            self._by_text.setdefault(_text_hash(user), ident)
            self._by_text.setdefault(_text_hash(system), ident)

    @property
    def empty(self) -> bool:
        return not self.ids

    def match(self, ident: str | None, prompt: Any) -> str | None:
        """The registered prompt id, or ``None`` when the source prompt matches none."""
        if ident is not None and (self.empty or ident in self.ids):
            return ident
        if isinstance(prompt, list) and all(isinstance(m, Mapping) for m in prompt):
            messages = [{"role": str(m.get("role")), "content": str(m.get("content"))} for m in prompt]
            return self._by_messages.get(messages_sha256(messages))
        if isinstance(prompt, str):
            found = self._by_text.get(_text_hash(prompt))
            if found is not None:
                return found
            for pattern in _USER_TURNS:
                turns = pattern.findall(prompt)
                if turns:
                    return self._by_text.get(_text_hash(turns[-1]))
        return None
