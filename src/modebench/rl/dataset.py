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

:func:`trainer_dataset` wraps them in a ``datasets.Dataset`` (the ``data`` extra);
:func:`verl_rows` gives the same tasks in verl's row format (``data_source``, ``prompt``,
``ability``, ``reward_model.ground_truth``, ``extra_info``) for its Parquet training files.
"""

from __future__ import annotations

from itertools import islice
from typing import Any

from modebench.api_types import PathLike
from modebench.rl import _engine

__all__ = ["trainer_dataset", "trainer_rows", "verl_rows"]


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
