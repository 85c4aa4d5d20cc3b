"""What Inspect's ``inspect_ai`` entry point loads: one task per frozen config, the scorer and
the reducers (names are namespaced by Inspect as ``modebench/<name>``)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from inspect_ai import Epochs, Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessage, ChatMessageSystem, ChatMessageUser
from inspect_ai.scorer import CORRECT, INCORRECT, Score, Scorer, Target, scorer
from inspect_ai.solver import TaskState, generate

from modebench.integrations.inspect._reducers import (
    defined_mean,
    distinct_at_k_reducer,
    pass_at_k_reducer,
    pcmd_reducer,
)

__all__ = ["CONFIGS", "modebench_scorer", "modebench_task"]


def _bundled_configs() -> list[str]:
    from modebench._datasets.sources import bundled_registry_path  # noqa: PLC0415 - deferred: Inspect imports this registry at its own start-up; modebench loads when a task or scorer is made

    registry = json.loads(bundled_registry_path().read_bytes())
    return sorted({str(split["config_name"]) for split in registry["splits"]})


CONFIGS = _bundled_configs()


@scorer(metrics=[defined_mean()])
def modebench_scorer() -> Scorer:
    """Grade the completion through modebench's isolated worker; store status and mode key."""
    from modebench.api import Task as ModebenchTask  # noqa: PLC0415 - deferred: Inspect imports this registry at its own start-up; modebench loads when a task or scorer is made
    from modebench.api import grade  # noqa: PLC0415 - deferred: Inspect imports this registry at its own start-up; modebench loads when a task or scorer is made

    async def score(state: TaskState, target: Target) -> Score:
        meta = state.metadata
        problem = ModebenchTask(str(state.sample_id), meta["level"], meta["domain"], "", meta["answer"])
        # The shared worker serialises requests, so grading is called inline (it never blocks
        # longer than the domain's deadline).
        result = grade(problem, state.output.completion)
        return Score(
            value=CORRECT if result["verified"] else INCORRECT,
            answer=result["graded_text"],
            metadata={
                "status": result["status"],
                "verified": result["verified"],
                "canonical_key": result["canonical_key"],
            },
        )

    return score


def _messages(messages: list[dict[str, str]]) -> list[ChatMessage]:
    made: list[ChatMessage] = []
    for message in messages:
        if message["role"] == "system":
            made.append(ChatMessageSystem(content=message["content"]))
        else:
            made.append(ChatMessageUser(content=message["content"]))
    return made


def modebench_task(config: str, registry: str = "bundled", split: str = "eval", epochs: int = 1) -> Task:
    """The registered prompts of a frozen split as an Inspect task (k draws = ``epochs``)."""
    from modebench.api import load_tasks  # noqa: PLC0415 - deferred: Inspect imports this registry at its own start-up; modebench loads when a task or scorer is made
    from modebench.prompts import make_messages  # noqa: PLC0415 - deferred: Inspect imports this registry at its own start-up; modebench loads when a task or scorer is made

    samples = [
        Sample(
            id=t.id,
            input=_messages(make_messages(t.level, t.domain, {"problem": t.problem})),
            metadata={"level": t.level, "domain": t.domain, "answer": dict(t.answer)},
        )
        for t in load_tasks(config, split, registry=registry)
    ]
    reducers = [pass_at_k_reducer(), distinct_at_k_reducer(), pcmd_reducer()]
    return Task(
        dataset=MemoryDataset(samples, name=config),
        solver=generate(),
        scorer=modebench_scorer(),
        epochs=Epochs(epochs, reducers),
        name=config,
    )


def _register(config: str) -> Callable[..., Any]:
    def make(registry: str = "bundled", split: str = "eval", epochs: int = 1) -> Task:
        return modebench_task(config, registry, split, epochs)

    make.__name__ = config
    return task(name=config)(make)


for _config in CONFIGS:
    globals()[_config] = _register(_config)
