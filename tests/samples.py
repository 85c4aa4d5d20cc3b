"""Small valid tasks for every domain, made by the project's own generators (no reference data)."""

from __future__ import annotations

import json
import random
from functools import cache
from typing import Any

from modebench.contracts import DOMAINS
from modebench.domains import plugin


@cache
def sample_row(domain: str, level: int = 1, seed: int = 7) -> dict[str, Any]:
    """One generated row, with ``answer`` decoded."""
    generate = plugin(domain).generate  # type: ignore[arg-type]
    assert generate is not None, f"{domain} has no generator"
    row = dict(generate(level, random.Random(seed)))
    if isinstance(row["answer"], str):
        row["answer"] = json.loads(row["answer"])
    return row


def all_domains() -> tuple[str, ...]:
    return DOMAINS


def sample_record(index: int, domain: str, tag: str = "p", **extra: Any) -> dict[str, Any]:
    """One ``evaluate`` input record for ``domain`` (id ``{tag}{index}``, level 1, two responses:
    a wrong boxed answer and free text), with ``extra`` members added or replaced."""
    row = sample_row(domain)
    record = {
        "id": f"{tag}{index}",
        "level": 1,
        "domain": domain,
        "problem": row["problem"],
        "answer": row["answer"],
        "responses": ["\\boxed{0}", "not a solution"],
    }
    record.update(extra)
    return record
