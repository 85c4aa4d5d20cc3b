"""ModeBench 0.4.0's in-memory evaluator (the v3 result document) and the per-prompt result.

The record schema and preflight live in :mod:`modebench.intake.preflight`, the status and cell
tallies in :mod:`modebench.receipt.tallies`; their 0.4.0 names are importable from here.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from modebench import metrics
from modebench.api_types import EvaluationOptions
from modebench.data import open_frozen
from modebench.engine.spec import check_options
from modebench.identity import digest_json, software_identity
from modebench.intake.preflight import RECORD_FIELDS as _RECORD_FIELDS
from modebench.intake.preflight import (
    REFERENCE_CACHE,
    Binding,
    BoundRecord,
    Preflight,
    PreparedRecord,
    now_iso,
    record_label,
)
from modebench.isolation import client as verifier  # 0.4.0's modebench.verifier: the same module
from modebench.receipt.notes import admission_limits, protocol_notes
from modebench.receipt.schema import SCORING_POLICY
from modebench.receipt.schema import V3 as V3_SCHEMA
from modebench.receipt.tallies import StatusTally, evaluation_block, tally_result, tally_results, v4_cells
from modebench.receipt.writer import prompt_result, with_plugins
from modebench.validation import InputError

#: 0.4.0's value: the set of fields an input record may carry.
RECORD_FIELDS: set[str] = set(_RECORD_FIELDS)

Grader = Callable[[Mapping[str, Any]], list[dict[str, Any]]]


def _grade_with_shared(prepared: Mapping[str, Any]) -> list[dict[str, Any]]:
    row = prepared["row"]
    # ``grade_response`` is this module's global, looked up per call (0.4.0's replaceable hook).
    return [
        grade_response(prepared["level"], prepared["domain"], row, text)
        for text in prepared["raw"]["responses"]
    ]


def grade_prepared(prepared: Mapping[str, Any], grader: Grader | None = None) -> dict[str, Any]:
    """Grade every response of one bound record, in order, with no short circuit."""
    attempts = (grader or _grade_with_shared)(prepared)
    return prompt_result(prepared, attempts)


def _reference_hook(level: int, domain: str, answer: Any) -> dict[str, Any]:
    return validate_reference(level, domain, answer)  # the module global, looked up per call


def _run_header(software: dict[str, Any], preflight: Preflight) -> dict[str, Any]:
    """The software, run and dataset blocks of a receipt, from our one preflight."""
    return {"software": software, **preflight.run_block(), "dataset": preflight.dataset_block()}


def receipt_header(
    *,
    records_hash: Any,
    run: Any,
    dataset: Any,
    threshold: Any,
    status_counts: Mapping[str, int],
    created_at: Any = None,
    software: Any = None,
) -> dict[str, Any]:
    """0.4.0's header of a v3 receipt: schema, time, input digest, software, run, dataset and the
    ``evaluation`` block (``failed`` when any status is unscorable), from the parts given.

    As in 0.4.0, an empty ``run`` counts as not reported, ``created_at`` defaults to now (UTC)
    and ``software`` to this installation's identity.
    """
    counts = dict(status_counts)
    healthy = not any(counts.get(status, 0) for status in UNSCORABLE)
    return {
        "schema": V3_SCHEMA,
        "created_at": created_at or now_iso(),
        "records_sha256": records_hash,
        "software": software or software_identity(),
        "run": run,
        "generation_metadata_status": "user_declared" if run else "unreported",
        "run_sha256": digest_json(run) if run else None,
        "dataset": dataset,
        "evaluation": evaluation_block("completed" if healthy else "failed", counts, threshold),
    }


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
    options = check_options(
        EvaluationOptions(
            min_defined_prompts=min_defined_prompts,
            run=run,
            data_root=data_root,
            config=config,
            split=split,
            allow_partial=allow_partial,
        )
    )
    records = list(records)
    if locations is not None and len(locations) != len(records):
        raise InputError("locations must match the number of records")
    labels = list(locations) if locations is not None else [f"record {i}" for i in range(1, len(records) + 1)]
    frozen = None
    if options.config is not None:
        frozen = open_frozen(
            options.data_root if options.data_root is not None else "data",
            options.config,
            options.split,
            options.allow_partial,
        )
    # ``validate_reference`` is this module's global, looked up per reference (0.4.0's hook).
    preflight = Preflight(options, frozen, validate=_reference_hook)
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
        **_run_header(with_plugins(software_identity(), (item["domain"] for item in bound)), preflight),
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
    "REFERENCE_CACHE",
    "V3_SCHEMA",
    "Binding",
    "BoundRecord",
    "PreparedRecord",
    "Preflight",
    "StatusTally",
    "RECORD_FIELDS",
    "admission_limits",
    "now_iso",
    "record_label",
    "tally_result",
    "tally_results",
    "v4_cells",
    "SCORING_POLICY",
    "evaluate",
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
    return verifier.grade_response(level, domain, row, text)  # an attribute of the module, per call


#: The hooks as defined here: ``replaced_hooks`` tells a caller's replacement from them.
_DEFAULT_HOOKS: dict[str, Any] = {
    "grade_prepared": grade_prepared,
    "grade_response": grade_response,
    "validate_reference": validate_reference,
}


def replaced_hooks() -> frozenset[str]:
    """The call-time hooks a caller has replaced on this module (the names 0.4.0 looks up at
    call time; ``docs/compatibility.md``)."""
    module = globals()
    return frozenset(name for name, default in _DEFAULT_HOOKS.items() if module[name] is not default)


__all__ += [
    "HISTORICAL",
    "POOLED",
    "cell_summary",
    "load_split",
    "normalize_task_identity",
    "prompt_id",
    "prompt_sha256",
    "replaced_hooks",
    "split_record",
    "validate_reference",
]

# Names 0.4.0's module carried at its top level (re-exports), kept importable here.
from modebench.diagnostics import UNSCORABLE as UNSCORABLE  # noqa: E402
from modebench.diagnostics import VerifierExecutionError as VerifierExecutionError  # noqa: E402
from modebench.prompts import make_messages as make_messages  # noqa: E402
from modebench.prompts import profile_metadata as profile_metadata  # noqa: E402
from modebench.validation import json_value as json_value  # noqa: E402
from modebench.validation import positive_integer as positive_integer  # noqa: E402
from modebench.validation import validate_run as validate_run  # noqa: E402
