"""The evaluator's view of a frozen split: accept records by prompt ID, resolve their references
from the verified rows, and describe the dataset in the receipt."""

from __future__ import annotations

from typing import Any

from modebench._datasets.parquet import Loaded, PathLike, load, prompt_id, task_identity
from modebench._datasets.sources import RegistryLike
from modebench._words import counted
from modebench.contracts import normalize_domain, normalize_level
from modebench.prompts import DEFAULT_CONDITION
from modebench.registries import SCHEMA
from modebench.validation import InputError

__all__ = ["UNIQUE_ANSWER_NOTE", "FrozenSplit", "open_frozen"]

UNIQUE_ANSWER_NOTE = "Single-answer diagnostic; separate from the main benchmark."


class FrozenSplit:
    """The evaluator's view of one verified frozen split: which prompt IDs, rows and checks.

    ``limit`` (a quick trial) admits only the first ``limit`` prompts of the split and expects all
    of them; the receipt's dataset block then records ``limit`` and is not ``complete`` unless the
    limit covers the whole split. Without it the block is exactly 0.4.0's.
    """

    def __init__(
        self, config: str, split: str, loaded: Loaded, allow_partial: bool, limit: int | None = None
    ) -> None:
        self.config, self.split, self.allow_partial, self.limit = config, split, allow_partial, limit
        self.record = loaded.record
        self.manifest_sha256 = loaded.manifest_sha256
        self.level, self.domain = task_identity(loaded.record)
        # Only problem and answer are kept: other row columns never reach grading.
        self._rows = [(row.get("problem"), row.get("answer")) for row in loaded.rows]
        self.expected_ids = [prompt_id(config, split, index) for index in range(len(self._rows))]
        self._index = {ident: index for index, ident in enumerate(self.expected_ids)}

    def accept(self, record: dict[str, Any], rid: str, preflight: Any) -> tuple[int, str, dict[str, Any]]:
        index = self._index.get(rid)
        if index is None:
            raise InputError(f"unknown frozen prompt ID: {rid}")
        if self.limit is not None and index >= self.limit:
            raise InputError(
                f"not among the first {counted(self.limit, 'prompt')} of the split (limit {self.limit}); "
                "keep only those records"
            )
        if "answer" in record:
            raise InputError("frozen evaluation resolves answer from the dataset; omit supplied answer")
        level = normalize_level(record.get("level", self.level))
        domain = normalize_domain(record.get("domain", self.domain))
        if (level, domain) != (self.level, self.domain):
            raise InputError("level/domain does not match the frozen configuration")
        problem, answer = self._rows[index]
        if "problem" in record and record["problem"] != problem:
            raise InputError("problem does not match the frozen row")
        if "dataset_sha256" in record and record["dataset_sha256"] != self.record["parquet_sha256"]:
            raise InputError("dataset_sha256 does not match the frozen split")
        draws = len(record["responses"])
        if preflight.draws is None:
            preflight.draws = draws
        elif draws != preflight.draws:
            # 0.4.0's text, then both numbers (the contract's text stays a prefix).
            raise InputError(
                "frozen evaluation requires the same number of draws per prompt; retain failed draws"
                f" (expected {preflight.draws}, as in the first prompt; found {draws})"
            )
        preflight.supplied_ids.add(rid)
        return self.level, self.domain, {"problem": problem, "answer": answer}

    def finish(self, preflight: Any) -> None:
        if preflight.run is None:
            raise InputError("frozen evaluation requires run metadata (model, generation, prompt_condition)")
        if preflight.run.get("prompt_condition") != DEFAULT_CONDITION:
            raise InputError(
                f"frozen evaluation requires {DEFAULT_CONDITION}; use custom mode for changed conditions"
            )
        expected = len(self.expected_ids) if self.limit is None else min(self.limit, len(self.expected_ids))
        missing = expected - len(preflight.supplied_ids)
        if preflight.prompt_ids is not None:  # complete = every listed id (checked before)
            missing = len(preflight.prompt_ids) - len(preflight.supplied_ids)
        elif missing and self.limit is not None and not self.allow_partial:
            raise InputError(
                f"incomplete limited selection: missing {missing} of the first {counted(expected, 'prompt')}; "
                "explicitly allow_partial to evaluate a subset"
            )
        if missing and not self.allow_partial:
            raise InputError(
                f"incomplete frozen split: missing {missing} of {len(self.expected_ids)} prompts; "
                "explicitly allow_partial to evaluate a subset"
            )

    def dataset_block(self, preflight: Any) -> dict[str, Any]:
        supplied = preflight.supplied_ids
        selected = [ident for ident in self.expected_ids if ident in supplied]
        missing = [ident for ident in self.expected_ids if ident not in supplied]
        block: dict[str, Any] = {
            "kind": "frozen",
            "references_authenticated": True,
            "registry": SCHEMA,
            "split_record": self.record,
            "manifest_sha256": self.manifest_sha256,
            "selected_prompt_ids": selected,
            "missing_prompt_ids": missing,
            "complete": not missing,
            "selected_prompts": preflight.count,
            "expected_prompts": len(self.expected_ids),
            "allow_partial": self.allow_partial,
            "draws_per_prompt": preflight.draws,
        }
        if self.config.endswith("_unique_answer"):
            block["protocol_notes"] = [UNIQUE_ANSWER_NOTE]
        if self.limit is not None:  # only then, so an unlimited receipt keeps 0.4.0's fields
            block["limit"] = self.limit
        return block


def open_frozen(
    root: PathLike,
    config: str,
    split: str,
    allow_partial: bool,
    registry: RegistryLike = None,
    limit: int | None = None,
) -> FrozenSplit:
    """Load and verify a frozen split for evaluation (registry check, hash, row count)."""
    return FrozenSplit(config, split, load(root, config, split, True, registry), allow_partial, limit)
