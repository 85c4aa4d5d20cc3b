"""The offline five-domain example: ``modebench walkthrough --directory DIR``.

The bundle (``walkthrough.json``) was made by this project's own generators (see
``ops/release/make_walkthrough.py``): five Level-1 tasks, four saved responses each — two correct answers
in different modes, one wrong, one malformed — so walkthrough → evaluate → report runs offline.
"""

from __future__ import annotations

import json
import os
from importlib import resources
from typing import Any

from modebench.prompts import make_messages
from modebench.publish import atomic_directory
from modebench.receipt.text import summarize

__all__ = ["bundle", "export", "summarize"]


def bundle() -> dict[str, Any]:
    """The packaged walkthrough document."""
    text = resources.files("modebench").joinpath("walkthrough.json").read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def export(directory: str | os.PathLike[str]) -> dict[str, Any]:
    """Write tasks, responses, run metadata and expectations into a new directory."""
    with atomic_directory(directory, "walkthrough") as temp:
        data = bundle()
        tasks = []
        for record in data["records"]:
            messages = make_messages(record["level"], record["domain"], record)
            tasks.append(
                {key: record[key] for key in ("id", "level", "domain", "problem")} | {"messages": messages}
            )
        (temp / "tasks.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tasks), encoding="utf-8")
        (temp / "responses.jsonl").write_text(
            "".join(json.dumps(r) + "\n" for r in data["records"]), encoding="utf-8"
        )
        (temp / "run.json").write_text(json.dumps(data["run"], indent=2) + "\n", encoding="utf-8")
        (temp / "expected.json").write_text(json.dumps(data["expected"], indent=2) + "\n", encoding="utf-8")
    return {
        "directory": str(directory),
        "domains": len(data["records"]),
        "responses_per_prompt": 4,
        "next": f"modebench evaluate {directory}/responses.jsonl --run {directory}/run.json --output {directory}/report.json",
    }


# ModeBench 0.4.0 surface names (docs/compatibility.md).
from modebench.validation import InputError  # noqa: E402

__all__ += ["InputError"]
