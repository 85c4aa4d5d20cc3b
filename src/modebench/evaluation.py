"""Record schema, the three preflight phases, grading of prepared records, and v3 results.

Validation is strictly before grading: every record is accepted (Phase A, including reference
validation through the isolated worker), whole-input rules are checked (Phase B), prompts are
bound to their registered hashes (Phase C), and only then is any response graded.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, TypedDict

from modebench import domains, metrics
from modebench.contracts import NOT_ADMITTED_LEVELS, NOT_DIFFICULTY_MATCHED, normalize_level
from modebench.diagnostics import UNSCORABLE, VerifierExecutionError
from modebench.failures import policy as unscorable
from modebench.identity import digest_json, software_identity, with_plugins
from modebench.prompts import make_messages, messages_sha256, profile_metadata
from modebench.run_metadata import validate_run
from modebench.validation import InputError, json_value, positive_integer, with_hint

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
SCORING_POLICY = "wrong-or-malformed-count-as-failure; verifier-errors-suppress-all-aggregates-v1"
V3_SCHEMA = "modebench-saved-responses-v3"


def admission_limits(level: int, domain: str | None = None) -> list[str]:
    """The admission facts of a level (of one cell, given ``domain``) as clauses without a period:
    ``Level 4 as a whole is not admitted``, ``Level 4 MathIR is not difficulty-matched``."""
    if level not in NOT_ADMITTED_LEVELS:
        return []
    from modebench.domains import plugin

    clauses = [f"Level {level} as a whole is not admitted"]
    for unmatched_level, unmatched in sorted(NOT_DIFFICULTY_MATCHED):
        if unmatched_level == level and domain in (None, unmatched):
            clauses.append(f"Level {level} {plugin(unmatched).card.name} is not difficulty-matched")
    return clauses


def protocol_notes(level: int, domain: str) -> list[str]:
    """Admission notes printed under a cell, one sentence each."""
    return [clause + "." for clause in admission_limits(level, domain)]


class StatusTally:
    """Attempt statuses over a run: the receipt's ``status_counts`` and whether every attempt scored.

    ``policy`` is the run's policy for unscorable attempts (``modebench.failures.policy``);
    ``counted`` tallies the attempts it scored as incorrect, by their original status.
    """

    def __init__(self, policy: str = unscorable.FAIL_RUN) -> None:
        self.counts: dict[str, int] = {}
        self.policy = policy
        self.counted: dict[str, int] = {}

    def add(self, result: Mapping[str, Any]) -> None:
        for attempt in result["draws"][0]["attempts"]:
            self.counts[attempt["status"]] = self.counts.get(attempt["status"], 0) + 1
            original = attempt.get(unscorable.ORIGINAL_STATUS)
            if original is not None:
                self.counted[original] = self.counted.get(original, 0) + 1

    @property
    def healthy(self) -> bool:
        """No attempt was unscorable (an evaluator failure suppresses every aggregate)."""
        return not any(status in UNSCORABLE for status in self.counts)

    def block(self, threshold: int) -> dict[str, Any]:
        block = evaluation_block("completed" if self.healthy else "failed", self.counts, threshold)
        block.update(unscorable.evaluation_extras(self.policy, self.counted))
        return block


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


@dataclass
class Options:
    """Validated evaluation options (``docs/evaluation.md``, "Input")."""

    min_defined_prompts: int = metrics.DEFAULT_MIN_DEFINED_PROMPTS
    run: dict[str, Any] | None = None
    config: str | None = None
    split: str = "eval"
    allow_partial: bool = False
    data_root: Any = None
    #: ``modebench.suite.ids.PromptIds``: grade only these records (file evaluation).
    prompt_ids: Any = None

    @classmethod
    def build(
        cls,
        *,
        min_defined_prompts: Any = metrics.DEFAULT_MIN_DEFINED_PROMPTS,
        run: Any = None,
        data_root: Any = None,
        config: Any = None,
        split: Any = "eval",
        allow_partial: Any = False,
        prompt_ids: Any = None,
    ) -> Options:
        positive_integer(min_defined_prompts, "min_defined_prompts")
        if not isinstance(allow_partial, bool):
            raise InputError("allow_partial must be a boolean")
        if config is None and (data_root is not None or allow_partial or split != "eval"):
            raise InputError("data_root, split, and allow_partial require a frozen config")
        validated_run = validate_run(run) if run is not None else None
        return cls(min_defined_prompts, validated_run, config, split, allow_partial, data_root, prompt_ids)


ReferenceValidator = Callable[[int, str, Any], dict[str, Any]]


def _default_validator(level: int, domain: str, answer: Any) -> dict[str, Any]:
    from modebench import verifier

    return verifier.reference_check(level, domain, answer)


@dataclass
class Preflight:
    """Phases A–C over a stream of records; keeps only what later phases need."""

    options: Options
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
    _references: dict[tuple[int, str, str], tuple[dict[str, Any], str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.options.run is not None:
            self.run = self.options.run
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
            raise InputError(f"{label}: {exc}") from None

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
            profile = profile_metadata(prepared["level"], prepared["domain"], condition)
            if "problem" in row:
                messages = make_messages(prepared["level"], prepared["domain"], row, condition)
                prompt_hash = messages_sha256(messages)
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
        if self.options.prompt_ids is not None:  # a selection by id list: the receipt says which
            block["prompt_ids"] = self.options.prompt_ids.ordered()
        return block


Grader = Callable[[Mapping[str, Any]], list[dict[str, Any]]]


def _grade_with_shared(prepared: Mapping[str, Any]) -> list[dict[str, Any]]:
    row = prepared["row"]
    # ``grade_response`` is this module's global, looked up per call (0.4.0's replaceable hook).
    return [
        grade_response(prepared["level"], prepared["domain"], row, text)
        for text in prepared["raw"]["responses"]
    ]


def prompt_result(prepared: Mapping[str, Any], attempts: list[dict[str, Any]]) -> dict[str, Any]:
    """The per-prompt result object shared by v3 receipts and the v4 journal."""
    binding = prepared["binding"]
    return {
        "id": prepared["id"],
        "reference_sha256": binding["reference_sha256"],
        "prompt_sha256": binding["prompt_sha256"],
        "prompt_profile": binding["prompt_profile"],
        "draws": [{"attempts": attempts}],
        **metrics.prompt_metrics(attempts),
    }


def grade_prepared(prepared: Mapping[str, Any], grader: Grader | None = None) -> dict[str, Any]:
    """Grade every response of one bound record, in order, with no short circuit."""
    attempts = (grader or _grade_with_shared)(prepared)
    return prompt_result(prepared, attempts)


def evaluation_block(status: str, status_counts: dict[str, int], threshold: int) -> dict[str, Any]:
    return {
        "status": status,
        "status_counts": dict(sorted(status_counts.items())),
        "scoring_policy": SCORING_POLICY,
        "aggregation": metrics.POOLED,
        "groups_per_prompt": 1,
        "prompt_weighting": "equal",
        "min_defined_prompts": threshold,
        "pass_at_k": "empirical_saved_group",
        "prompt_hash_semantics": "expected_registered_messages; does not attest generation",
    }


def tally_results(
    entries: Iterable[tuple[int, str, int, dict[str, Any]]],
    policy: str = unscorable.FAIL_RUN,
) -> tuple[StatusTally, dict[tuple[int, str, int], metrics.CellAccumulator]]:
    """Status tally and cell accumulators of per-prompt results (v4 receipt assembly)."""
    tally = StatusTally(policy)
    cells: dict[tuple[int, str, int], metrics.CellAccumulator] = {}
    for level, domain, k, result in entries:
        tally_result(tally, cells, (level, domain, k), result)
    return tally, cells


def tally_result(
    tally: StatusTally,
    cells: dict[tuple[int, str, int], metrics.CellAccumulator],
    cell: tuple[int, str, int],
    result: Mapping[str, Any],
) -> None:
    """Add one per-prompt result of ``cell`` (level, domain, k) to a running tally."""
    tally.add(result)
    accumulator = cells.get(cell)
    if accumulator is None:
        accumulator = cells[cell] = metrics.CellAccumulator()
    if result["accuracy"] is not None:
        accumulator.add(result)
    else:
        accumulator.prompts += 1


def v4_cells(
    cells: dict[tuple[int, str, int], metrics.CellAccumulator], threshold: int, healthy: bool
) -> list[dict[str, Any]]:
    """The cells of a v4 receipt, in receipt order."""
    out = []
    for (level, domain, k), accumulator in sorted(cells.items()):
        cell = {"level": level, "domain": domain, "k": k, **accumulator.summary(threshold, healthy)}
        cell["protocol_notes"] = protocol_notes(level, domain)
        out.append(cell)
    return out


def receipt_header(software: dict[str, Any], preflight: Preflight) -> dict[str, Any]:
    return {"software": software, **preflight.run_block(), "dataset": preflight.dataset_block()}


def evaluate(
    records: Sequence[Any],
    *,
    min_defined_prompts: Any = metrics.DEFAULT_MIN_DEFINED_PROMPTS,
    run: Any = None,
    data_root: Any = None,
    config: Any = None,
    split: Any = "eval",
    allow_partial: Any = False,
    locations: Sequence[str] | None = None,
) -> dict[str, Any]:
    """In-memory evaluation returning the v3 result document."""
    options = Options.build(
        min_defined_prompts=min_defined_prompts,
        run=run,
        data_root=data_root,
        config=config,
        split=split,
        allow_partial=allow_partial,
    )
    records = list(records)
    if locations is not None and len(locations) != len(records):
        raise InputError("locations must match the number of records")
    labels = list(locations) if locations is not None else [f"record {i}" for i in range(1, len(records) + 1)]
    frozen = None
    if options.config is not None:
        from modebench.data import open_frozen

        frozen = open_frozen(
            options.data_root if options.data_root is not None else "data",
            options.config,
            options.split,
            options.allow_partial,
        )
    preflight = Preflight(options, frozen)
    prepared = [preflight.accept(record, label, in_memory=True) for record, label in zip(records, labels)]
    preflight.finish()
    bound = [preflight.bind(item) for item in prepared]
    results = [grade_prepared(item) for item in bound]
    return assemble_v3(records, preflight, bound, results)


def assemble_v3(
    records: Iterable[Any],
    preflight: Preflight,
    bound: Sequence[Mapping[str, Any]],
    results: list[dict[str, Any]],
) -> dict[str, Any]:
    tally = StatusTally()
    for result in results:
        tally.add(result)
    healthy = tally.healthy
    threshold = preflight.options.min_defined_prompts
    groups: dict[tuple[int, str, int], list[dict[str, Any]]] = {}
    for item, result in zip(bound, results):
        groups.setdefault((item["level"], item["domain"], len(item["raw"]["responses"])), []).append(result)
    cells = []
    for (level, domain, k), members in sorted(groups.items()):
        cells.append(v3_cell(level, domain, k, members, threshold, healthy))
    return {
        "schema": V3_SCHEMA,
        "created_at": now_iso(),
        "records_sha256": digest_json(list(records)),
        **receipt_header(with_plugins(software_identity(), (item["domain"] for item in bound)), preflight),
        "evaluation": tally.block(threshold),
        "cells": cells,
    }


def v3_cell(
    level: int, domain: str, k: int, members: list[dict[str, Any]], threshold: int, healthy: bool
) -> dict[str, Any]:
    cell: dict[str, Any] = {"level": level, "domain": domain, "k": k}
    if healthy:
        cell["accuracy"] = statistics.fmean(m["accuracy"] for m in members)
        cell["pass_at_k"] = statistics.fmean(m["pass_at_k"] for m in members)
        cell["distinct_at_k"] = statistics.fmean(m["distinct_at_k"] for m in members)
        cell["pcmd"] = metrics.cell_summary(members, metrics.POOLED, threshold)
    else:
        cell.update(
            {"accuracy": None, "pass_at_k": None, "distinct_at_k": None, "pcmd": dict(metrics.FAILED_PCMD)}
        )
    cell["protocol_notes"] = protocol_notes(level, domain)
    cell["prompt_results"] = members
    return cell


__all__ = [
    "Binding",
    "BoundRecord",
    "Options",
    "PreparedRecord",
    "Preflight",
    "StatusTally",
    "RECORD_FIELDS",
    "SCORING_POLICY",
    "evaluate",
    "admission_limits",
    "evaluation_block",
    "grade_prepared",
    "prompt_result",
    "protocol_notes",
    "receipt_header",
]

# ModeBench 0.4.0 surface names (docs/compatibility.md); grade_response and validate_reference
# are 0.4.0's call-time hooks, so ``grade_prepared`` callers may replace them here.
from modebench.contracts import normalize_task_identity  # noqa: E402
from modebench.data import load_split, prompt_id, split_record  # noqa: E402
from modebench.metrics import POOLED, cell_summary  # noqa: E402
from modebench.prompts import HISTORICAL, prompt_sha256  # noqa: E402
from modebench.validation import validate_reference  # noqa: E402


def grade_response(level: Any, domain: Any, row: Any, text: Any) -> dict[str, Any]:
    """``verifier.grade_response``, looked up at call time (either may be replaced by a caller)."""
    from modebench import verifier

    return verifier.grade_response(level, domain, row, text)


__all__ += [
    "HISTORICAL",
    "POOLED",
    "cell_summary",
    "load_split",
    "normalize_task_identity",
    "prompt_id",
    "prompt_sha256",
    "split_record",
    "validate_reference",
]
