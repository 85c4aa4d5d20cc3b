"""A verified-mode bank: per prompt, one exemplar of every solution mode seen verified.

The "verify, retain, revisit" recipes keep, for each training prompt, verified completions keyed
by their canonical mode key and replay them later. :class:`ModeBank` holds exactly that state and
nothing else (the loss stays in the trainer). Its rules make the state a function of the *set* of
verified completions offered, never of their arrival order or of how they were split into batches:

* **Prompt-local.** Modes are keyed by ``(prompt id, canonical key)``; keys are never pooled
  across prompts. A prompt id is bound to one reference (its SHA-256); offering the same id with
  another reference is an error. The prompt handed back on replay is the first one offered for
  that id (a dataset gives each id one prompt).
* **Verified only.** A completion is admitted only when its verdict is ``correct`` with a
  canonical key; every other status is ignored (an unscorable one is never banked).
* **Exemplar.** The exemplar of a mode is its shortest verified text, ties broken by the
  lexicographic order of code points: the minimum of ``(len(text), text)``, which is the same
  whatever order the texts come in.
* **Capacity.** At most ``capacity`` modes per prompt. When more are offered, the bank keeps the
  modes whose keys have the smallest SHA-256 (a fixed pseudo-random rank of the key alone, so
  no mode is favoured for its spelling and the kept set is the same for any order). A mode
  outside the kept set can never come back, so the count kept for a banked mode is exact.
* **Replay schedule.** Entries are ordered by prompt id, then key rank. :meth:`replay` serves the
  entries after the cursor (the last entry served), wrapping around; the cursor is part of the
  state, so a restored bank continues the same schedule.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from modebench.rl.protocols import offer_rows

__all__ = [
    "BANK_SCHEMA",
    "MAX_STATE_BYTES",
    "ModeBank",
    "ReplayItem",
    "read_json_bounded",
    "write_json_atomic",
]

BANK_SCHEMA: Final = "modebench-rl-bank-v1"


#: A saved bank larger than this is refused unread (bounded reads).
MAX_STATE_BYTES: Final = 1 << 30


def write_json_atomic(path: Path, value: Any) -> None:
    """Write ``value`` as JSON at ``path`` through a temporary file beside it and ``os.replace``,
    flushed to disk first: a reader sees the old file or the new one, never half of one."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(temporary, "w", encoding="utf-8") as handle:
            json.dump(value, handle, ensure_ascii=False, allow_nan=False)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def read_json_bounded(path: Path, limit: int = MAX_STATE_BYTES) -> Any:
    """The JSON value in ``path``; a clear error naming the file when it is too large or not JSON."""
    size = path.stat().st_size
    if size > limit:
        raise ValueError(f"{path}: {size} bytes, larger than the {limit}-byte limit of a saved state")
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: not a JSON state file ({exc})") from None


def key_rank(canonical_key: str) -> str:
    """The bank's fixed rank of a mode: the SHA-256 of its canonical key."""
    return hashlib.sha256(canonical_key.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class ReplayItem:
    """One banked mode handed to the trainer: the prompt, the exemplar text and its mode key."""

    prompt_id: str
    prompt: Any
    text: str
    canonical_key: str
    level: int
    domain: str
    count: int


class _Mode:
    __slots__ = ("text", "count")

    def __init__(self, text: str, count: int) -> None:
        self.text = text
        self.count = count


class _Prompt:
    __slots__ = ("level", "domain", "answer", "reference_sha256", "prompt", "modes")

    def __init__(self, level: int, domain: str, answer: Any, reference_sha256: str, prompt: Any) -> None:
        self.level = level
        self.domain = domain
        self.answer = answer
        self.reference_sha256 = reference_sha256
        self.prompt = prompt
        self.modes: dict[str, _Mode] = {}  # canonical key -> mode


class ModeBank:
    """Verified exemplars per prompt and canonical mode key (rules in the module docstring)."""

    def __init__(self, capacity: int = 16) -> None:
        if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity <= 0:
            raise ValueError("capacity must be a positive integer")
        self.capacity = capacity
        self._prompts: dict[str, _Prompt] = {}
        self._cursor: tuple[str, str] | None = None  # (prompt id, key rank) last served

    # -- admission ---------------------------------------------------------------------------
    def offer(  # noqa: PLR0913 - one graded completion's fields, all keyword-only
        self,
        prompt_id: str,
        *,
        level: int,
        domain: str,
        answer: Any,
        reference_sha256: str,
        text: str,
        status: str,
        canonical_key: str | None,
        prompt: Any = None,
        completion_ids: Sequence[int] | None = None,
        truncated: bool | None = None,
    ) -> bool:
        """Offer one graded completion; True when it changed the bank (a new mode, a better
        exemplar or a higher count). ``completion_ids`` and ``truncated`` are accepted for the
        :class:`~modebench.rl.protocols.RolloutBank` protocol and ignored: this bank keys on the
        verdict and the graded text alone."""
        del completion_ids, truncated
        if status != "correct" or not isinstance(canonical_key, str) or not canonical_key:
            return False
        if not isinstance(prompt_id, str) or not isinstance(text, str):
            raise TypeError("prompt_id and text must be strings")
        entry = self._prompts.get(prompt_id)
        if entry is None:
            entry = self._prompts[prompt_id] = _Prompt(level, domain, answer, reference_sha256, prompt)
        elif entry.reference_sha256 != reference_sha256:
            raise ValueError(f"prompt {prompt_id!r} was banked with another reference")
        elif entry.prompt is None and prompt is not None:
            entry.prompt = prompt
        mode = entry.modes.get(canonical_key)
        if mode is not None:
            mode.count += 1
            if (len(text), text) < (len(mode.text), mode.text):
                mode.text = text
            return True
        if len(entry.modes) >= self.capacity:
            worst = max(entry.modes, key=key_rank)
            if key_rank(canonical_key) >= key_rank(worst):
                return False
            del entry.modes[worst]
        entry.modes[canonical_key] = _Mode(text, 1)
        return True

    def offer_graded(self, rows: Iterable[Mapping[str, Any]]) -> int:
        """Offer many rows (mappings with :meth:`offer`'s fields and ``prompt_id``); how many
        changed the bank."""
        return offer_rows(self, rows)

    # -- reading -----------------------------------------------------------------------------
    def __len__(self) -> int:
        """Banked modes over all prompts."""
        return sum(len(entry.modes) for entry in self._prompts.values())

    @property
    def prompts(self) -> list[str]:
        """Prompt ids with at least one banked mode, sorted."""
        return sorted(pid for pid, entry in self._prompts.items() if entry.modes)

    def modes(self, prompt_id: str) -> list[str]:
        """The banked canonical keys of a prompt, in rank order (empty when none)."""
        entry = self._prompts.get(prompt_id)
        return [] if entry is None else sorted(entry.modes, key=key_rank)

    def exemplars(self, prompt_id: str) -> list[ReplayItem]:
        """Every banked mode of one prompt as replay items, in rank order."""
        entry = self._prompts.get(prompt_id)
        if entry is None:
            return []
        return [self._item(prompt_id, entry, key) for key in sorted(entry.modes, key=key_rank)]

    def _item(self, prompt_id: str, entry: _Prompt, key: str) -> ReplayItem:
        mode = entry.modes[key]
        return ReplayItem(prompt_id, entry.prompt, mode.text, key, entry.level, entry.domain, mode.count)

    def _schedule(self) -> list[tuple[str, str, str]]:
        return sorted(
            (pid, key_rank(key), key) for pid, entry in self._prompts.items() for key in entry.modes
        )

    def replay(self, n: int) -> list[ReplayItem]:
        """The next ``n`` entries of the replay schedule after the cursor, wrapping around (each
        entry at most once per call: fewer than ``n`` when the bank holds fewer); advances the
        cursor to the last entry served."""
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise ValueError("n must be a nonnegative integer")
        schedule = self._schedule()
        if not schedule or n == 0:
            return []
        start = 0
        if self._cursor is not None:
            start = next((i for i, (pid, rank, _) in enumerate(schedule) if (pid, rank) > self._cursor), 0)
        chosen = [schedule[(start + i) % len(schedule)] for i in range(min(n, len(schedule)))]
        self._cursor = (chosen[-1][0], chosen[-1][1])
        return [self._item(pid, self._prompts[pid], key) for pid, _, key in chosen]

    # -- state -------------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """Plain JSON-able state (store it in the trainer checkpoint)."""
        return {
            "schema": BANK_SCHEMA,
            "capacity": self.capacity,
            "cursor": None if self._cursor is None else list(self._cursor),
            "prompts": {
                pid: {
                    "level": entry.level,
                    "domain": entry.domain,
                    "answer": entry.answer,
                    "reference_sha256": entry.reference_sha256,
                    "prompt": entry.prompt,
                    "modes": {
                        key: {"text": mode.text, "count": mode.count}
                        for key, mode in sorted(entry.modes.items())
                    },
                }
                for pid, entry in sorted(self._prompts.items())
            },
        }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Replace this bank's state with ``state`` (from :meth:`state_dict`)."""
        if not isinstance(state, Mapping) or state.get("schema") != BANK_SCHEMA:
            raise ValueError(f"not a mode bank state (schema {BANK_SCHEMA} expected)")
        capacity = state["capacity"]
        cursor = state["cursor"]
        prompts: dict[str, _Prompt] = {}
        for pid, data in state["prompts"].items():
            entry = _Prompt(
                data["level"], data["domain"], data["answer"], data["reference_sha256"], data["prompt"]
            )
            for key, mode in data["modes"].items():
                if (
                    not isinstance(mode["text"], str)
                    or not isinstance(mode["count"], int)
                    or mode["count"] < 1
                ):
                    raise ValueError(f"prompt {pid!r}, mode {key!r}: bad banked mode")
                entry.modes[key] = _Mode(mode["text"], mode["count"])
            if len(entry.modes) > capacity:
                raise ValueError(f"prompt {pid!r}: more modes than the capacity")
            prompts[pid] = entry
        self.capacity = ModeBank(capacity).capacity
        self._prompts = prompts
        self._cursor = None if cursor is None else (str(cursor[0]), str(cursor[1]))

    def seal(self) -> None:
        """End of one gathered batch of offers (the ``RolloutBank`` protocol): nothing to do, the
        state of this bank does not depend on how offers were split into batches."""

    # -- persistence (the RolloutBank protocol) ----------------------------------------------
    def identity(self) -> dict[str, Any]:
        """What a saved state must share with this bank to be resumed into it."""
        return {"schema": BANK_SCHEMA, "capacity": self.capacity}

    def save(self, path: Path) -> None:
        """Write :meth:`state_dict` as JSON at ``path``, atomically (temporary file, then rename)."""
        write_json_atomic(Path(path), self.state_dict())

    def load(self, path: Path) -> None:
        """Restore the state :meth:`save` wrote at ``path`` (its capacity included)."""
        self.load_state_dict(read_json_bounded(Path(path)))

    # -- export ------------------------------------------------------------------------------
    def export_jsonl(self, path: str | os.PathLike[str], *, problems: Mapping[str, str] | None = None) -> int:
        """Write the bank as ``modebench evaluate`` input: one line per prompt, its exemplars as
        ``responses`` in rank order (a new file; never overwritten). Returns the lines written.

        Evaluating it grades every exemplar again: accuracy 1 and distinct@k equal to the banked
        modes, unless the verifier changed."""
        target = Path(path)
        lines = []
        for pid in self.prompts:
            entry = self._prompts[pid]
            record: dict[str, Any] = {
                "id": pid,
                "level": entry.level,
                "domain": entry.domain,
                "answer": entry.answer,
                "responses": [entry.modes[key].text for key in sorted(entry.modes, key=key_rank)],
            }
            if problems is not None and pid in problems:
                record["problem"] = problems[pid]
            lines.append(json.dumps(record, ensure_ascii=False, allow_nan=False) + "\n")
        with open(target, "x", encoding="utf-8") as handle:  # "x": never overwrite
            handle.writelines(lines)
        return len(lines)

    def coverage(self, prompt_ids: Sequence[str]) -> float | None:
        """Share of ``prompt_ids`` with at least one banked mode (None for none)."""
        if not prompt_ids:
            return None
        return sum(1 for pid in prompt_ids if self.modes(pid)) / len(prompt_ids)
