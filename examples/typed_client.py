"""A typed consumer of the public API; `make typecheck` requires this to pass mypy --strict."""

from __future__ import annotations

from modebench.api import EvaluationOptions, Task, grade, make_prompt, read_report
from modebench.api_types import ChatMessage, GradeResult, Report


def consume(task: Task) -> tuple[list[ChatMessage], GradeResult]:
    return make_prompt(task), grade(task, "saved response")


def scores(path: str) -> list[float | None]:
    report: Report = read_report(path)
    if report.status != "completed":
        return []
    return [cell.pcmd.d_mode for cell in report.cells]


options = EvaluationOptions(min_defined_prompts=30, config="level1_countdown")
