"""verl rollout dumps (``trainer.rollout_data_dir``): ``{step}.jsonl`` per logged step.

``RayPPOTrainer._dump_generations`` writes one line per rollout with ``input`` (the prompt ids
decoded with ``skip_special_tokens=True``), ``output``, ``gts`` (the row's
``reward_model.ground_truth``; newer verl), ``score``, ``step`` and every reward-extra key. Lines of
one step with the same ``input`` are one prompt's responses, in file order. ``--id-field KEY``
(dotted: ``gts.id``) names the prompt by a key instead of by its text. Files are read one step at a
time, so memory holds one step.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from modebench.ingest import _steps
from modebench.ingest._source import ReadOptions, SourcePrompt, iter_json_lines, source_id
from modebench.validation import InputError

__all__ = ["read", "step_files"]


def step_files(source: Path) -> list[tuple[int, Path]]:
    """``(step, file)`` of every ``{step}.jsonl`` in the directory (or the one file), by step."""
    paths = [source] if source.is_file() else sorted(p for p in source.glob("*.jsonl") if p.is_file())
    return _steps.step_files(source, paths, r"([0-9]+)\.jsonl", lambda step: f"{step}.jsonl", "verl")


def read_step(step: int, path: Path, options: ReadOptions) -> Iterator[SourcePrompt]:
    groups: dict[str, tuple[str, str, list[str]]] = {}
    id_field = options.id_field
    for number, line in iter_json_lines(path):
        prompt, output = line.get("input"), line.get("output")
        if not isinstance(prompt, str):
            raise InputError(f"{path}: line {number}: input must be a string")
        if not isinstance(output, str):
            raise InputError(f"{path}: line {number}: output must be a string")
        key = prompt if id_field is None else source_id(line, id_field, f"{path}: line {number}")
        group = groups.get(key)
        if group is None:
            group = groups[key] = (f"{path}: line {number}", prompt, [])
        group[2].append(output)
    for key, (location, prompt, responses) in groups.items():
        if id_field is None:
            yield SourcePrompt(step, None, prompt, responses, location)
        else:
            yield SourcePrompt(step, key, prompt, responses, location, id_rule=f"id-field:{id_field}")


def read(source: Path, options: ReadOptions) -> Iterator[SourcePrompt]:
    for step, path in step_files(source):
        yield from read_step(step, path, options)
