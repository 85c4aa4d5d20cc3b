"""Sending from several processes: the client's per-request CPU is the ceiling of one event loop.

Each shard process runs the same event loop (``_client.send_all``) over every ``processes``-th
request and sends the draws back over a queue; only this (parent) process writes the ledger, so
durability and ordering are exactly those of one process. Shards ignore Ctrl-C (the parent stops
them) and exit on their own when the parent is killed.

Two things keep the shards' overhead small (``docs/generate.md``, throughput): finished requests
travel in batches of plain tuples, one queue message per ``TICK_SECONDS`` or ``BATCH_REQUESTS``
requests instead of one pickled object per request; and shards are forked from a fork server that
imported the ``openai`` client once (about a CPU-second per import), where the platform has one.
"""

from __future__ import annotations

import multiprocessing
import os
import queue as queue_module
import signal
from dataclasses import fields, replace
from typing import Any

from modebench.generate._client import TICK_SECONDS, EndpointError, OnResult, Tick, send_all
from modebench.generate._ledger import Draw
from modebench.generate._plan import Prompt, Request
from modebench.generate._settings import GenerationSettings

__all__ = ["send_sharded"]

#: A shard sends its finished requests once this many wait (or every ``TICK_SECONDS``).
BATCH_REQUESTS = 64
#: Imported once by the fork server, so that shards forked from it start without importing them
#: (``__main__`` is multiprocessing's own default: the main script is not re-run in each shard).
PRELOAD = ["__main__", "modebench.generate._shards", "openai", "aiohttp"]
_FIELDS = tuple(field.name for field in fields(Draw))


def _context() -> Any:
    """A fork server where the platform has one (a clean process: no inherited event loop,
    threads, sockets or SQLite handle), else ``spawn``."""
    if "forkserver" in multiprocessing.get_all_start_methods():
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(PRELOAD)
        return context
    return multiprocessing.get_context("spawn")


def send_sharded(
    settings: GenerationSettings,
    api_key: str,
    prompts: list[Prompt],
    requests: list[Request],
    on_result: OnResult,
    processes: int,
    tick: Tick | None = None,
) -> None:
    """Like ``send_all``, spread over ``processes`` processes (concurrency split between them)."""
    context = _context()
    results: Any = context.Queue()
    per_shard = max(1, settings.concurrency // processes)
    shards = []
    for index in range(processes):
        mine = requests[index::processes]
        if not mine:
            continue
        used = sorted({r.prompt for r in mine})
        position = {old: new for new, old in enumerate(used)}
        # Only id and messages travel: the output record stays with the parent.
        shard_prompts = [Prompt(prompts[i].id, prompts[i].messages, {}) for i in used]
        shard_requests = [Request(position[r.prompt], r.start, r.count, r.seed) for r in mine]
        shards.append((shard_prompts, shard_requests))
    workers = [
        context.Process(
            target=_shard,
            args=(settings, per_shard, api_key, shard_prompts, shard_requests, results, os.getpid()),
            daemon=True,
        )
        for shard_prompts, shard_requests in shards
    ]
    for worker in workers:
        worker.start()
    running = len(workers)
    try:
        while running:
            try:
                kind, value = results.get(timeout=TICK_SECONDS)
            except queue_module.Empty:
                if tick is not None:
                    tick()
                crashed = [w.exitcode for w in workers if w.exitcode not in (None, 0)]
                if crashed:
                    raise RuntimeError(f"a generation shard process exited with code {crashed[0]}") from None
                continue
            if kind == "draws":
                for request in value:
                    on_result([Draw(*row) for row in request])
            elif kind == "error":
                raise EndpointError(value)
            else:
                running -= 1
    finally:
        for worker in workers:
            if worker.is_alive():
                worker.terminate()
            worker.join()


def _shard(
    settings: GenerationSettings,
    concurrency: int,
    api_key: str,
    prompts: list[Prompt],
    requests: list[Request],
    results: Any,
    parent: int,
) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)

    batch: list[list[tuple[Any, ...]]] = []

    def send() -> None:
        if batch:
            results.put(("draws", batch.copy()))
            batch.clear()

    def on_result(draws: list[Draw]) -> None:
        batch.append([tuple(getattr(draw, name) for name in _FIELDS) for draw in draws])
        if len(batch) >= BATCH_REQUESTS:
            send()

    try:
        send_all(
            replace(settings, concurrency=concurrency, processes=1),
            api_key,
            prompts,
            requests,
            on_result,
            parent=parent,
            tick=send,  # a finished request waits at most TICK_SECONDS for its batch
        )
    except EndpointError as exc:
        send()  # draws that finished before the refusal are kept, as in one process
        results.put(("error", str(exc)))
        return
    send()
    results.put(("done", None))
