"""The sending loop: bounded async concurrency over the official ``openai`` client.

Retries with backoff on 429/5xx/connection errors and ``retry-after`` are the client's own
(``max_retries``); a request that still fails becomes failed draws with their error, except for
errors that would fail every request alike (authentication, permission, unknown model), which
stop the run so nothing is recorded for draws that were never really attempted.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from modebench.generate._ledger import Draw
from modebench.generate._plan import Prompt, Request, chatml_prompt
from modebench.generate._settings import GenerationSettings
from modebench.validation import InputError

__all__ = ["EndpointError", "Stats", "send_all"]

#: Statuses that say the endpoint refuses this whole run, not one draw.
FATAL_STATUSES = (401, 403, 404)


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


Sink = Callable[[list[Draw]], None]


def send_all(
    settings: GenerationSettings,
    api_key: str,
    prompts: list[Prompt],
    requests: list[Request],
    sink: Sink,
    stats: Stats,
    progress: Callable[[Stats], None] | None = None,
) -> None:
    """Send ``requests`` with at most ``settings.concurrency`` in flight; ``sink`` gets each result."""
    asyncio.run(_send_all(settings, api_key, prompts, requests, sink, stats, progress))


async def _send_all(
    settings: GenerationSettings,
    api_key: str,
    prompts: list[Prompt],
    requests: list[Request],
    sink: Sink,
    stats: Stats,
    progress: Callable[[Stats], None] | None,
) -> None:
    import openai

    client = openai.AsyncOpenAI(
        base_url=settings.base_url,
        api_key=api_key,
        max_retries=settings.max_retries,
        timeout=settings.timeout,
    )
    pending = iter(requests)  # shared by the workers: each takes the next request in plan order

    async def worker() -> None:
        for request in pending:
            draws = await _send(client, settings, prompts[request.prompt], request)
            sink(draws)
            stats.requests += 1
            stats.done += len(draws)
            stats.failed += sum(not d.ok for d in draws)
            stats.retries += draws[0].retries or 0
            stats.completion_tokens += sum(d.completion_tokens or 0 for d in draws)
            if progress is not None:
                progress(stats)

    async with client:
        workers = [asyncio.ensure_future(worker()) for _ in range(min(settings.concurrency, len(requests)))]
        try:
            await asyncio.gather(*workers)
        finally:
            for task in workers:
                task.cancel()
            await asyncio.gather(*workers, return_exceptions=True)


async def _send(client: Any, settings: GenerationSettings, prompt: Prompt, request: Request) -> list[Draw]:
    import openai

    arguments: dict[str, Any] = {"model": settings.model, **settings.sampling()}
    if request.count > 1:
        arguments["n"] = request.count
    if request.seed is not None:
        arguments["seed"] = request.seed
    try:
        if settings.api == "chat":
            raw = await client.chat.completions.with_raw_response.create(
                messages=prompt.messages, **arguments
            )
        else:
            raw = await client.completions.with_raw_response.create(
                prompt=chatml_prompt(prompt.messages), **arguments
            )
        response = raw.parse()
    except openai.APIStatusError as exc:
        if exc.status_code in FATAL_STATUSES:
            raise EndpointError(
                f"endpoint refused the request ({exc.status_code}): {_message(exc)}"
            ) from None
        return _failed(prompt, request, f"HTTP {exc.status_code}: {_message(exc)}")
    except openai.OpenAIError as exc:  # connection errors, timeouts, unparseable replies
        return _failed(prompt, request, f"{type(exc).__name__}: {_message(exc)}")
    return _draws(prompt, request, response, raw.retries_taken, settings.api)


def _message(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text[:500] if text else type(exc).__name__


def _failed(prompt: Prompt, request: Request, error: str) -> list[Draw]:
    return [
        Draw(prompt.id, draw, request.seed, False, "", error=error)
        for draw in range(request.start, request.start + request.count)
    ]


def _draws(prompt: Prompt, request: Request, response: Any, retries: int, api: str) -> list[Draw]:
    choices = sorted(response.choices or [], key=lambda choice: choice.index)
    usage = response.usage
    model = getattr(response, "model", None)
    fingerprint = getattr(response, "system_fingerprint", None)
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
        text = (choice.message.content if api == "chat" else choice.text) or ""
        first = offset == 0 and usage is not None
        draws.append(
            Draw(
                prompt.id,
                draw,
                request.seed,
                True,
                text,
                finish_reason=choice.finish_reason,
                prompt_tokens=usage.prompt_tokens if first else None,
                completion_tokens=usage.completion_tokens if first else None,
                model=model,
                fingerprint=fingerprint,
                retries=retries,
            )
        )
    return draws
