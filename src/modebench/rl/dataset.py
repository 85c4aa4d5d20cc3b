"""A frozen split as a trainer's dataset: the registered prompt plus what the rewards read.

:func:`trainer_rows` gives one row per task of a split (``modebench.api.load_tasks``, the split
``modebench prepare`` reads), in row order:

``prompt``
    the registered chat messages (``modebench.api.make_prompt``; never the answer), the
    conversational format TRL's ``GRPOTrainer`` applies the chat template to;
``prompt_id``, ``level``, ``domain``
    the task's identity (the bank and the metrics key modes by ``prompt_id``);
``answer``
    the reference as canonical JSON text (one string column, whatever the domain's fields).

:func:`generated_rows` gives rows of the same shape for a split the release does not ship (the
bundled release has only ``eval``; training wants ``train``): drawn with the domain's own task
generator exactly as ``modebench suite build`` draws a release's splits
(``modebench.suite.build.generate_rows``: disjoint splits, eval drawn first, so a ``train`` row is
never an ``eval`` row of the same seed).

:func:`trainer_dataset` wraps them in a ``datasets.Dataset`` (the ``data`` extra);
:func:`verl_rows` gives the same tasks in verl's row format (``data_source``, ``prompt``,
``ability``, ``reward_model.ground_truth``, ``extra_info``) for its Parquet training files.
"""

from __future__ import annotations

import json
from itertools import islice
from typing import Any

from modebench.api_types import PathLike
from modebench.rl import _engine

__all__ = ["generated_rows", "trainer_dataset", "trainer_rows", "verl_rows"]


def trainer_rows(
    config: str,
    split: str = "eval",
    *,
    registry: str | None = None,
    data_root: PathLike | None = None,
    cache_dir: PathLike | None = None,
    offline: bool = False,
    condition: str = "registered_hints_v1",
    limit: int | None = None,
) -> list[dict[str, Any]]:
    """One row per task of the split (see the module docstring); ``limit`` keeps the first N."""
    from modebench.api import load_tasks, make_prompt

    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit <= 0):
        raise ValueError("limit must be a positive integer")
    tasks = load_tasks(
        config, split, data_root=data_root, cache_dir=cache_dir, offline=offline, registry=registry
    )
    rows = []
    for task in islice(tasks, limit):
        rows.append(
            {
                "prompt": [dict(message) for message in make_prompt(task, condition)],
                "prompt_id": task.id,
                "level": task.level,
                "domain": str(task.domain),
                "answer": _engine.canonical_json(dict(task.answer)),
            }
        )
    return rows


def generated_rows(
    config: str,
    count: int,
    *,
    split: str = "train",
    seed: int = 0,
    condition: str = "registered_hints_v1",
) -> list[dict[str, Any]]:
    """``count`` rows of ``split`` of ``config`` drawn by the domain's generator with ``seed``, in
    :func:`trainer_rows`' shape; prompt ids ``<config>/<split>/<index>``."""
    from modebench.api import Task, make_prompt
    from modebench.suite.build import SPLITS, generate_rows, parse_config

    if isinstance(count, bool) or not isinstance(count, int) or count <= 0:
        raise ValueError("count must be a positive integer")
    if split not in SPLITS:
        raise ValueError(f"split must be one of {', '.join(SPLITS)}")
    level, domain = parse_config(config)
    drawn = generate_rows(config, seed, {split: count})[split]
    rows = []
    for index, row in enumerate(drawn):
        answer = row["answer"]  # the release's column: the reference as JSON text
        answer = json.loads(answer) if isinstance(answer, str) else answer
        task = Task(
            f"{config}/{split}/{index}", level, _engine.canonical_domain(domain), row["problem"], answer
        )
        rows.append(
            {
                "prompt": [dict(message) for message in make_prompt(task, condition)],
                "prompt_id": task.id,
                "level": task.level,
                "domain": str(task.domain),
                "answer": _engine.canonical_json(dict(task.answer)),
            }
        )
    return rows


def trainer_dataset(config: str, split: str = "eval", **options: Any) -> Any:
    """:func:`trainer_rows` as a ``datasets.Dataset`` (needs the ``data`` extra)."""
    try:
        from datasets import Dataset
    except ImportError:
        raise ImportError(
            "modebench.rl.trainer_dataset needs the datasets package: pip install -e '.[rl]'"
        ) from None
    return Dataset.from_list(trainer_rows(config, split, **options))


def verl_rows(config: str, split: str = "eval", **options: Any) -> list[dict[str, Any]]:
    """:func:`trainer_rows` in verl's row format (``examples/data_preprocess/gsm8k.py`` in verl):
    ``data_source`` ``modebench/level<L>_<domain>``, ``reward_model.ground_truth`` the answer's
    JSON text, ``extra_info`` with ``level``, ``domain``, ``prompt_id`` and ``index``."""
    out = []
    for index, row in enumerate(trainer_rows(config, split, **options)):
        out.append(
            {
                "data_source": f"modebench/level{row['level']}_{row['domain']}",
                "prompt": row["prompt"],
                "ability": row["domain"],
                "reward_model": {"style": "rule", "ground_truth": row["answer"]},
                "extra_info": {
                    "split": split,
                    "index": index,
                    "level": row["level"],
                    "domain": row["domain"],
                    "prompt_id": row["prompt_id"],
                },
            }
        )
    return out
