"""A small OpenAI-compatible HTTP server of the tests' own (and of ``ops/benchmarks/benchmark_generate.py``).

Runs in its own process (``python -m tests.generate.openai_server CONFIG_JSON``), prints its port,
and serves ``POST /v1/chat/completions`` and ``POST /v1/completions`` on 127.0.0.1 over HTTP/1.1
keep-alive with the real wire format: ``n`` choices, ``seed``, ``max_tokens`` (finish_reason
``length``), usage, ``model`` and ``system_fingerprint``. Faults are injected by configuration:

- ``flaky``: ``{"every": M, "failures": F}`` — bodies whose hash is 0 mod M get F error replies
  (429 then 500 alternating, with ``retry-after``) before succeeding;
- ``drop``: ``{"every": M, "times": T}`` — such bodies see T dropped connections first;
- ``always_fail``: a marker; a prompt containing it always gets 500;
- ``slow``: ``{"marker": S, "seconds": X}``; ``delay``: seconds before every reply;
- ``hold``: ``{"after": N, "gate": PATH}`` — after N replies, every further request waits until the
  file PATH exists (a test holds the client mid-run at a point it controls, then opens the gate);
- ``answers``: texts to answer with (picked from the seed), else a text naming seed and choice.

Every request is logged to ``log`` (one JSON line: path, retry count header, body, status).
Replies are a pure function of the request body (when a seed is sent), so reruns are reproducible.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import sys
import uuid
from typing import Any

RETRY_AFTER = "0.01"


class Server:
    def __init__(self, config: dict[str, Any]) -> None:
        self.config = config
        self.attempts: dict[str, int] = {}
        self.replies = 0
        self.log = open(config["log"], "a", buffering=1) if config.get("log") else None  # noqa: SIM115

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                method, path, _ = lines[0].split(" ", 2)
                headers = {}
                for line in lines[1:]:
                    if ":" in line:
                        name, value = line.split(":", 1)
                        headers[name.strip().lower()] = value.strip()
                body = await reader.readexactly(int(headers.get("content-length", "0")))
                reply = await self.respond(method, path, headers, body)
                if reply is None:  # injected dropped connection
                    writer.transport.abort()
                    return
                writer.write(reply)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
            pass
        finally:
            writer.close()

    async def respond(self, method: str, path: str, headers: dict[str, str], body: bytes) -> bytes | None:
        config = self.config
        key = hashlib.sha256(body).hexdigest()
        attempt = self.attempts.get(key, 0)
        self.attempts[key] = attempt + 1
        status, payload, extra = 200, None, {}
        request: dict[str, Any] = json.loads(body) if body else {}
        text = self.prompt_text(request)
        if config.get("delay"):
            await asyncio.sleep(config["delay"])
        hold = config.get("hold")
        if hold:
            self.replies += 1
            while self.replies > hold["after"] and not os.path.exists(hold["gate"]):
                await asyncio.sleep(0.02)
        slow = config.get("slow")
        if slow and slow["marker"] in text:
            await asyncio.sleep(slow["seconds"])
        drop, flaky = config.get("drop"), config.get("flaky")
        bucket = int(key[:8], 16)
        if method != "POST" or path not in ("/v1/chat/completions", "/v1/completions"):
            status, payload = 404, {"error": {"message": f"no route {method} {path}", "type": "not_found"}}
        elif request.get("model") != config.get("model", "test-model"):
            status, payload = 404, {"error": {"message": "model not found", "type": "not_found"}}
        elif drop and bucket % drop["every"] == 0 and attempt < drop["times"]:
            self.record(path, headers, request, "dropped")
            return None
        elif config.get("always_fail") and config["always_fail"] in text:
            status, extra = 500, {"retry-after": RETRY_AFTER}
            payload = {"error": {"message": "injected permanent failure", "type": "server_error"}}
        elif flaky and bucket % flaky["every"] == 0 and attempt < flaky["failures"]:
            status = 429 if attempt % 2 == 0 else 500
            extra = {"retry-after": RETRY_AFTER}
            payload = {"error": {"message": f"injected {status}", "type": "transient"}}
        else:
            payload = self.completion(path, request, text)
        self.record(path, headers, request, status)
        data = json.dumps(payload).encode()
        head = [f"HTTP/1.1 {status} {'OK' if status == 200 else 'Error'}", "content-type: application/json"]
        head += [f"{name}: {value}" for name, value in extra.items()]
        head.append(f"content-length: {len(data)}")
        return ("\r\n".join(head) + "\r\n\r\n").encode() + data

    def record(self, path: str, headers: dict[str, str], request: dict[str, Any], status: object) -> None:
        if self.log is not None:
            entry = {"path": path, "retry": headers.get("x-stainless-retry-count"), "status": status}
            self.log.write(json.dumps({**entry, "body": request}) + "\n")

    @staticmethod
    def prompt_text(request: dict[str, Any]) -> str:
        if "messages" in request:
            return "\n".join(str(m.get("content", "")) for m in request["messages"])
        return str(request.get("prompt", ""))

    def completion(self, path: str, request: dict[str, Any], text: str) -> dict[str, Any]:
        seed, chat = request.get("seed"), path.endswith("/chat/completions")
        answers = self.config.get("answers")
        choices = []
        used = 0
        for index in range(int(request.get("n") or 1)):
            if seed is None:
                pick = uuid.uuid4().hex
            else:
                pick = hashlib.sha256(f"{seed}|{index}|{text}".encode()).hexdigest()
            reply = (
                answers[int(pick[:8], 16) % len(answers)]
                if answers
                else f"seed {seed} choice {index} {pick[:16]}"
            )
            words, finish = reply.split(" "), "stop"
            limit = request.get("max_tokens")
            if limit is not None and len(words) > limit:
                words, finish = words[:limit], "length"
            reply = " ".join(words)
            used += len(words)
            if chat:
                choice = {
                    "index": index,
                    "message": {"role": "assistant", "content": reply},
                    "finish_reason": finish,
                }
            else:
                choice = {"index": index, "text": reply, "finish_reason": finish, "logprobs": None}
            choices.append(choice)
        prompt_tokens = len(text.split())
        return {
            "id": "cmpl-" + uuid.uuid4().hex[:12],
            "object": "chat.completion" if chat else "text_completion",
            "created": 1767225600,
            "model": self.config.get("reported_model", self.config.get("model", "test-model")),
            "system_fingerprint": self.config.get("fingerprint"),
            "choices": choices,
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": used,
                "total_tokens": prompt_tokens + used,
            },
        }


async def serve(config: dict[str, Any]) -> None:
    server = Server(config)
    listener = await asyncio.start_server(server.handle, "127.0.0.1", config.get("port", 0), backlog=1024)
    port = listener.sockets[0].getsockname()[1]
    sys.stdout.write(f"{port}\n")
    sys.stdout.flush()
    async with listener:
        await listener.serve_forever()


if __name__ == "__main__":
    asyncio.run(serve(json.loads(sys.argv[1])))
