"""0.4.0's ``modebench.reporting``: reading receipts (:mod:`modebench.receipt.reader`) and the
plain-text report of a validated receipt (``summarize``), which ``report`` prints."""

from __future__ import annotations

import json
from typing import Any

from modebench._words import counted as _counted
from modebench._words import were
from modebench.receipt.reader import (
    cell_domain,
    check_identity,
    check_recomputed,
    incomplete_entry,
    iter_cell_results,
    iter_prompt_results,
    journal_path,
    open_regular,
    read_report,
    recompute_policy,
    recompute_threshold,
    recorded_plugins,
    sequenced,
)
from modebench.receipt.schema import MAX_RECEIPT_BYTES, MAX_RESULT_LINE_BYTES, RESULT_FORMAT, V3, V4
from modebench.receipt.schema import SCHEMAS as _SCHEMAS

#: 0.4.0's value: a set of the receipt schemas a report reads (ours keeps them in order in
#: ``receipt.schema.SCHEMAS``).
SCHEMAS: set[str] = set(_SCHEMAS)

FOOTER = "PCMD uses only verified answers; reportable=false means insufficient eligible prompts."
FAILED_HEADLINE = (
    "Evaluation FAILED: scores are unavailable. Inspect failure and attempt diagnostics in the JSON receipt."
)

__all__ = [
    "FAILED_HEADLINE",
    "FOOTER",
    "MAX_RECEIPT_BYTES",
    "MAX_RESULT_LINE_BYTES",
    "RESULT_FORMAT",
    "SCHEMAS",
    "V3",
    "V4",
    "cell_domain",
    "check_identity",
    "check_recomputed",
    "incomplete_entry",
    "iter_cell_results",
    "iter_prompt_results",
    "journal_path",
    "open_regular",
    "read_report",
    "recompute_policy",
    "recompute_threshold",
    "recorded_plugins",
    "sequenced",
    "summarize",
]


def _number(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float))


def _g(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return format(value, "g")


def summarize(payload: dict[str, Any]) -> str:
    """The plain-text report of a validated receipt (no trailing newline)."""
    if payload["evaluation"]["status"] != "completed":
        detail = payload.get("failure", payload["evaluation"].get("status_counts", {}))
        return FAILED_HEADLINE + "\n" + json.dumps(detail, sort_keys=True)
    lines = ["Evaluation completed", "level domain k accuracy pass@k distinct@k PCMD reportable"]
    for cell in payload["cells"]:
        fields = [
            str(cell["level"]),
            str(cell["domain"]),
            str(cell["k"]),
            _g(cell["accuracy"]),
            _g(cell["pass_at_k"]),
            _g(cell["distinct_at_k"]),
            _g(cell["pcmd"]["d_mode"]),
            _g(bool(cell["pcmd"]["reportable"])),
        ]
        lines.append(" ".join(fields))
        lines.extend(f"  Note: {note}" for note in cell.get("protocol_notes", []))
    lines.append(FOOTER)
    counted = payload["evaluation"].get("counted_as_incorrect")
    if "unscorable" in payload["evaluation"] and isinstance(counted, dict):
        # Not a 0.4.0-policy receipt: say so under the table (0.4.0 receipts never get this line).
        total = sum(value for value in counted.values() if _number(value))
        by_status = ", ".join(f"{status} {count}" for status, count in sorted(counted.items()))
        lines.append(
            f"Unscorable policy {payload['evaluation']['unscorable']}: {_counted(total, 'unscorable response')} "
            f"{were(total)} scored as incorrect ({by_status or 'none occurred'}); "
            "these scores are not comparable with fail-run (ModeBench 0.4.0) receipts."
        )
    return "\n".join(lines)


# ModeBench 0.4.0 surface names (docs/compatibility.md).
from modebench.contracts import normalize_task_identity  # noqa: E402
from modebench.identity import file_sha256  # noqa: E402

__all__ += ["file_sha256", "normalize_task_identity"]

# Names 0.4.0's module carried at its top level (re-exports), kept importable here.
from collections.abc import Iterator as Iterator  # noqa: E402

from modebench.validation import InputError as InputError  # noqa: E402
from modebench.validation import loads as loads  # noqa: E402
from modebench.validation import positive_integer as positive_integer  # noqa: E402
