"""0.4.0's ``modebench.reporting``: reading receipts (:mod:`modebench.receipt.reader`) and the
plain-text report of a validated receipt (:mod:`modebench.receipt.text`), which ``report`` prints.

The reader returns the typed :class:`~modebench.receipt.records.Receipt`; :func:`read_report`
here is 0.4.0's edge and returns its dictionary, as 0.4.0 did."""

from __future__ import annotations

import os
from typing import Any

from modebench.receipt import reader as _reader
from modebench.receipt.reader import (
    cell_domain,
    check_identity,
    check_recomputed,
    incomplete_entry,
    iter_cell_results,
    iter_prompt_results,
    journal_path,
    open_regular,
    recompute_policy,
    recompute_threshold,
    recorded_plugins,
    sequenced,
)
from modebench.receipt.schema import MAX_RECEIPT_BYTES, MAX_RESULT_LINE_BYTES, RESULT_FORMAT, V3, V4
from modebench.receipt.schema import SCHEMAS as _SCHEMAS
from modebench.receipt.text import FAILED_HEADLINE, FOOTER, summarize

#: 0.4.0's value: a set of the receipt schemas a report reads (ours keeps them in order in
#: ``receipt.schema.SCHEMAS``).
SCHEMAS: set[str] = set(_SCHEMAS)

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

# ModeBench 0.4.0 surface names (docs/compatibility.md).
from modebench.contracts import normalize_task_identity  # noqa: E402
from modebench.identity import file_sha256  # noqa: E402

__all__ += ["file_sha256", "normalize_task_identity"]

# Names 0.4.0's module carried at its top level (re-exports), kept importable here.
from collections.abc import Iterator as Iterator  # noqa: E402

from modebench.validation import InputError as InputError  # noqa: E402
from modebench.validation import loads as loads  # noqa: E402
from modebench.validation import positive_integer as positive_integer  # noqa: E402


def read_report(path: str | os.PathLike[str], *, verify_results: bool = True) -> dict[str, Any]:
    """Load and validate a receipt (0.4.0's signature): the checked receipt's dictionary."""
    return _reader.read_report(path, verify_results=verify_results).payload
