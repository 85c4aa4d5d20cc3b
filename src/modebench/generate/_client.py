"""The sending loop: bounded async concurrency over the official ``openai`` client.

Retries with backoff on 429/5xx/connection errors and ``retry-after`` are the client's own
(``max_retries``); a request that still fails becomes failed draws with their error, except for
errors that would fail every request alike (authentication, permission, unknown model), which
stop the run so nothing is recorded for draws that were never really attempted.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import json
import multiprocessing
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

from modebench.generate._ledger import Draw
from modebench.generate._plan import Prompt, Request, chatml_prompt
from modebench.generate._settings import GenerationSettings
from modebench.validation import InputError

__all__ = ["TICK_SECONDS", "EndpointError", "OnResult", "Stats", "Tick", "send_all"]

#: Statuses that say the endpoint refuses this whole run, not one draw.
FATAL_STATUSES = (401, 403, 404)
#: The client's telemetry headers (its platform and runtime), left out through its own
#: ``default_headers`` option: every header is normalised, merged, validated and copied several
#: times per request on its way through the client, so these seven cost about a tenth of the
#: client's per-request work (docs/generate.md); some OpenAI-compatible gateways even refuse
#: them. The retry-count and read-timeout headers stay.
TELEMETRY_HEADERS = (
    "X-Stainless-Lang",
    "X-Stainless-Package-Version",
    "X-Stainless-OS",
    "X-Stainless-Arch",
    "X-Stainless-Runtime",
    "X-Stainless-Runtime-Version",
    "X-Stainless-Async",
)


class EndpointError(InputError):
    """The endpoint refused the run (authentication, permission, unknown model)."""


@dataclass
class Stats:
    """Live counters of a run, read by the progress display."""

    total: int
    done: int = 0
    failed: int = 0
    retries: int = 0
    completion_tokens: int = 0
    requests: int = 0
    started: float = field(default_factory=time.monotonic)

    def event(self, phase: str) -> dict[str, Any]:
        elapsed = time.monotonic() - self.started
        return {
            "phase": phase,
            "draws": self.done,
            "total_draws": self.total,
            "failed_draws": self.failed,
            "retries": self.retries,
            "completion_tokens": self.completion_tokens,
            "elapsed_seconds": round(elapsed, 2),
            "draws_per_second": round(self.done / elapsed, 1) if elapsed > 0 else 0.0,
            "tokens_per_second": round(self.completion_tokens / elapsed, 1) if elapsed > 0 else 0.0,
        }

    def add(self, draws: list[Draw]) -> None:
        self.requests += 1
        self.done += len(draws)
        self.failed += sum(not d.ok for d in draws)
        self.retries += draws[0].retries or 0
        self.completion_tokens += sum(d.completion_tokens or 0 for d in draws)


OnResult = Callable[[list[Draw]], None]
Tick = Callable[[], None]
#: How often ``tick`` is called while requests are in flight.
TICK_SECONDS = 0.05


def send_all(
    settings: GenerationSettings,
    api_key: str,
    prompts: list[Prompt],
    requests: list[Request],
    on_result: OnResult,
    *,
    parent: int | None = None,
    tick: Tick | None = None,
) -> None:
    """Send ``requests`` with at most ``settings.concurrency`` in flight; ``on_result`` gets the
    draws of each request as it finishes, ``tick`` is called every ``TICK_SECONDS`` meanwhile.
    With ``parent``, exit when that process is gone."""
    asyncio.run(_send_all(settings, api_key, prompts, requests, on_result, parent, tick))


async def _send_all(
    settings: GenerationSettings,
    api_key: str,
    prompts: list[Prompt],
    requests: list[Request],
    on_result: OnResult,
    parent: int | None,
    tick: Tick | None,
) -> None:
    client = _client(settings, api_key)
    response_type = _response_type()
    # The endpoint's absolute URL, joined once: a relative path is parsed and joined to the base
    # URL again on every request (the client's base URL always ends with a slash).
    url = str(client.base_url) + ("chat/completions" if settings.api == "chat" else "completions")
    pending = iter(requests)  # shared by the workers: each takes the next request in plan order

    async def worker() -> None:
        for request in pending:
            on_result(await _send(client, response_type, url, settings, prompts[request.prompt], request))

    async with client:
        workers = [asyncio.ensure_future(worker()) for _ in range(min(settings.concurrency, len(requests)))]
        helpers = [asyncio.ensure_future(_watch(parent))] if parent is not None else []
        if tick is not None:
            helpers.append(asyncio.ensure_future(_tick(tick)))
        try:
            await asyncio.gather(*workers)
        finally:
            for task in [*workers, *helpers]:
                task.cancel()
            await asyncio.gather(*workers, return_exceptions=True)


async def _tick(tick: Tick) -> None:
    """Lets the ledger commit a waiting group while no request finishes (a slow server)."""
    while True:
        await asyncio.sleep(TICK_SECONDS)
        tick()


async def _watch(parent: int) -> None:
    """A shard process outlives a killed parent only by half a second (nothing would read it).
    A shard forked by a fork server is that server's child, so the parent that started it is
    watched through multiprocessing's handle on it where there is one."""
    started_by = multiprocessing.parent_process()
    while True:
        await asyncio.sleep(0.5)
        if not started_by.is_alive() if started_by is not None else os.getppid() != parent:
            os._exit(1)


def _client(settings: GenerationSettings, api_key: str) -> Any:
    """The official async client, one per run, on aiohttp when installed (the client's faster
    transport); its connection pool holds one kept-alive connection per request in flight (the
    client's default keeps 100 alive, so beyond that concurrency every request would reconnect)."""
    import openai  # noqa: PLC0415 - optional extra: generate (openai)

    size = settings.concurrency
    limits = _http_module().Limits(max_connections=size, max_keepalive_connections=size)
    if importlib.util.find_spec("aiohttp") is not None and hasattr(openai, "DefaultAioHttpClient"):
        http_client = openai.DefaultAioHttpClient(timeout=settings.timeout, limits=limits)
    else:
        http_client = openai.DefaultAsyncHttpxClient(timeout=settings.timeout, limits=limits)
    return openai.AsyncOpenAI(
        base_url=settings.base_url,
        api_key=api_key,
        max_retries=settings.max_retries,
        timeout=settings.timeout,
        http_client=http_client,
        # ``Omit`` removes a default header (the client's own Organization/Project headers use it);
        # the option is typed as strings only.
        default_headers=cast(dict[str, str], {name: openai.Omit() for name in TELEMETRY_HEADERS}),
    )


def _http_module() -> Any:
    """The client's own HTTP library (``httpx`` or its successor ``httpx2``)."""
    import openai  # noqa: PLC0415 - optional extra: generate (openai)

    for base in openai.DefaultAsyncHttpxClient.__mro__:
        if base.__name__ == "AsyncClient":
            return importlib.import_module(base.__module__.split(".")[0])
    raise ImportError("the openai client's HTTP library was not recognised")


def _response_type() -> type:
    """The HTTP response class of the client's HTTP library."""
    return cast(type, _http_module().Response)


async def _send(
    client: Any, response_type: type, url: str, settings: GenerationSettings, prompt: Prompt, request: Request
) -> list[Draw]:
    import openai  # noqa: PLC0415 - optional extra: generate (openai)

    body: dict[str, Any] = {"model": settings.model, **settings.sampling()}
    if settings.api == "chat":
        body["messages"] = prompt.messages
    else:
        body["prompt"] = chatml_prompt(prompt.messages)
    if request.count > 1:
        body["n"] = request.count
    if request.seed is not None:
        body["seed"] = request.seed
    try:
        # The client's low-level post: same retries, backoff, retry-after and timeout as
        # ``chat.completions.create``, without re-walking the typed parameters on every call
        # (half the client's CPU per request at high concurrency; docs/generate.md).
        raw = await client.post(url, body=body, cast_to=response_type)
        reply = json.loads(raw.content)
    except openai.APIStatusError as exc:
        if exc.status_code in FATAL_STATUSES:
            raise EndpointError(
                f"endpoint refused the request ({exc.status_code}): {_message(exc)}"
            ) from None
        return _failed(prompt, request, f"HTTP {exc.status_code}: {_message(exc)}")
    except openai.OpenAIError as exc:  # connection errors, timeouts
        return _failed(prompt, request, f"{type(exc).__name__}: {_message(exc)}")
    except ValueError as exc:  # a 200 whose body is not JSON
        return _failed(prompt, request, f"unreadable reply: {_message(exc)}")
    retries = int(raw.request.headers.get("x-stainless-retry-count", "0"))
    try:
        return _draws(prompt, request, reply, retries, settings.api)
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        return _failed(prompt, request, f"reply does not follow the completions format: {_message(exc)}")


def _message(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text[:500] if text else type(exc).__name__


def _failed(prompt: Prompt, request: Request, error: str) -> list[Draw]:
    return [
        Draw(prompt.id, draw, request.seed, False, "", error=error)
        for draw in range(request.start, request.start + request.count)
    ]


def _draws(prompt: Prompt, request: Request, reply: dict[str, Any], retries: int, api: str) -> list[Draw]:
    choices = sorted(reply["choices"] or [], key=lambda choice: choice["index"])
    usage = reply.get("usage") or {}
    model, fingerprint = reply.get("model"), reply.get("system_fingerprint")
    draws = []
    for offset in range(request.count):
        draw = request.start + offset
        if offset >= len(choices):
            error = f"server returned {len(choices)} of {request.count} choices"
            draws.append(Draw(prompt.id, draw, request.seed, False, "", retries=retries, error=error))
            continue
        choice = choices[offset]
        # A chat reply without content (refusal, tool call, content filter) is an empty response:
        # the model produced no answer text, which grades as what it is.
        text = (choice["message"].get("content") if api == "chat" else choice.get("text")) or ""
        if not isinstance(text, str):
            raise TypeError("choice text is not a string")
        first = offset == 0
        draws.append(
            Draw(
                prompt.id,
                draw,
                request.seed,
                True,
                text,
                finish_reason=_optional(choice.get("finish_reason"), str),
                prompt_tokens=_optional(usage.get("prompt_tokens"), int) if first else None,
                completion_tokens=_optional(usage.get("completion_tokens"), int) if first else None,
                model=_optional(model, str),
                fingerprint=_optional(fingerprint, str),
                retries=retries,
            )
        )
    return draws


def _optional(value: Any, kind: type) -> Any:
    return value if isinstance(value, kind) and not isinstance(value, bool) else None
