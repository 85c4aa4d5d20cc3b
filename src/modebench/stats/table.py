"""The plain-data result every statistics function returns: a versioned table of rows."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

__all__ = ["StatsTable"]


@dataclass(frozen=True)
class StatsTable:
    """Rows of one schema (``schema`` names it, ``columns`` orders it) plus run-level metadata.

    ``to_records()`` gives a list of plain dicts; ``to_pandas()`` a DataFrame (pandas optional);
    ``to_dict()`` the documented JSON document.
    """

    schema: str
    columns: tuple[str, ...]
    rows: tuple[dict[str, Any], ...]
    meta: dict[str, Any] = field(default_factory=dict)
    # The columns a terminal or a paper table shows (text, LaTeX); None: all of them.
    display: tuple[str, ...] | None = None
    # Header text of some columns in the text, Markdown and LaTeX tables (a comparison names its
    # runs there); CSV and JSON keep the column names, which are the schema.
    headers: dict[str, str] = field(default_factory=dict)

    def to_records(self) -> list[dict[str, Any]]:
        return [dict(row) for row in self.rows]

    def to_dict(self) -> dict[str, Any]:
        return {"schema": self.schema, **copy.deepcopy(self.meta), "rows": self.to_records()}

    def to_pandas(self) -> Any:
        try:
            import pandas  # noqa: PLC0415 - optional package: pandas (DataFrame output only)
        except ImportError:
            raise ImportError("to_pandas needs pandas: pip install pandas") from None
        frame = pandas.DataFrame.from_records(self.to_records(), columns=list(self.columns))
        for name in ("k", "level", "draws", "draws_a", "draws_b", "step", "prompts"):
            if name in frame.columns:  # integers with nulls: pandas' nullable Int64, not float + NaN
                frame[name] = frame[name].astype("Int64")
        return frame
