"""The plain-text report of a checked receipt: what ``modebench report`` prints (0.4.0's text).

The receipt is the typed :class:`~modebench.receipt.records.Receipt`; the text is ModeBench
0.4.0's byte for byte for a 0.4.0-policy receipt.
"""

from __future__ import annotations

import json
from typing import Any

from modebench._words import counted as counted_words
from modebench._words import were
from modebench.receipt.records import Receipt

__all__ = ["FAILED_HEADLINE", "FOOTER", "summarize"]

FOOTER = "PCMD uses only verified answers; reportable=false means insufficient eligible prompts."
FAILED_HEADLINE = (
    "Evaluation FAILED: scores are unavailable. Inspect failure and attempt diagnostics in the JSON receipt."
)


def _number(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float))


def _g(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return format(value, "g")


def summarize(payload: Receipt | dict[str, Any]) -> str:
    """The plain-text report of a checked receipt (no trailing newline); 0.4.0 passed the payload."""
    receipt = Receipt("", payload) if isinstance(payload, dict) else payload
    if not receipt.completed:
        return FAILED_HEADLINE + "\n" + json.dumps(receipt.failure, sort_keys=True)
    payload = receipt.payload
    lines = ["Evaluation completed", "level domain k accuracy pass@k distinct@k PCMD reportable"]
    for cell in receipt.cells:
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
            f"Unscorable policy {payload['evaluation']['unscorable']}: {counted_words(total, 'unscorable response')} "
            f"{were(total)} scored as incorrect ({by_status or 'none occurred'}); "
            "these scores are not comparable with fail-run (ModeBench 0.4.0) receipts."
        )
    return "\n".join(lines)
