"""Whole groups across ranks: every rank's graded rows, gathered in rank order.

TRL's ``RepeatSampler`` spreads one prompt's group of completions over the processes of a
multi-GPU run, and each process calls the reward functions on its own share only
(``trl/trainer/grpo_trainer.py``, ``GRPOTrainer._calculate_rewards``: every process calls every
reward function once per generation batch, in the same order, then ``gather`` concatenates the
rewards in rank order and ``process_slice`` takes each process's part back). So the reward
function is a point every rank reaches in lockstep, and the right place for one collective:
:func:`gather_rows` hands each rank every rank's rows, rank 0's first (TRL's own order), plus
the offset of this rank's rows in that list. With one process (or no ``torch.distributed``
process group) it is the identity.

A rank that failed before the collective must still take part in it, or the others would wait
forever: :func:`gather_rows` carries an error message instead of rows, and every rank raises
:class:`RankFailed` (the failing rank re-raises its own exception) after the exchange.
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["RankFailed", "gather_rows", "world"]


class RankFailed(RuntimeError):
    """Another rank could not grade its share of the batch (its message is included)."""


def world() -> tuple[int, int]:
    """``(rank, world size)`` of the initialised ``torch.distributed`` process group, else (0, 1)."""
    # A process group exists only if torch.distributed was imported: never import torch (hundreds
    # of MiB) into a process that has not, such as a reward server or verl's reward workers.
    dist = sys.modules.get("torch.distributed")
    if dist is None or not dist.is_available() or not dist.is_initialized():
        return 0, 1
    return dist.get_rank(), dist.get_world_size()


def gather_rows(rows: list[Any], error: BaseException | None = None) -> tuple[list[Any], int]:
    """Every rank's ``rows`` concatenated in rank order, and the offset of this rank's rows.

    Every rank of the process group must call this the same number of times (the reward
    function does: TRL calls it once per generation batch on every rank). ``error``: this rank
    failed; the exchange still happens, then every rank raises (this one ``error`` itself).
    """
    rank, size = world()
    if size == 1:
        if error is not None:
            raise error
        return rows, 0
    dist = sys.modules["torch.distributed"]
    payload: tuple[str | None, list[Any]] = (
        (None, rows) if error is None else (f"{type(error).__name__}: {error}", [])
    )
    parts: list[tuple[str | None, list[Any]] | None] = [None] * size
    # all_gather_object pickles each rank's payload; with NCCL it travels through the current
    # CUDA device (accelerate sets it), with gloo through CPU tensors.
    dist.all_gather_object(parts, payload)
    if error is not None:
        raise error
    for other, part in enumerate(parts):
        assert part is not None
        if part[0] is not None:
            raise RankFailed(f"rank {other} could not grade its share of the batch: {part[0]}")
    out: list[Any] = []
    offset = 0
    for other, part in enumerate(parts):
        assert part is not None
        if other == rank:
            offset = len(out)
        out.extend(part[1])
    return out, offset
