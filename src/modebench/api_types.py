"""Public types of :mod:`modebench.api` (the names and fields of the 0.4.0 API)."""

from __future__ import annotations

import pathlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TypedDict, Union

from modebench.contracts import Domain  # one definition; an installed plug-in's name is typed as it too

if TYPE_CHECKING:
    from modebench.failures.explain import FailureExplanation

JSONValue = Union[None, bool, int, float, str, list["JSONValue"], dict[str, "JSONValue"]]  # noqa: UP007 - recursive alias
Split = Literal["train", "dev", "eval"]
PromptCondition = Literal["registered_hints_v1", "python_level3_neutral_v1"]
GradeStatus = Literal[
    "correct", "incorrect", "malformed", "timeout", "invalid_reference", "worker_failure", "resource_limit"
]
EvaluationStatus = Literal["completed", "failed"]
PathLike = Union[str, pathlib.Path]  # noqa: UP007 - runtime alias on 3.10


class ChatMessage(TypedDict):
    role: Literal["system", "user"]
    content: str


class GradeResult(TypedDict):
    status: GradeStatus
    verified: bool
    canonical_key: str | None
    graded_text: str
    detail: str | None


class ModelIdentity(TypedDict):
    id: str
    revision: str


class RunMetadata(TypedDict):
    model: ModelIdentity
    generation: dict[str, JSONValue]
    prompt_condition: PromptCondition


class Progress(TypedDict):
    phase: str
    completed_prompts: int
    total_prompts: int | None


class Draw(TypedDict):
    attempts: list[GradeResult]


class PromptResult(TypedDict):
    id: str
    reference_sha256: str
    prompt_sha256: str | None
    prompt_profile: dict[str, JSONValue] | None
    draws: list[Draw]
    pass_at_k: float | None
    distinct_at_k: int | None
    accuracy: float | None


@dataclass(frozen=True)
class Task:
    """One benchmark task. ``answer`` is the decoded reference: never send it to a model."""

    id: str
    level: int
    domain: Domain
    problem: str
    answer: Mapping[str, JSONValue]
    dataset_sha256: str | None = None


@dataclass(frozen=True)
class EvaluationOptions:
    min_defined_prompts: int = 30
    run: RunMetadata | None = None
    data_root: PathLike | None = None
    config: str | None = None
    split: Split = "eval"
    allow_partial: bool = False
    #: Registry path or URL (or ``"bundled"``) for a frozen split outside the packaged 0.4.0 release.
    registry: str | None = None
    #: Cache base for frozen splits (default ``$XDG_CACHE_HOME/modebench``); needs ``config``.
    cache_dir: PathLike | None = None
    #: Never download: use only verified cached splits and registries; needs ``config``.
    offline: bool = False
    #: Run metadata read (strict JSON) from this file instead of ``run``.
    run_file: PathLike | None = None
    #: Keep the checkpoint ledger after a completed run (by default only the result journal stays).
    keep_checkpoint: bool = False
    #: A quick trial: only the first ``limit`` prompts of the frozen split (recorded in the receipt's
    #: dataset block as ``limit``; ``docs/suites.md``); needs ``config``.
    limit: int | None = None
    #: A prompt-id list file (``docs/prompt-ids.md``): grade only the input records it lists (every
    #: listed id must be in the input, and in the split with ``config``); others are skipped.
    ids: PathLike | None = None
    #: Unscorable attempts: ``"fail-run"`` (ModeBench 0.4.0: any one voids every score) or the
    #: opt-in ``"count-as-incorrect"`` (timeouts and resource limits scored as incorrect draws,
    #: recorded in the receipt's ``evaluation`` block; ``docs/evaluation.md``).
    unscorable: str = "fail-run"


@dataclass(frozen=True)
class EvaluationReceipt:
    output: pathlib.Path
    status: EvaluationStatus
    prompts: int
    cells: int
    work_dir: pathlib.Path
    dataset_kind: Literal["custom", "frozen"] = "custom"
    #: The unscorable attempts (which prompts, lines, draws, statuses and why), when there were any.
    unscorable: FailureExplanation | None = None


@dataclass(frozen=True)
class DiversitySummary:
    d_mode: float | None
    reportable: bool
    defined_prompts: int | None
    prompts: int | None
    standard_error: float | None
    reason: str | None = None


@dataclass(frozen=True)
class CellSummary:
    level: int
    domain: Domain
    k: int
    accuracy: float | None
    pass_at_k: float | None
    distinct_at_k: float | None
    pcmd: DiversitySummary
    protocol_notes: tuple[str, ...]


@dataclass(frozen=True)
class Report:
    schema: str
    status: EvaluationStatus
    cells: tuple[CellSummary, ...]
    input_sha256: str | None


__all__ = [
    "CellSummary",
    "ChatMessage",
    "DiversitySummary",
    "Domain",
    "Draw",
    "EvaluationOptions",
    "EvaluationReceipt",
    "EvaluationStatus",
    "GradeResult",
    "GradeStatus",
    "JSONValue",
    "ModelIdentity",
    "PathLike",
    "Progress",
    "PromptCondition",
    "PromptResult",
    "Report",
    "RunMetadata",
    "Split",
    "Task",
]

# ModeBench 0.4.0 surface names (docs/compatibility.md).
from typing import TypeAlias  # noqa: E402

__all__ += ["TypeAlias"]
