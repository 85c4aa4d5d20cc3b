"""Cost of one replay call as the bank grows: ReMaxBank's group-per-step schedule next to ModeBank.replay.

Banks of 16k, 160k and 640k entries (16 modes per prompt: 1k, 10k and 40k prompts; each exemplar
32 token ids and a short text, as a countdown answer is) are filled once, then:

* ``remax``: ``ReMaxBank.replay_groups()`` — one whole prompt group (16 exemplars) per call;
  median and p95 over ``--calls`` calls, microseconds.
* ``remax_diagnostics``: ``ReMaxBank.diagnostics()``, the bank metrics the replay trainer logs
  every step; median, microseconds.
* ``modebank``: ``ModeBank.replay(16)`` — the same number of exemplars per call (it rebuilds and
  sorts its whole schedule on every call); median over fewer calls (``--modebank-calls``).
* ``state``: the size of ``ReMaxBank.save``'s file and of ``ModeBank.state_dict()`` as JSON, and
  the Re:Max bank's save and load times.

    python ops/benchmarks/benchmark_replay_schedule.py [--sizes 16000,160000,640000] [--calls 2000] [--output FILE]

The load average is recorded before and after: the figures depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "src"))

from modebench.rl import ModeBank, ReMaxBank  # noqa: E402

MODES = 16
TOKENS = 32


def fill(entries: int, with_modebank: bool) -> tuple[ReMaxBank, ModeBank | None]:
    remax = ReMaxBank(MODES)
    plain = ModeBank(MODES) if with_modebank else None
    prompt = [{"role": "user", "content": "Use 3, 5, 7 to make 26."}]
    for p in range(entries // MODES):
        for m in range(MODES):
            text = f"\\boxed{{{p} + {m} * 7 - 5}}"
            fields = {"level": 1, "domain": "countdown", "answer": {"target": p}, "reference_sha256": f"{p:064x}",
                      "text": text, "status": "correct", "canonical_key": f"expr:{p}:{m}", "prompt": prompt}  # fmt: skip
            remax.offer(f"train/{p}", completion_ids=[(p * 31 + m * 7 + t) % 50_000 for t in range(TOKENS)],
                        truncated=False, **fields)  # fmt: skip
            if plain is not None:
                plain.offer(f"train/{p}", **fields)
        if p % 64 == 63:
            remax.seal()  # one training batch of 64 prompt groups
    remax.seal()
    return remax, plain


def timed(call: Any, times: int) -> list[float]:
    out = []
    for _ in range(times):
        start = time.perf_counter()
        call()
        out.append((time.perf_counter() - start) * 1e6)
    return out


def measure(entries: int, calls: int, modebank_calls: int) -> dict[str, Any]:
    remax, plain = fill(entries, modebank_calls > 0)
    assert len(remax) == entries
    remax_us = timed(remax.replay_groups, calls)
    diagnostics_us = timed(remax.diagnostics, calls)
    result: dict[str, Any] = {
        "entries": entries,
        "prompts": entries // MODES,
        "remax_replay_groups_us": {
            "median": statistics.median(remax_us),
            "p95": statistics.quantiles(remax_us, n=20)[-1],
        },
        "remax_diagnostics_us": {"median": statistics.median(diagnostics_us)},
    }
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "bank.json.gz"
        start = time.perf_counter()
        remax.save(path)
        result["remax_save_s"] = time.perf_counter() - start
        result["remax_state_bytes"] = path.stat().st_size
        start = time.perf_counter()
        ReMaxBank(MODES).load(path)
        result["remax_load_s"] = time.perf_counter() - start
    if plain is not None:
        result["modebank_state_json_bytes"] = len(json.dumps(plain.state_dict(), ensure_ascii=False).encode())
        plain_us = timed(lambda: plain.replay(MODES), modebank_calls)
        result["modebank_replay_us"] = {"median": statistics.median(plain_us), "calls": modebank_calls}
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="16000,160000,640000")
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--modebank-calls", type=int, default=5, help="0 skips ModeBank")
    parser.add_argument("--output", type=Path)
    args = parser.parse_args()
    result: dict[str, Any] = {"loadavg": os.getloadavg(), "sizes": []}
    for size in (int(part) for part in args.sizes.split(",")):
        entry = measure(size, args.calls, args.modebank_calls)
        print(json.dumps(entry), flush=True)
        result["sizes"].append(entry)
    result["loadavg_end"] = os.getloadavg()
    print(json.dumps({"loadavg": result["loadavg"], "loadavg_end": result["loadavg_end"]}))
    if args.output is not None:
        args.output.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
