"""A Re:Max-compatible verified bank: token-id exemplars, first-come capacity, a group-per-step schedule.

Re:Max (liv-daliberti/remax) keeps, per prompt, one verified exemplar of every canonical mode it
has found and replays one whole prompt group per optimizer step. :class:`ReMaxBank` follows its
rules (the file and function of Re:Max each rule follows are named), beside
:class:`~modebench.rl.bank.ModeBank`, whose order-independent rule it does not change:

* **Storage.** An exemplar is the completion's **token ids** as the trainer sampled them (TRL's
  ``completion_ids``) and its text. Prompts are keyed by the dataset's prompt id, bound to the
  reference's SHA-256 (Re:Max keys them by the SHA-256 of the prompt's token ids,
  ``core/bank_types.py:_prompt_key``; the reward side of a trainer sees the prompt id, not the
  prompt's token ids, and a prompt id names one registered prompt). The registered prompt (the
  trainer's chat messages) is kept for teacher forcing.
* **Admission** (``core/admission.py:score_and_update``: ``active and reward > 0 and key``). A
  completion is admitted only when it is *active* — it ended inside the generation budget
  (``truncated is False``; None, unknown, is not active) —, verified (status ``correct``), has a
  canonical key and non-empty token ids.
* **Fresh counts.** Every admitted completion counts for its mode, banked or not: the count
  record covers every mode found, also beyond capacity (Re:Max's ``_counts`` ledger).
* **Exemplar at discovery.** Offers arrive one row at a time; the rows offered since the last
  seal are one batch. A mode found for the first time in a batch gets, when the batch is sealed,
  the smallest token tuple among that batch's candidates of the mode (``min(candidates)`` in
  ``score_and_update``); it is never replaced afterwards. A batch is sealed by :meth:`seal` —
  :class:`~modebench.rl.live.RolloutRecorder` calls it after offering each gathered reward call's
  rows, so on the standard path a batch is one generation batch, the same on every rank — and by
  every read of exemplars, the schedule or the state.
* **First-come capacity.** At most ``capacity`` exemplars per prompt; the modes found first keep
  the slots. Several new modes in one batch take the free slots in the order of their keys
  (``for new_key in sorted(new_keys): if len(prompt_exemplars) >= capacity: break``).
* **Freeze.** A frozen bank ignores every offer — membership and counts alike
  (``update_bank=False``); the schedule still reads it.
* **Schedule** (``core/scheduling.py:scheduled_global_replay_groups``): ``groups_per_step``
  whole prompt groups per optimizer step, round-robin over the banked prompts with an integer
  cursor. Prompts are visited in the order they were first banked (Re:Max sorts the prompt keys
  on every call; an append-only order gives the same once-per-cycle visit at a cost per call that
  does not grow with the bank), so each cycle visits every banked prompt once, one group per step.

:meth:`save`/:meth:`load`/:meth:`identity` are the ``RolloutBank`` persistence protocol: one
gzip-compressed JSON file whose token ids are packed as base-64 little-endian ``uint32`` arrays
(see :data:`REMAX_BANK_SCHEMA`), written atomically; :meth:`load` refuses a state saved under
another identity (capacity, groups per step) as Re:Max's ``core/bank_state.py:load_state_dict``
refuses a mismatching replay configuration.
"""

from __future__ import annotations

import base64
import gzip
import json
import operator
import os
import sys
from array import array
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from modebench.rl.protocols import offer_rows

__all__ = ["MAX_STATE_BYTES", "REMAX_BANK_SCHEMA", "ReMaxBank", "ReplayGroup"]

REMAX_BANK_SCHEMA: Final = "modebench-rl-remax-bank-v1"
#: A saved bank whose compressed file or decompressed JSON is larger than this is refused.
MAX_STATE_BYTES: Final = 1 << 31


@dataclass(frozen=True)
class ReplayGroup:
    """One prompt's banked modes, handed to the replay loss: the prompt, then per mode (in key
    order) its key, exemplar token ids, exemplar text and fresh count."""

    prompt_id: str
    prompt: Any
    level: int
    domain: str
    keys: tuple[str, ...]
    completion_ids: tuple[tuple[int, ...], ...]
    texts: tuple[str, ...]
    counts: tuple[int, ...]


class _Prompt:
    __slots__ = ("level", "domain", "answer", "reference_sha256", "prompt", "counts", "exemplars")

    def __init__(self, level: int, domain: str, answer: Any, reference_sha256: str, prompt: Any) -> None:
        self.level = level
        self.domain = domain
        self.answer = answer
        self.reference_sha256 = reference_sha256
        self.prompt = prompt
        self.counts: dict[str, int] = {}  # every mode found -> fresh verified count
        self.exemplars: dict[str, tuple[array[int], str]] = {}  # banked modes -> (token ids, text)


def _token_ids(values: Sequence[int]) -> tuple[int, ...]:
    """The ids as Python ints (numpy or torch integer scalars accepted, as ``operator.index`` does)."""
    ids = []
    for value in values:
        try:
            token = operator.index(value) if not isinstance(value, bool) else -1
        except TypeError:
            token = -1
        if not 0 <= token < 1 << 32:
            raise ValueError(f"completion token ids must be integers in [0, 2**32): got {value!r}")
        ids.append(token)
    return tuple(ids)


def _positive_int(name: str, value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{name} must be a positive integer")
    return value


class ReMaxBank:
    """Re:Max's verified bank and replay schedule (rules in the module docstring)."""

    def __init__(self, capacity: int = 16, *, groups_per_step: int = 1) -> None:
        self.capacity = _positive_int("capacity", capacity)
        self.groups_per_step = _positive_int("groups_per_step", groups_per_step)
        self.frozen = False
        self._prompts: dict[str, _Prompt] = {}
        self._order: list[str] = []  # prompts with an exemplar, in the order they were banked
        self._cursor = 0  # index into _order of the next group served
        # The open batch: per prompt, per newly found mode, the smallest candidate so far.
        self._staged: dict[str, dict[str, tuple[tuple[int, ...], str]]] = {}
        self.offered = 0
        self.admitted = 0  # = fresh observations: every admitted completion counts for its mode
        # Running totals, so that the per-step metrics cost no more than the schedule does.
        self._modes = 0
        self._exemplars = 0
        self._exemplar_tokens = 0

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
        """Offer one graded completion (the ``RolloutBank`` protocol); True when it was admitted
        (its mode's count grew). Rejected: frozen bank, not active (``truncated`` not False),
        not verified, no canonical key, no token ids."""
        if not isinstance(prompt_id, str) or not isinstance(text, str):
            raise TypeError("prompt_id and text must be strings")
        if self.frozen:
            return False
        self.offered += 1
        if (
            truncated is not False
            or status != "correct"
            or not isinstance(canonical_key, str)
            or not canonical_key
            or completion_ids is None
            or len(completion_ids) == 0
        ):
            return False
        ids = _token_ids(completion_ids)
        entry = self._prompts.get(prompt_id)
        if entry is None:
            entry = self._prompts[prompt_id] = _Prompt(level, domain, answer, reference_sha256, prompt)
        elif entry.reference_sha256 != reference_sha256:
            raise ValueError(f"prompt {prompt_id!r} was banked with another reference")
        elif entry.prompt is None and prompt is not None:
            entry.prompt = prompt
        self.admitted += 1
        seen = entry.counts.get(canonical_key, 0)
        self._modes += seen == 0
        entry.counts[canonical_key] = seen + 1
        if canonical_key not in entry.exemplars and len(entry.exemplars) < self.capacity:
            staged = self._staged.setdefault(prompt_id, {})
            best = staged.get(canonical_key)
            if best is None or ids < best[0]:
                staged[canonical_key] = (ids, text)
        return True

    def offer_graded(self, rows: Iterable[Mapping[str, Any]]) -> int:
        """Offer many rows (mappings with :meth:`offer`'s fields); how many were admitted."""
        return offer_rows(self, rows)

    def seal(self) -> int:
        """End the open batch: its newly found modes take their exemplars (first come, in key
        order within the batch, up to capacity). Returns the exemplars banked."""
        banked = 0
        for pid, staged in self._staged.items():
            entry = self._prompts[pid]
            was_empty = not entry.exemplars
            for key in sorted(staged):
                if len(entry.exemplars) >= self.capacity:
                    break
                ids, text = staged[key]
                entry.exemplars[key] = (array("I", ids), text)
                banked += 1
                self._exemplar_tokens += len(ids)
            if was_empty and entry.exemplars:
                self._order.append(pid)
        self._staged = {}
        self._exemplars += banked
        return banked

    def freeze(self) -> None:
        """Stop admitting: later offers change neither membership nor counts."""
        self.seal()
        self.frozen = True

    def thaw(self) -> None:
        """Admit again."""
        self.frozen = False

    # -- reading -----------------------------------------------------------------------------
    def __len__(self) -> int:
        """Banked exemplars over all prompts."""
        self.seal()
        return sum(len(self._prompts[pid].exemplars) for pid in self._order)

    @property
    def prompts(self) -> list[str]:
        """Prompt ids with at least one exemplar, in the order they were banked."""
        self.seal()
        return list(self._order)

    def modes(self, prompt_id: str) -> list[str]:
        """The banked canonical keys of a prompt, sorted (empty when none)."""
        self.seal()
        entry = self._prompts.get(prompt_id)
        return [] if entry is None else sorted(entry.exemplars)

    def counts(self, prompt_id: str) -> dict[str, int]:
        """Fresh verified counts of every mode found for a prompt, banked or not."""
        entry = self._prompts.get(prompt_id)
        return {} if entry is None else dict(entry.counts)

    def group(self, prompt_id: str) -> ReplayGroup | None:
        """One prompt's replay group (None when it has no exemplar)."""
        self.seal()
        entry = self._prompts.get(prompt_id)
        if entry is None or not entry.exemplars:
            return None
        keys = tuple(sorted(entry.exemplars))
        return ReplayGroup(
            prompt_id,
            entry.prompt,
            entry.level,
            entry.domain,
            keys,
            tuple(tuple(entry.exemplars[key][0]) for key in keys),
            tuple(entry.exemplars[key][1] for key in keys),
            tuple(entry.counts[key] for key in keys),
        )

    def replay_groups(self) -> list[ReplayGroup]:
        """The next ``groups_per_step`` prompt groups of the schedule (fewer when fewer prompts
        are banked, each at most once per call); advances the cursor. Its cost is that of the
        groups served: nothing is sorted or scanned over the whole bank."""
        self.seal()
        if not self._order:
            return []
        count = min(self.groups_per_step, len(self._order))
        start = self._cursor % len(self._order)
        chosen = [self._order[(start + i) % len(self._order)] for i in range(count)]
        self._cursor = (start + count) % len(self._order)
        return [group for pid in chosen if (group := self.group(pid)) is not None]

    @property
    def cursor(self) -> int:
        """Index, in the banking order, of the next prompt group the schedule serves."""
        return self._cursor

    def diagnostics(self) -> dict[str, float]:
        """Bank size and support (Re:Max's ``resource_counts`` and support means), for logs; kept
        as running totals, so its cost does not grow with the bank."""
        self.seal()
        banked = len(self._order)
        return {
            "discovered_prompts": float(len(self._prompts)),  # a prompt enters at its first admission
            "discovered_modes": float(self._modes),
            "fresh_observations": float(self.admitted),
            "banked_prompts": float(banked),
            "exemplars": float(self._exemplars),
            "exemplar_tokens": float(self._exemplar_tokens),
            "modes_per_prompt": self._exemplars / banked if banked else 0.0,
            "frozen": float(self.frozen),
            "cursor": float(self._cursor),
        }

    def coverage(self, prompt_ids: Sequence[str]) -> float | None:
        """Share of ``prompt_ids`` with at least one exemplar (None for none)."""
        if not prompt_ids:
            return None
        return sum(1 for pid in prompt_ids if self.modes(pid)) / len(prompt_ids)

    # -- persistence (the RolloutBank protocol) ----------------------------------------------
    def identity(self) -> dict[str, Any]:
        """What a saved state must share with this bank to be resumed into it."""
        return {
            "schema": REMAX_BANK_SCHEMA,
            "capacity": self.capacity,
            "groups_per_step": self.groups_per_step,
        }

    def state(self) -> dict[str, Any]:
        """The whole state as a JSON-able value (token ids packed as base-64 ``uint32``)."""
        self.seal()
        prompts = []
        for pid, entry in self._prompts.items():
            prompts.append(
                {
                    "id": pid,
                    "level": entry.level,
                    "domain": entry.domain,
                    "answer": entry.answer,
                    "reference_sha256": entry.reference_sha256,
                    "prompt": entry.prompt,
                    "counts": dict(entry.counts),  # copies: the state never aliases the live bank
                    "exemplars": [[key, _pack(ids), text] for key, (ids, text) in entry.exemplars.items()],
                }
            )
        return {
            "schema": REMAX_BANK_SCHEMA,
            "identity": self.identity(),
            "frozen": self.frozen,
            "cursor": self._cursor,
            "order": list(self._order),
            "offered": self.offered,
            "admitted": self.admitted,
            "prompts": prompts,
        }

    def save(self, path: Path) -> None:
        """Write the state to ``path`` as one gzip-compressed JSON file, atomically (a temporary
        file beside it, flushed, then ``os.replace``)."""
        target = Path(path)
        temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        try:
            with open(temporary, "wb") as raw:
                # mtime=0 and no file name (GzipFile would store the temporary's, which holds the
                # process id): the same state gives the same bytes in any process.
                with gzip.GzipFile(filename="", fileobj=raw, mode="wb", compresslevel=1, mtime=0) as handle:
                    handle.write(
                        json.dumps(self.state(), ensure_ascii=False, allow_nan=False).encode("utf-8")
                    )
                raw.flush()
                os.fsync(raw.fileno())
            os.replace(temporary, target)
        finally:
            temporary.unlink(missing_ok=True)

    def load(self, path: Path) -> None:
        """Replace this bank's state with the one :meth:`save` wrote at ``path``; refuses a file
        saved under another identity, or one that is not such a state, naming the file."""
        source = Path(path)
        if source.stat().st_size > MAX_STATE_BYTES:
            raise ValueError(f"{source}: larger than {MAX_STATE_BYTES} bytes; not a Re:Max bank state")
        try:
            with gzip.open(source, "rb") as handle:
                data = handle.read(MAX_STATE_BYTES + 1)
            if len(data) > MAX_STATE_BYTES:
                raise ValueError("decompressed state too large")
            state = json.loads(data.decode("utf-8"))
        except (OSError, EOFError, UnicodeDecodeError, ValueError) as exc:
            raise ValueError(f"{source}: not a Re:Max bank state ({exc})") from None
        try:
            self.load_state(state)
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"{source}: {exc}") from None

    def load_state(self, state: Mapping[str, Any]) -> None:
        """Replace this bank's state with ``state`` (from :meth:`state`)."""
        if not isinstance(state, Mapping) or state.get("schema") != REMAX_BANK_SCHEMA:
            raise ValueError(f"not a Re:Max bank state (schema {REMAX_BANK_SCHEMA} expected)")
        if state["identity"] != self.identity():
            raise ValueError(
                f"saved under {json.dumps(state['identity'], sort_keys=True)}, "
                f"this bank is {json.dumps(self.identity(), sort_keys=True)}"
            )
        prompts: dict[str, _Prompt] = {}
        for data in state["prompts"]:
            pid = data["id"]
            entry = _Prompt(
                data["level"], data["domain"], data["answer"], data["reference_sha256"], data["prompt"]
            )
            for key, count in data["counts"].items():
                if isinstance(count, bool) or not isinstance(count, int) or count < 1:
                    raise ValueError(f"prompt {pid!r}, mode {key!r}: bad count")
                entry.counts[key] = count
            for key, packed, text in data["exemplars"]:
                if key not in entry.counts or not isinstance(text, str):
                    raise ValueError(f"prompt {pid!r}, mode {key!r}: exemplar without a count")
                entry.exemplars[key] = (_unpack(packed), text)
            if len(entry.exemplars) > self.capacity:
                raise ValueError(f"prompt {pid!r}: more exemplars than the capacity")
            prompts[pid] = entry
        order = [str(pid) for pid in state["order"]]
        if sorted(order) != sorted(pid for pid, entry in prompts.items() if entry.exemplars):
            raise ValueError("the schedule order does not list the banked prompts")
        cursor = state["cursor"]
        if (
            isinstance(cursor, bool)
            or not isinstance(cursor, int)
            or not 0 <= cursor <= max(len(order) - 1, 0)
        ):
            raise ValueError("bad schedule cursor")
        offered, admitted = int(state["offered"]), int(state["admitted"])
        if admitted != sum(sum(entry.counts.values()) for entry in prompts.values()) or offered < admitted:
            raise ValueError("the offered and admitted counts do not match the mode counts")
        # Every check passed: replace the state as a whole.
        self._prompts = prompts
        self._order = order
        self._cursor = cursor
        self._staged = {}
        self.frozen = bool(state["frozen"])
        self.offered = offered
        self.admitted = admitted
        self._modes = sum(len(entry.counts) for entry in prompts.values())
        self._exemplars = sum(len(entry.exemplars) for entry in prompts.values())
        self._exemplar_tokens = sum(len(ids) for e in prompts.values() for ids, _ in e.exemplars.values())


def _pack(ids: array[int]) -> str:
    packed = ids if sys.byteorder == "little" else array("I", ids)
    if sys.byteorder != "little":
        packed.byteswap()
    return base64.b64encode(packed.tobytes()).decode("ascii")


def _unpack(text: str) -> array[int]:
    raw = base64.b64decode(text.encode("ascii"), validate=True)
    if len(raw) % 4 or not raw:
        raise ValueError("bad packed token ids")
    ids = array("I")
    ids.frombytes(raw)
    if sys.byteorder != "little":
        ids.byteswap()
    return ids
