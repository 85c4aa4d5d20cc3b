"""Public types of :mod:`modebench.api` (the names and fields of the 0.4.0 API)."""

from __future__ import annotations

import argparse
import dataclasses
import pathlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypedDict, Union

from modebench.contracts import Domain  # one definition; an installed plug-in's name is typed as it too
from modebench.metrics import DEFAULT_MIN_DEFINED_PROMPTS

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


#: How an option enters a run's checkpoint identity (:mod:`modebench.receipt.run_identity` reads it):
#: ``"always"`` (ModeBench 0.4.0's options), ``"unless-default"`` (a later option: bound only when
#: it differs from its default, so a run that leaves it alone keeps 0.4.0's identity). An option
#: without the mark cannot change a result (where files go, caching, bookkeeping).
IdentityMark = Literal["always", "unless-default"]


def _option(default: Any, identity: IdentityMark | None = None, name: str | None = None) -> Any:
    """A field of :class:`EvaluationOptions` with its identity mark (``name``: its identity key)."""
    metadata: dict[str, str] = {}
    if identity is not None:
        metadata["identity"] = identity
        metadata["identity_name"] = name or ""
    return field(default=default, metadata=metadata)


@dataclass(frozen=True)
class EvaluationOptions:
    """What to evaluate and how to score it (``docs/evaluation.md``); where a run executes is
    :class:`modebench.engine.Execution`. Each field's metadata says whether it enters the run's
    checkpoint identity (:data:`IdentityMark`)."""

    min_defined_prompts: int = _option(DEFAULT_MIN_DEFINED_PROMPTS, "always")
    run: RunMetadata | None = _option(None, "always")
    data_root: PathLike | None = None
    config: str | None = _option(None, "always")
    split: Split = _option("eval", "always")
    allow_partial: bool = _option(False, "always")
    #: Registry path or URL (or ``"bundled"``) for a frozen split outside the packaged 0.4.0 release.
    registry: str | None = None
    #: Cache base for frozen splits (default ``$XDG_CACHE_HOME/modebench``); needs ``config``.
    cache_dir: PathLike | None = None
    #: Never download: use only verified cached splits and registries; needs ``config``.
    offline: bool = False
    #: Run metadata read (strict JSON) from this file instead of ``run`` (bound as ``run``).
    run_file: PathLike | None = None
    #: Keep the checkpoint ledger after a completed run (by default only the result journal stays).
    keep_checkpoint: bool = False
    #: A quick trial: only the first ``limit`` prompts of the frozen split (recorded in the receipt's
    #: dataset block as ``limit``; ``docs/suites.md``); needs ``config``.
    limit: int | None = _option(None, "unless-default")
    #: A prompt-id list file (``docs/prompt-ids.md``): grade only the input records it lists (every
    #: listed id must be in the input, and in the split with ``config``); others are skipped. The
    #: identity binds the listed ids, in order, as ``prompt_ids``.
    ids: PathLike | None = _option(None, "unless-default", "prompt_ids")
    #: Unscorable attempts: ``"fail-run"`` (ModeBench 0.4.0: any one voids every score) or the
    #: opt-in ``"count-as-incorrect"`` (timeouts and resource limits scored as incorrect draws,
    #: recorded in the receipt's ``evaluation`` block; ``docs/evaluation.md``).
    unscorable: str = _option("fail-run", "unless-default")

    @classmethod
    def from_args(cls, args: argparse.Namespace, config: str | None) -> EvaluationOptions:
        """The options of ``modebench evaluate``'s parsed flags (the one CLI mapping, as
        lm-evaluation-harness's ``EvaluationConfig.from_cli``): each field is read from the flag
        of its own name, so a new option needs only its field and its flag. ``config`` is the
        one configuration chosen (a suite's several are run one by one); ``run`` comes as a file.
        """
        values = {
            item.name: getattr(args, _FLAG_OF.get(item.name, item.name))
            for item in dataclasses.fields(cls)
            if item.name not in ("run", "config")
        }
        return cls(config=config, **values)


#: Flags named before their option: ``--run FILE`` is ``run_file``, ``--keep-work`` ``keep_checkpoint``.
_FLAG_OF: Mapping[str, str] = {"run_file": "run", "keep_checkpoint": "keep_work"}


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
