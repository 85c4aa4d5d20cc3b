"""The recorder's and the bank's state inside a trainer checkpoint directory, and its restore.

Two files beside the trainer's own (``checkpoint-<N>/``):

``modebench_bank.json``
    the bank, written by its own :meth:`~modebench.rl.protocols.RolloutBank.save` (atomic);
``modebench_state.json``
    written after the bank, atomically: the run identity, the global step, the SHA-256 of the
    bank file and the recorder's :meth:`~modebench.rl.live.RolloutRecorder.state_dict` (seen sets,
    flushed steps). Its presence means the pair is complete; the digest ties the two together.

The run identity is what a resumed run must share with the one that saved: the software
(:func:`modebench.rl._engine.software`: version, contracts, package source hash), the training
prompts (a digest of the dataset's ``prompt_id``, ``level``, ``domain`` and ``answer`` columns)
and the bank's :meth:`~modebench.rl.protocols.RolloutBank.identity`. :func:`restore` refuses a
mismatch with :class:`CheckpointMismatch` naming each differing field, never mixing two runs.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from modebench.rl import _engine
from modebench.rl.bank import read_json_bounded, write_json_atomic
from modebench.rl.live import RolloutRecorder

__all__ = [
    "BANK_FILE",
    "CHECKPOINT_SCHEMA",
    "STATE_FILE",
    "CheckpointMismatch",
    "prompts_digest",
    "restore",
    "run_identity",
    "save",
]

CHECKPOINT_SCHEMA: Final = "modebench-rl-checkpoint-v1"
BANK_FILE: Final = "modebench_bank.json"
STATE_FILE: Final = "modebench_state.json"
_COLUMNS: Final = ("prompt_id", "level", "domain", "answer")


class CheckpointMismatch(ValueError):
    """A checkpoint's modebench state does not belong to this run (or is missing or damaged)."""


def prompts_digest(dataset: Any) -> str | None:
    """SHA-256 of the set of training prompts: each row's ``prompt_id``, ``level``, ``domain`` and
    ``answer`` (the columns ``trainer_rows`` writes), sorted; None when ``dataset`` has none of
    them (a dataset of another shape: the prompts are then not compared on resume)."""
    if dataset is None:
        return None
    names = getattr(dataset, "column_names", None)
    if isinstance(names, list):  # datasets.Dataset: read whole columns, not row by row
        present = [name for name in _COLUMNS if name in names]
        if not present:
            return None
        columns = [dataset[name] for name in present]
        rows = {json.dumps([present, *values], sort_keys=True, default=str) for values in zip(*columns)}
    else:
        try:
            items = [dataset[index] for index in range(len(dataset))]
        except (TypeError, KeyError, IndexError):
            return None
        rows = set()
        for item in items:
            if not isinstance(item, Mapping) or not any(name in item for name in _COLUMNS):
                return None
            present = [name for name in _COLUMNS if name in item]
            rows.add(json.dumps([present, *(item[name] for name in present)], sort_keys=True, default=str))
    digest = hashlib.sha256()
    for row in sorted(rows):
        digest.update(row.encode("utf-8") + b"\n")
    return digest.hexdigest()


def run_identity(recorder: RolloutRecorder, dataset: Any = None) -> dict[str, Any]:
    """What a checkpoint's state must share with this run to be restored into it."""
    return {
        "software": _engine.software(),
        "prompts": prompts_digest(dataset),
        "bank": None if recorder.bank is None else recorder.bank.identity(),
    }


def save(directory: Path, recorder: RolloutRecorder, identity: Mapping[str, Any], global_step: int) -> None:
    """Write the bank (when there is one), then the state file, into ``directory``."""
    directory = Path(directory)
    bank_sha256 = None
    if recorder.bank is not None:
        recorder.bank.save(directory / BANK_FILE)
        bank_sha256 = _file_sha256(directory / BANK_FILE)
    write_json_atomic(
        directory / STATE_FILE,
        {
            "schema": CHECKPOINT_SCHEMA,
            "identity": dict(identity),
            "global_step": global_step,
            "bank_sha256": bank_sha256,
            "recorder": recorder.state_dict(),
        },
    )


def restore(
    directory: Path, recorder: RolloutRecorder, identity: Mapping[str, Any], global_step: int
) -> None:
    """Restore the recorder and the bank saved in ``directory`` at ``global_step``; raises
    :class:`CheckpointMismatch` (and changes nothing) when the state is missing, damaged or
    from another run."""
    directory = Path(directory)
    state = _checked_state(directory, identity, global_step)
    path = directory / STATE_FILE
    bank_path = directory / BANK_FILE
    if recorder.bank is not None:
        if state.get("bank_sha256") is None or not bank_path.is_file():
            raise CheckpointMismatch(f"{directory}: the run has a bank but the checkpoint saved none")
        if _file_sha256(bank_path) != state["bank_sha256"]:
            raise CheckpointMismatch(f"{bank_path} is not the bank saved with {path} (its SHA-256 differs)")
    probe = RolloutRecorder()
    try:
        probe.load_state_dict(state.get("recorder", {}))
    except ValueError as exc:
        raise CheckpointMismatch(f"{path}: {exc}") from None
    if recorder.bank is not None:
        try:
            recorder.bank.load(bank_path)
        except (ValueError, KeyError, TypeError) as exc:
            raise CheckpointMismatch(f"{bank_path}: not a bank this run can load ({exc})") from None
    recorder.load_state_dict(state["recorder"])


def _checked_state(directory: Path, identity: Mapping[str, Any], global_step: int) -> Mapping[str, Any]:
    """The state file of ``directory``, checked against this run's identity and step."""
    path = directory / STATE_FILE
    if not path.is_file():
        raise CheckpointMismatch(
            f"resuming at step {global_step} from {directory}, which has no {STATE_FILE}: it was saved "
            "without ModebenchCallback, or the trainer resumed from another directory (pass "
            "ModebenchCallback(recorder, resume_from=<checkpoint directory>))"
        )
    try:
        state = read_json_bounded(path)
    except ValueError as exc:
        raise CheckpointMismatch(str(exc)) from None
    if not isinstance(state, Mapping) or state.get("schema") != CHECKPOINT_SCHEMA:
        raise CheckpointMismatch(
            f"{path}: not a modebench checkpoint state (schema {CHECKPOINT_SCHEMA} expected)"
        )
    saved = state.get("identity")
    if not isinstance(saved, Mapping):
        raise CheckpointMismatch(f"{path}: no run identity")
    differing = [name for name in sorted(set(saved) | set(identity)) if saved.get(name) != identity.get(name)]
    if differing:
        details = "; ".join(_difference(name, saved.get(name), identity.get(name)) for name in differing)
        raise CheckpointMismatch(f"{path} belongs to another run, refusing to resume from it: {details}")
    if state.get("global_step") != global_step:
        raise CheckpointMismatch(
            f"{path} was saved at step {state.get('global_step')}, but the trainer resumes at step {global_step}"
        )
    return state


def _difference(name: str, saved: Any, live: Any) -> str:
    def short(value: Any) -> str:
        text = json.dumps(value, sort_keys=True, default=str)
        return text if len(text) <= 200 else text[:197] + "..."

    if isinstance(saved, Mapping) and isinstance(live, Mapping):
        keys = [key for key in sorted(set(saved) | set(live)) if saved.get(key) != live.get(key)]
        return "; ".join(
            f"{name}.{key}: saved {short(saved.get(key))}, this run {short(live.get(key))}" for key in keys
        )
    return f"{name}: saved {short(saved)}, this run {short(live)}"


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()
