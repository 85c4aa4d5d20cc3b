"""Schema ids and size bounds of receipts, journals, shard receipts and checkpoints (one place)."""

from __future__ import annotations

from typing import Final

#: The 0.4.0 in-memory receipt, and the failure receipt of a run whose references could not be checked.
V3: Final = "modebench-saved-responses-v3"
#: The streaming receipt: a header, the cells, and the hash of its journal.
V4: Final = "modebench-saved-responses-v4"
SCHEMAS: Final = (V3, V4)
REPORT_SCHEMA: Final = V4
FAILURE_SCHEMA: Final = V3
#: One journal line: a per-prompt result with its sequence number.
RESULT_FORMAT: Final = "modebench-prompt-result-v1"
CHECKPOINT_SCHEMA: Final = "modebench-checkpoint-v1"
SHARD_SCHEMA: Final = "modebench-shard-receipt-v1"
#: The journal's file name inside the checkpoint directory.
JOURNAL_NAME: Final = "results.jsonl"
#: Input bounds that enter the checkpoint identity (a run under other bounds is another run).
MAX_RESPONSES_PER_PROMPT: Final = 4096
MAX_INPUT_LINE_BYTES: Final = 16_777_216
MAX_RESULT_LINE_BYTES: Final = 64 * 1024 * 1024
#: A receipt holds a header and one small object per cell; anything larger is not a receipt.
MAX_RECEIPT_BYTES: Final = 64 * 1024 * 1024
SCORING_POLICY: Final = "wrong-or-malformed-count-as-failure; verifier-errors-suppress-all-aggregates-v1"

__all__ = [
    "CHECKPOINT_SCHEMA",
    "FAILURE_SCHEMA",
    "JOURNAL_NAME",
    "MAX_INPUT_LINE_BYTES",
    "MAX_RECEIPT_BYTES",
    "MAX_RESPONSES_PER_PROMPT",
    "MAX_RESULT_LINE_BYTES",
    "REPORT_SCHEMA",
    "RESULT_FORMAT",
    "SCHEMAS",
    "SCORING_POLICY",
    "SHARD_SCHEMA",
    "V3",
    "V4",
]
