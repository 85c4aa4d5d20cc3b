"""A deliberately wrong consumer: `make typecheck` requires mypy --strict to REJECT this file."""

from __future__ import annotations

from modebench.api import Task, grade

task = Task("t", 1, "countdown", "Use 1, 2, 3 to make 6.", {"verifier": "countdown"})
verdict: int = grade(task, "1+2+3")  # a GradeResult is not an int
wrong_domain = Task("t", 1, "chess", "?", {})  # not a ModeBench domain
