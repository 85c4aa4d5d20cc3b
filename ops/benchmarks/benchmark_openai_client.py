"""Where the client's CPU per request goes: the ``openai`` client's own floor against the loopback server.

Runs in turn, each in a fresh process against ``tests/generate/openai_server.py``, ``--requests``
chat requests at concurrency 64 and prints the CPU milliseconds per request of:

- ``aiohttp``: aiohttp alone (the transport under the client), posting the same JSON;
- ``build``: the client building the request only (``FinalRequestOptions`` and ``_build_request``,
  nothing sent);
- ``client``: ``AsyncOpenAI.post`` as ``modebench generate`` sends it (aiohttp transport,
  absolute URL, telemetry headers left out);
- ``client-defaults``: the same with a relative path and the default headers.

It says what no change inside modebench can reach: modebench's sending loop costs the
``client`` figure plus a few percent (``ops/benchmarks/benchmark_generate.py``).

    .venv/bin/python ops/benchmarks/benchmark_openai_client.py [--requests 3000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
VARIANTS = ("aiohttp", "build", "client", "client-defaults")


async def _measure(variant: str, port: int, requests: int) -> float:
    import aiohttp
    import httpx2
    import openai
    from openai._models import FinalRequestOptions

    from modebench.generate import GenerationSettings
    from modebench.generate._client import _client

    base = f"http://127.0.0.1:{port}/v1"
    if variant == "client-defaults":
        limits = httpx2.Limits(max_connections=64, max_keepalive_connections=64)
        client: Any = openai.AsyncOpenAI(
            base_url=base, api_key="x", http_client=openai.DefaultAioHttpClient(limits=limits)
        )
        url = "/chat/completions"
    else:
        client = _client(GenerationSettings(model="bench-model", base_url=base, k=1, concurrency=64), "x")
        url = f"{base}/chat/completions"
    session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=64))
    numbers = iter(range(requests))

    async def worker() -> None:
        for index in numbers:
            body = {
                "model": "bench-model",
                "messages": [{"role": "user", "content": f"q{index}"}],
                "seed": index,
            }
            if variant == "aiohttp":
                headers = {"content-type": "application/json", "authorization": "Bearer x"}
                async with session.post(
                    f"{base}/chat/completions", data=json.dumps(body), headers=headers
                ) as r:
                    json.loads(await r.read())
            elif variant == "build":
                client._build_request(FinalRequestOptions.construct(method="post", url=url, json_data=body))
                await asyncio.sleep(0)
            else:
                json.loads((await client.post(url, body=body, cast_to=httpx2.Response)).content)

    async with client, session:
        started = time.process_time()
        await asyncio.gather(*(worker() for _ in range(64)))
        return (time.process_time() - started) * 1000 / requests


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--requests", type=int, default=3000, help="requests per variant (default 3000)")
    parser.add_argument("--variant", choices=VARIANTS, help=argparse.SUPPRESS)  # one child's share
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.variant:
        print(round(asyncio.run(_measure(args.variant, args.port, args.requests)), 3))
        return 0
    server = subprocess.Popen(
        [sys.executable, "-m", "tests.generate.openai_server", json.dumps({"model": "bench-model"})],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline())
        figures = {}
        for variant in VARIANTS:
            command = [sys.executable, __file__, "--variant", variant, "--port", str(port)]
            out = subprocess.run([*command, "--requests", str(args.requests)], capture_output=True, text=True)
            figures[variant] = float(out.stdout.strip() or "nan")
    finally:
        server.terminate()
        server.wait()
    import os

    print(
        json.dumps(
            {"cpu_ms_per_request": figures, "requests": args.requests, "load_average": os.getloadavg()[0]}
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
