"""Sampling k responses per task from any OpenAI-compatible endpoint (``docs/generate.md``).

Data flow: a source (frozen split, ``prepare`` request file, custom task file) → prompts →
requests for the draws the ledger lacks → the async client loop → the draw ledger → the
evaluate input, the per-draw sidecar and the run metadata. The ``openai`` client comes from the
optional ``generate`` extra and is imported only when a run starts.
"""

from __future__ import annotations

from modebench.generate._client import EndpointError
from modebench.generate._generate import GENERATE_EXTRA_MESSAGE, GenerationResult, generate_responses
from modebench.generate._output import FAILED_DRAW_RESPONSE, RUN_SCHEMA
from modebench.generate._plan import (
    FrozenSplitSource,
    RequestFileSource,
    Source,
    TaskFileSource,
    draw_seed,
)
from modebench.generate._settings import GenerationSettings

__all__ = [
    "FAILED_DRAW_RESPONSE",
    "GENERATE_EXTRA_MESSAGE",
    "RUN_SCHEMA",
    "EndpointError",
    "FrozenSplitSource",
    "GenerationResult",
    "GenerationSettings",
    "RequestFileSource",
    "Source",
    "TaskFileSource",
    "draw_seed",
    "generate_responses",
]
