"""``modebench.rl.distributed.gather_rows`` in a real two-process gloo group: rank order, the
offset of each rank's rows, and a failing rank that makes every rank raise instead of leaving
the others waiting in the collective forever."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

if os.environ.get("CI") == "true":
    import torch  # noqa: F401  # in CI a missing rl package is a failure, never a skip
else:
    pytest.importorskip(
        "torch", reason="needs the rl extra: pip install torch==2.13.0 && pip install -e '.[rl]'"
    )

import torch.distributed as dist
import torch.multiprocessing as mp

from modebench.rl.distributed import RankFailed, gather_rows, world


def _rank(rank: int, port: int, out: str) -> None:
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=2)
    try:
        lines = [f"world {world()}"]
        rows, offset = gather_rows([f"r{rank}-{i}" for i in range(rank + 2)])
        lines.append(f"rows {rows} offset {offset}")
        try:
            gather_rows(["x"], ValueError("bad row 3") if rank == 1 else None)
        except RankFailed as exc:
            lines.append(f"RankFailed {exc}")
        except ValueError as exc:
            lines.append(f"ValueError {exc}")
        rows, offset = gather_rows(["after"])  # the group is still usable afterwards
        lines.append(f"rows {rows} offset {offset}")
        Path(out, f"rank-{rank}.txt").write_text("\n".join(lines), encoding="utf-8")
    finally:
        dist.destroy_process_group()


@pytest.mark.slow  # two spawned processes importing torch
def test_gather_rows_across_two_gloo_ranks(tmp_path: Path):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    mp.spawn(_rank, args=(port, str(tmp_path)), nprocs=2, join=True)
    zero = (tmp_path / "rank-0.txt").read_text().splitlines()
    one = (tmp_path / "rank-1.txt").read_text().splitlines()
    assert zero[0] == "world (0, 2)" and one[0] == "world (1, 2)"
    assert zero[1] == "rows ['r0-0', 'r0-1', 'r1-0', 'r1-1', 'r1-2'] offset 0"
    assert one[1] == "rows ['r0-0', 'r0-1', 'r1-0', 'r1-1', 'r1-2'] offset 2"
    assert zero[2] == "RankFailed rank 1 could not grade its share of the batch: ValueError: bad row 3"
    assert one[2] == "ValueError bad row 3"
    assert zero[3] == "rows ['after', 'after'] offset 0" and one[3] == "rows ['after', 'after'] offset 1"
