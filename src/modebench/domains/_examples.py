"""A complete evaluate input record for one domain: what a first input line looks like.

The task is the domain's own generator's (``Random(seed)``), so the reference ``answer`` is
complete and valid; the one response is the plug-in's first witness, which verifies. Used by
``modebench datasets example DOMAIN`` and ``api.example_record``.
"""

from __future__ import annotations

import json
import random
from typing import Any

from modebench.contracts import normalize_level
from modebench.domains import canonical, plugin

__all__ = ["example_record"]


def example_record(domain: Any, level: Any = 1, seed: int = 0) -> dict[str, Any]:
    """``{"id", "level", "domain", "problem", "answer", "responses"}`` for ``domain`` at ``level``.

    An unknown domain raises ``ValueError`` naming the valid ones; the response is the domain's
    first witness (a plug-in without witnesses gives an empty response, graded ``malformed``).
    """
    name = canonical(domain)
    number = normalize_level(level)
    found = plugin(name)
    if found.generate is None:  # a third-party plug-in need not generate tasks
        raise ValueError(f"domain {name} has no task generator, so no example task")
    row = found.generate(number, random.Random(seed))
    answer = json.loads(row["answer"]) if isinstance(row["answer"], str) else row["answer"]
    shown = list(found.witnesses(number, answer))[:1] if found.witnesses is not None else []
    return {
        "id": f"example-{name.replace('/', '-')}-level{number}",
        "level": number,
        "domain": name,
        "problem": row["problem"],
        "answer": answer,
        "responses": shown or [""],
    }
