"""What a generation run sends: the endpoint, the sampling settings and the client limits.

Everything here is part of the run's identity (``docs/generate.md``): a draw ledger written
under other settings is never resumed, and ``run.json`` records these values as sent.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from modebench.prompts import CONDITIONS, DEFAULT_CONDITION
from modebench.validation import InputError

__all__ = ["Api", "GenerationSettings"]

Api = Literal["chat", "completions"]

#: Largest response count per prompt the evaluator accepts (``docs/generate.md``).
MAX_DRAWS = 4096


@dataclass(frozen=True)
class GenerationSettings:
    """One generation run: ``k`` independent draws per prompt from ``model`` at ``base_url``.

    ``seed`` is the run seed: each draw then gets its own seed derived from (run seed, prompt id,
    draw index); ``None`` sends no seed. ``choices_per_request`` > 1 asks for several choices in
    one request (``n``) and is only right where the server samples them independently.
    """

    model: str
    base_url: str
    k: int
    api: Api = "chat"
    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    choices_per_request: int = 1
    prompt_condition: str = DEFAULT_CONDITION
    model_revision: str | None = None
    concurrency: int = 16
    #: Processes sending requests (the concurrency is split between them); not part of identity.
    processes: int = 1
    timeout: float = 600.0
    max_retries: int = 5
    api_key_env: str = "OPENAI_API_KEY"

    def __post_init__(self) -> None:
        for name in ("model", "base_url", "api_key_env"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value.strip():
                raise InputError(f"{name} must be a nonempty string")
        if self.model_revision is not None and not self.model_revision.strip():
            raise InputError("model_revision must be a nonempty string")
        if self.api not in ("chat", "completions"):
            raise InputError("api must be 'chat' or 'completions'")
        _positive(self.k, "k", MAX_DRAWS)
        _positive(self.concurrency, "concurrency", 4096)
        _positive(self.processes, "processes", 64)
        if self.processes > self.concurrency:
            raise InputError("processes must not exceed concurrency")
        _positive(self.choices_per_request, "choices_per_request", MAX_DRAWS)
        if self.choices_per_request > self.k:
            raise InputError("choices_per_request must not exceed k")
        if self.max_tokens is not None:
            _positive(self.max_tokens, "max_tokens", None)
        if (
            isinstance(self.max_retries, bool)
            or not isinstance(self.max_retries, int)
            or self.max_retries < 0
        ):
            raise InputError("max_retries must be a nonnegative integer")
        if self.seed is not None and (isinstance(self.seed, bool) or not isinstance(self.seed, int)):
            raise InputError("seed must be an integer")
        _finite(self.timeout, "timeout", positive=True)
        if self.temperature is not None:
            _finite(self.temperature, "temperature", positive=False)
        if self.top_p is not None:
            _finite(self.top_p, "top_p", positive=True)
            if self.top_p > 1:
                raise InputError("top_p must be at most 1")
        if self.prompt_condition not in CONDITIONS:
            raise InputError("prompt_condition is not a supported prompt condition")

    def sampling(self) -> dict[str, object]:
        """The sampling parameters sent with every request (unset ones are left to the server)."""
        values: dict[str, object] = {
            "temperature": self.temperature,
            "top_p": self.top_p,
            "max_tokens": self.max_tokens,
        }
        return {name: value for name, value in values.items() if value is not None}


def _positive(value: object, name: str, limit: int | None) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise InputError(f"{name} must be a positive integer")
    if limit is not None and value > limit:
        raise InputError(f"{name} must be at most {limit}")


def _finite(value: object, name: str, *, positive: bool) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InputError(f"{name} must be a finite number")
    if value < 0 or (positive and value == 0):
        raise InputError(f"{name} must be {'positive' if positive else 'nonnegative'}")
