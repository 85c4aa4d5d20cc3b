"""The one place where ``modebench.rl`` touches the evaluation core.

Everything the trainer-side code needs from the core goes through the few functions here: a
persistent worker pool (the same :class:`~modebench.isolation.pool.ParallelGrader` that ``evaluate``
uses, hence the same isolation, deadlines, caps and verdict contract), reference validation as
``evaluate``'s preflight does it, grading of prepared prompts, and publishing a receipt through
``evaluate``'s own pipeline with the attempts already graded. When the core moves (``engine/``,
``isolation/``), only the imports of this module change.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from modebench.api_types import EvaluationOptions
from modebench.backends import Grader as Pool
from modebench.backends.memo import GradeMemo, MemoGrader
from modebench.contracts import normalize_level
from modebench.diagnostics import UNSCORABLE, VerifierExecutionError
from modebench.domains import canonical as canonical_domain
from modebench.domains._pipeline import EncodedAnswer
from modebench.engine import Execution, RunSpec, evaluate
from modebench.failures import policy as _policy
from modebench.identity import canonical as canonical_json
from modebench.identity import digest_json as sha256_json
from modebench.identity import software_identity
from modebench.isolation.pool import ParallelGrader

__all__ = [
    "UNSCORABLE",
    "Pool",
    "VerifierExecutionError",
    "canonical_domain",
    "canonical_json",
    "grade_prepared",
    "normalize_level",
    "open_pool",
    "prepared",
    "publish_receipt",
    "receipt_policy",
    "scored_attempts",
    "sendable",
    "sha256_json",
    "software",
]


def software() -> dict[str, Any]:
    """What must not change under a resumed training run: the package version, the verifier and
    diagnostic contracts, the resource policy and the hash of the package source (the receipt's
    ``software`` object without its per-file list, Python, platform and dependency versions)."""
    identity = software_identity(include_git=False)
    keys = (
        "modebench_version",
        "verifier_contract",
        "diagnostic_contract",
        "resource_policy",
        "package_source_sha256",
    )
    return {key: identity[key] for key in keys}


def open_pool(workers: int) -> Pool:
    """``workers`` lazily started isolated verifier workers, as ``evaluate --workers N``."""
    return ParallelGrader(workers)


def sendable(parsed_answer: dict[str, Any]) -> dict[str, Any]:
    """A validated reference ready to be sent step after step: a private copy that carries its
    wire encoding, so the pool does not encode the whole reference again for every batch (the
    same string either way: ``domains._pipeline.EncodedAnswer``). Raises TypeError/ValueError
    for a reference that is not finite JSON (a validated one always is)."""
    return EncodedAnswer(parsed_answer)


def prepared(level: int, domain: str, parsed_answer: dict[str, Any], responses: list[str]) -> dict[str, Any]:
    """A prompt in the shape the pool grades (``evaluation.Preflight.accept``'s record): the
    validated reference in ``row["answer"]``, the texts in ``raw["responses"]``."""
    return {
        "level": level,
        "domain": domain,
        "row": {"answer": parsed_answer},
        "raw": {"responses": responses},
    }


def grade_prepared(pool: Pool, items: list[dict[str, Any]]) -> Iterator[tuple[int, list[dict[str, Any]]]]:
    """``(index, attempts)`` of each prepared prompt (one result dict per response), yielded as
    the pool finishes them, so the caller's bookkeeping overlaps the grading of later prompts."""
    for seq, _, attempts in pool.results(enumerate(items)):
        yield seq, attempts


def receipt_policy(unscorable: str) -> str:
    """``evaluate``'s ``--unscorable`` policy matching a reward policy: ``count-as-incorrect`` for
    ``"count-as-incorrect"``, else ``fail-run`` (0.4.0's: ``"raise"`` and ``"mask"`` give an
    unscorable completion no score, so its prompt fails)."""
    return _policy.COUNT_AS_INCORRECT if unscorable == "count-as-incorrect" else _policy.FAIL_RUN


def scored_attempts(receipt_unscorable: str, attempts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The attempts as ``evaluate`` scores them under its ``--unscorable`` policy: under
    ``count-as-incorrect`` a timeout or resource limit becomes an incorrect draw (a worker
    failure still fails its prompt); under ``fail-run`` unchanged."""
    return _policy.apply(receipt_unscorable, attempts)


def publish_receipt(
    records: Path,
    receipt: Path,
    pool: Pool,
    graded: Iterable[tuple[dict[str, Any], list[dict[str, Any]]]],
    *,
    min_defined_prompts: int,
    unscorable: str = _policy.FAIL_RUN,
) -> Any:
    """Evaluate ``records`` (custom-reference JSONL) into ``receipt`` exactly as
    ``modebench evaluate`` does (``unscorable``: its ``--unscorable`` policy), answering prompts
    already graded from ``graded`` (prepared prompt, attempts) instead of grading them again
    (``modebench.backends.memo``)."""
    memo = GradeMemo()
    for item, attempts in graded:
        memo.put(item, attempts)
    grader = MemoGrader(pool, memo)
    options = EvaluationOptions(min_defined_prompts=min_defined_prompts, unscorable=unscorable)
    return evaluate(RunSpec.build(records, receipt, options, Execution(grader=grader)))
