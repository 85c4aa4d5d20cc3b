"""The input side's record schema and preflight phases A–C (validation strictly before grading).

Every record is accepted (Phase A, including reference validation through the isolated worker),
whole-input rules are checked (Phase B), prompts are bound to their registered hashes (Phase C),
and only then is any response graded. The workers' preflight of input lines
(:mod:`modebench.isolation.prepare`) uses the same :class:`Preflight`, so this module imports
nothing of the engine.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, TypedDict, cast

from modebench import domains
from modebench.api_types import EvaluationOptions
from modebench.contracts import normalize_level
from modebench.diagnostics import VerifierExecutionError
from modebench.identity import canonical, digest_json
from modebench.intake.ids import PromptIds
from modebench.isolation import client as verifier
from modebench.prompts import make_messages, messages_sha256, profile_metadata
from modebench.run_metadata import validate_run
from modebench.validation import InputError, json_value, with_hint

__all__ = [
    "RECORD_FIELDS",
    "BoundRecord",
    "Preflight",
    "PreparedRecord",
    "ReferenceValidator",
    "now_iso",
    "prepared_text",
    "record_label",
]

RECORD_FIELDS = (
    "id",
    "level",
    "domain",
    "answer",
    "responses",
    "problem",
    "run",
    "messages",
    "prompt_sha256",
    "dataset_sha256",
)
#: Distinct references whose parsed form a preflight keeps (a cache: an input of more distinct
#: references validates the rest one by one); bounded so the parent's memory stays flat.
REFERENCE_CACHE = 4096


class PreparedRecord(TypedDict):
    """A validated input record (Phase A): where it came from, what it grades against."""

    label: str  # ``line N, prompt 'id'``: the prefix of every message about this record
    raw: dict[str, Any]  # the record as read
    id: str
    level: int
    domain: str
    row: dict[str, Any]  # ``answer`` (decoded reference) and, when given, ``problem``
    reference_sha256: str


class Binding(TypedDict):
    """What a result is bound to: the reference, the registered prompt and its profile."""

    reference_sha256: str
    prompt_sha256: str | None
    prompt_profile: dict[str, Any] | None


class _Bound(TypedDict):
    label: str
    raw: dict[str, Any]
    id: str
    level: int
    domain: str
    row: dict[str, Any]
    binding: Binding


class BoundRecord(_Bound, total=False):
    """A prepared record with its binding (Phase C); the file evaluator adds ``record_sha256``
    and, for a third-party domain, ``plugin`` (its origin, repeated in every journal line)."""

    record_sha256: str
    plugin: dict[str, str]


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat()


def record_label(location: str, record: Any) -> str:
    if not isinstance(record, dict):
        return location
    ident = str(record["id"])[:100] if "id" in record else "?"
    return f"{location}, prompt {ident!r}"


ReferenceValidator = Callable[[int, str, Any], dict[str, Any]]


def _default_validator(level: int, domain: str, answer: Any) -> dict[str, Any]:
    return verifier.reference_check(level, domain, answer)


@dataclass
class Preflight:
    """Phases A–C over a stream of records; keeps only what later phases need."""

    #: The run's options, checked (``modebench.engine.spec.check_options``: ``run`` validated).
    options: EvaluationOptions
    frozen: Any = None  # modebench.data.FrozenSplit in frozen mode
    validate: ReferenceValidator = _default_validator
    seen: Any = field(default_factory=set)  # supports `in` and `.add`; SQLite-backed in file mode
    run: dict[str, Any] | None = None
    run_digest: str | None = None
    declared: int = 0
    undeclared: int = 0
    count: int = 0
    draws: int | None = None
    supplied_ids: set[str] = field(default_factory=set)
    #: The id list the options name (``options.ids``), read: grade only these records.
    prompt_ids: PromptIds | None = None
    _references: dict[tuple[int, str, str], tuple[dict[str, Any], str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.options.run is not None:
            self.run = cast(dict[str, Any], self.options.run)  # validated by check_options
            self.run_digest = digest_json(self.run)

    # -- Phase A -------------------------------------------------------------------------------
    def accept(self, record: Any, location: str, *, in_memory: bool = False) -> PreparedRecord:
        """Validate one record; return the prepared record (without binding)."""
        label = record_label(location, record)
        if not isinstance(record, dict):
            raise InputError(f"{location}: each record must be an object")
        try:
            return self._accept(record, label, in_memory)
        except VerifierExecutionError:
            raise
        except InputError as exc:
            raise with_hint(InputError(f"{label}: {exc}"), exc.hint) from None
        except (ValueError, TypeError, KeyError) as exc:
            raise with_hint(InputError(f"{label}: {exc}"), getattr(exc, "hint", None)) from None

    def _accept(self, record: dict[str, Any], label: str, in_memory: bool) -> PreparedRecord:
        if in_memory:
            json_value(record, "record")
        unknown = sorted(set(record) - set(RECORD_FIELDS))
        if unknown:
            raise InputError(f"unknown fields: {', '.join(unknown)}; put generation metadata in run")
        for name in ("id", "responses"):
            if name not in record:
                raise InputError(f"missing field: {name}")
        ident = record["id"]
        if isinstance(ident, bool) or not isinstance(ident, (str, int)) or not str(ident).strip():
            raise InputError("id must be a nonempty string or integer")
        responses = record["responses"]
        if not isinstance(responses, list) or not responses or not all(isinstance(r, str) for r in responses):
            raise InputError("responses must be a nonempty list of strings (retain failed draws)")
        rid = str(ident)
        if self.frozen is not None:
            level, domain, row = self.frozen.accept(record, rid, self)
        else:
            for name in ("level", "domain", "answer"):
                if name not in record:
                    raise InputError(f"missing field: {name}")
            level, domain = normalize_level(record["level"]), domains.canonical(record["domain"])
            if "dataset_sha256" in record:
                raise InputError("dataset_sha256 requires frozen evaluation with config")
            row = {"answer": record["answer"]}
            if "problem" in record:
                row["problem"] = record["problem"]
        parsed, reference_sha = self._reference(level, domain, row["answer"], label)
        row["answer"] = parsed
        if "problem" in record and (not isinstance(record["problem"], str) or not record["problem"].strip()):
            raise InputError("problem must be a nonempty string")
        key = (level, domain, rid)
        claim = getattr(self.seen, "claim", None)  # one round trip for an on-disk set
        if not claim(key) if claim is not None else key in self.seen:
            raise InputError(f"duplicate prompt: {key!r}")
        if claim is None:
            self.seen.add(key)
        self._inline_run(record)
        self.count += 1
        return {
            "label": label,
            "raw": record,
            "id": rid,
            "level": level,
            "domain": domain,
            "row": row,
            "reference_sha256": reference_sha,
        }

    def accept_prepared(self, key: tuple[int, str, str]) -> bool:
        """Count a record a worker prepared (``modebench.isolation.prepare``) as :meth:`accept`
        counts one without inline run; False (nothing counted) if ``key`` was already seen."""
        if not self.seen.claim(key):
            return False
        self.count += 1
        self.undeclared += 1
        return True

    def _reference(self, level: int, domain: str, answer: Any, label: str) -> tuple[dict[str, Any], str]:
        # Each distinct reference is validated (one worker round trip) and digested once.
        cache_key = (level, domain, answer if isinstance(answer, str) else digest_json(answer))
        hit = self._references.get(cache_key)
        if hit is not None:
            return hit
        try:
            parsed = self.validate(level, domain, answer)
        except VerifierExecutionError as exc:
            diagnostic = dict(exc.diagnostic)
            diagnostic["detail"] = f"{label}: verifier {diagnostic.get('status')}: {diagnostic.get('detail')}"
            raise VerifierExecutionError(diagnostic) from None
        entry = (parsed, digest_json(parsed))
        if len(self._references) < REFERENCE_CACHE:
            self._references[cache_key] = entry
        return entry

    def _inline_run(self, record: dict[str, Any]) -> None:
        if "run" not in record:
            self.undeclared += 1
            return
        self.declared += 1
        inline = validate_run(record["run"])
        digest = digest_json(inline)
        if self.run is None:
            self.run, self.run_digest = inline, digest
        elif digest != self.run_digest:
            raise InputError("mixed model or generation conditions: run metadata differ")

    # -- Phase B -------------------------------------------------------------------------------
    def finish(self) -> None:
        if self.count == 0:
            raise InputError("no prompt records")
        if self.options.run is None and self.declared and self.undeclared:
            raise InputError(
                "mixed declared/undeclared conditions: supply run metadata for the entire evaluation"
            )
        if self.frozen is not None:
            self.frozen.finish(self)

    # -- Phase C -------------------------------------------------------------------------------
    def bind(self, prepared: PreparedRecord) -> BoundRecord:
        """Attach ``binding`` (reference/prompt hashes, prompt profile) to a prepared record."""
        try:
            return self._bind(prepared)
        except (ValueError, TypeError, KeyError) as exc:
            raise InputError(f"{prepared['label']}: {exc}") from None

    def _bind(self, prepared: PreparedRecord) -> BoundRecord:
        raw, row = prepared["raw"], prepared["row"]
        run = self.run
        if run is not None:
            wanted = run["generation"].get("draws_per_prompt")
            if wanted is not None and len(raw["responses"]) != wanted:
                # 0.4.0's text, then both numbers (the contract's text stays a prefix).
                raise InputError(
                    "responses count does not match run.generation.draws_per_prompt"
                    f" (expected {wanted}, found {len(raw['responses'])})"
                )
        messages = prompt_hash = profile = None
        if run is not None:
            condition = run["prompt_condition"]
            profile = _profile(prepared["level"], prepared["domain"], condition)
            if "problem" in row:
                messages, prompt_hash = _prompt(prepared["level"], prepared["domain"], row, condition)
        for name, expected in (("prompt_sha256", prompt_hash), ("messages", messages)):
            if name in raw:
                if expected is None:
                    raise InputError(f"{name} requires problem text and declared run.prompt_condition")
                if raw[name] != expected:
                    raise InputError(f"{name} does not match the registered prompt")
        return {
            "label": prepared["label"],
            "raw": raw,
            "id": prepared["id"],
            "level": prepared["level"],
            "domain": prepared["domain"],
            "row": row,
            "binding": {
                "reference_sha256": prepared["reference_sha256"],
                "prompt_sha256": prompt_hash,
                "prompt_profile": profile,
            },
        }

    def run_block(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "generation_metadata_status": "user_declared" if self.run is not None else "unreported",
            "run_sha256": self.run_digest,
        }

    def dataset_block(self) -> dict[str, Any]:
        if self.frozen is None:
            block: dict[str, Any] = {"kind": "custom", "references_authenticated": False}
        else:
            block = self.frozen.dataset_block(self)
        if self.prompt_ids is not None:  # a selection by id list: the receipt says which
            block["prompt_ids"] = self.prompt_ids.ordered()
        return block


#: Prompt profiles by (level, domain, condition): one shared object each, never mutated, so its
#: canonical text is made once (:func:`_shared_text`). Bounded: a handful of cells in practice.
_PROFILES: dict[tuple[int, str, str], dict[str, Any]] = {}
#: Canonical texts of shared, never-mutated objects (prompt profiles, parsed references from
#: the reference cache) by ``id``; the object is held with its text so the ``id`` stays its own.
_SHARED_TEXTS: dict[int, tuple[Any, str]] = {}
_SHARED_LIMIT = 2 * REFERENCE_CACHE


def _profile(level: int, domain: str, condition: str) -> dict[str, Any]:
    key = (level, domain, condition)
    found = _PROFILES.get(key)
    if found is None:
        found = profile_metadata(level, domain, condition)
        if len(_PROFILES) < REFERENCE_CACHE:
            _PROFILES[key] = found
    return found


#: Rendered prompts and their hashes by (level, domain, condition, problem): RL logs revisit the
#: same problems many times. A pure function of the key; cleared when full.
_PROMPTS: dict[tuple[int, str, str, str], tuple[list[dict[str, str]], str]] = {}


def _prompt(
    level: int, domain: str, row: Mapping[str, Any], condition: str
) -> tuple[list[dict[str, str]], str]:
    """``make_messages`` and their ``messages_sha256`` (the messages are only compared, never changed)."""
    problem = row.get("problem")
    key = (level, domain, condition, problem) if type(problem) is str else None
    found = _PROMPTS.get(key) if key is not None else None
    if found is None:
        messages = make_messages(level, domain, row, condition)
        found = (messages, messages_sha256(messages))
        if key is not None:
            if len(_PROMPTS) >= REFERENCE_CACHE:
                _PROMPTS.clear()
            _PROMPTS[key] = found
    return found


def _shared_text(value: Any) -> str:
    """``canonical(value)`` for an object shared by many records, encoded once."""
    hit = _SHARED_TEXTS.get(id(value))
    if hit is not None and hit[0] is value:
        return hit[1]
    text = canonical(value)
    if len(_SHARED_TEXTS) >= _SHARED_LIMIT:
        _SHARED_TEXTS.clear()
    _SHARED_TEXTS[id(value)] = (value, text)
    return text


def _member_text(key: str, value: Any) -> str:
    """``canonical(value)`` for a member of a prepared record; the binding's prompt profile and
    the row's parsed reference are shared objects (``_profile``, the reference cache), each
    encoded once, not once per record."""
    if key == "binding" and isinstance(value, dict) and "prompt_profile" in value:
        return _object_text(value, "prompt_profile")
    if key == "row" and isinstance(value, dict) and isinstance(value.get("answer"), dict):
        return _object_text(value, "answer")
    return canonical(value)


def _object_text(value: dict[str, Any], shared: str) -> str:
    # json.dumps(sort_keys=True, separators=(",", ":")): members in sorted key order, "key":value.
    if not all(type(key) is str for key in value):
        return canonical(value)
    members = [
        canonical(key) + ":" + (_shared_text(item) if key == shared else canonical(item))
        for key, item in sorted(value.items())
    ]
    return "{" + ",".join(members) + "}"


def prepared_text(prepared: Mapping[str, Any], raw_text: str) -> str:
    """``canonical(prepared)``, splicing in ``raw_text`` (``canonical(prepared["raw"])``, already
    made for the records digest) instead of encoding the record, responses and all, again; the
    shared prompt profile and parsed reference are encoded once per process (``_member_text``)."""
    if "raw" not in prepared or not all(type(key) is str for key in prepared):
        before = {key: value for key, value in prepared.items() if key < "raw"}
        after = {key: value for key, value in prepared.items() if key > "raw"}
        head = canonical(before)[:-1] + ("," if before else "")
        tail = ("," if after else "") + canonical(after)[1:]
        return f'{head}"raw":{raw_text}{tail}'
    members = [
        canonical(key) + ":" + (raw_text if key == "raw" else _member_text(key, value))
        for key, value in sorted(prepared.items())
    ]
    return "{" + ",".join(members) + "}"
