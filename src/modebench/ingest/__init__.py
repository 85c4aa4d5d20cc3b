"""Converters from other tools' response logs to modebench's evaluate input (``docs/ingest.md``).

``ingest(fmt, source, output)`` streams one source — Inspect AI logs, lm-evaluation-harness
sample files, verl rollout dumps or TRL GRPO completion logs — into JSONL records
``{"id", "responses"}`` (frozen mode; custom-mode rows when the source carries the reference).
Sources with training steps (verl, TRL) write one file per step, ``<stem>.step-<N><suffix>``.
Prompts are matched by id, else by exact renderings against a registry split (the chat templates
trainers render them with, with and without special tokens); unmatched prompts are counted and
listed, never guessed, and a source none of whose prompts match is an error.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from modebench import guard
from modebench._datasets.export import prepare_requests
from modebench._datasets.roots import SplitSource
from modebench.guard import open_regular
from modebench.ingest import inspect_log, lm_eval, trl, verl
from modebench.ingest._matching import PromptIndex
from modebench.ingest._source import ReadOptions, SourcePrompt
from modebench.ingest._templates import load_tokenizer
from modebench.publish import destination, exclusive_temporary, publish_new
from modebench.validation import InputError, output_exists

__all__ = [
    "FORMATS",
    "SCHEMA",
    "PromptIndex",
    "ReadOptions",
    "SourcePrompt",
    "ingest",
    "prompt_index",
    "read_source",
    "step_path",
]

SCHEMA = "modebench-ingest-v1"
Reader = Callable[[Path, ReadOptions], Iterator[SourcePrompt]]
FORMATS: dict[str, Reader] = {
    "inspect": inspect_log.read,
    "lm-eval": lm_eval.read,
    "verl": verl.read,
    "trl": trl.read,
}
STEPPED = frozenset({"verl", "trl"})


def read_source(
    fmt: str, source: str | os.PathLike[str], options: ReadOptions | None = None
) -> Iterator[SourcePrompt]:
    """The source's prompts in order (steps ascending), streaming."""
    if fmt not in FORMATS:
        raise InputError(f"unknown ingest format: {fmt} (choose from {', '.join(FORMATS)})")
    path = Path(source)
    if not path.exists():
        raise InputError(f"{path}: no such file or directory")
    if not path.is_dir():  # a FIFO, device or oversized file: refused by name before any reader
        open_regular(path, "log").close()
    return FORMATS[fmt](path, options if options is not None else ReadOptions())


def prompt_index(
    registry: str | None,
    config: str | None,
    split: str = "eval",
    *,
    data_root: str | os.PathLike[str] | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    offline: bool = False,
    tokenizer: str | os.PathLike[str] | None = None,
) -> PromptIndex:
    """The requests of a registry split (or an empty index: match by the source's ids only).

    ``tokenizer``: a local tokenizer directory whose chat template renders the prompts too.
    """
    if config is None:
        if registry is not None:
            raise InputError("a registry needs a config to match prompts against")
        if tokenizer is not None:
            raise InputError("--tokenizer renders registered prompts: give --registry/--config too")
        return PromptIndex()

    loaded = None if tokenizer is None else load_tokenizer(os.fspath(tokenizer))
    root, source = SplitSource(config, split, data_root, cache_dir, offline, registry).open()
    return PromptIndex(
        prepare_requests(root, config, split, registry=source),
        tokenizer=loaded,
        tokenizer_name=os.fspath(tokenizer) if tokenizer is not None else "",
    )


def step_path(output: Path, step: int) -> Path:
    return output.with_name(f"{output.stem}.step-{step}{output.suffix}")


def _record(ident: str, prompt: SourcePrompt, index: PromptIndex) -> dict[str, Any]:
    if index.empty and prompt.row is not None:
        return {"id": ident, **prompt.row, "responses": []}
    return {"id": ident, "responses": []}


def _shown(prompt: Any, limit: int = 300) -> str:
    text = prompt if isinstance(prompt, str) else json.dumps(prompt, ensure_ascii=False)
    return repr(text if len(text) <= limit else text[:limit] + "…")


def ingest(
    fmt: str,
    source: str | os.PathLike[str],
    output: str | os.PathLike[str],
    *,
    index: PromptIndex | None = None,
    id_field: str | None = None,
    lm_eval_filter: str | None = None,
) -> dict[str, Any]:
    """Convert ``source`` into evaluate input at ``output``; returns a summary (``SCHEMA``).

    Written atomically: on any error no output file is left behind. No source prompt matching is
    an error naming the first one and the renderings tried; two source prompts reaching one
    registered prompt in one output (two tasks, two logs, two spellings) is an error naming both.
    """
    index = index if index is not None else PromptIndex()
    options = ReadOptions(id_field=id_field, lm_eval_filter=lm_eval_filter)
    out = Path(output)
    destination(out)  # a link at the output is refused, never followed
    stepped = fmt in STEPPED
    written: list[tuple[Path, Path]] = []
    published: list[Path] = []
    files: list[dict[str, Any]] = []
    unmatched: list[str] = []
    first_unmatched: SourcePrompt | None = None
    rules: dict[str, int] = {}
    matched_by: dict[str, str] = {}
    totals = {"prompts": 0, "responses": 0, "source_prompts": 0}
    current: tuple[int | None, dict[str, dict[str, Any]], dict[str, str]] | None = None

    def flush() -> None:
        if current is None:
            return
        step, records, _ = current
        if not records:  # nothing of this step matched: no step file (the summary lists them)
            files.append({"step": step, "path": None, "prompts": 0, "responses": 0})
            return
        target = step_path(out, step) if stepped and step is not None else out
        if os.path.lexists(target):  # never overwritten (the source itself included)
            raise output_exists(target)
        try:
            temporary, handle = exclusive_temporary(target)
            written.append((temporary, target))
            with handle:
                for record in records.values():
                    try:
                        handle.write(json.dumps(record, ensure_ascii=False) + "\n")
                    except UnicodeEncodeError:  # a lone surrogate: kept as its JSON escape
                        handle.write(json.dumps(record) + "\n")
        except OSError as exc:  # name the output the user gave, not the temporary
            raise InputError(f"{target}: cannot write ({exc.strerror or exc})") from None
        files.append(
            {
                "step": step,
                "path": str(target),
                "prompts": len(records),
                "responses": sum(len(r["responses"]) for r in records.values()),
            }
        )
        totals["prompts"] += len(records)

    try:
        for prompt in read_source(fmt, source, options):
            totals["source_prompts"] += 1
            if current is None or (stepped and current[0] != prompt.step):
                flush()
                current = (prompt.step, {}, {})
            found = index.match(prompt.ident, prompt.prompt, id_rule=prompt.id_rule)
            if found is not None and not found[0].isascii():
                guard.utf8_text(found[0], f"{prompt.location}: prompt id")
            if found is None:
                unmatched.append(prompt.location)
                if first_unmatched is None:
                    first_unmatched = prompt
                continue
            ident, rule = found
            records, origins = current[1], current[2]
            if ident in records:
                raise InputError(
                    f"{prompt.location}: matches prompt {ident} ({rule}), as does {origins[ident]}; "
                    "responses of two source prompts are never merged "
                    "(two tasks or logs of one prompt? ingest them separately)"
                )
            origins[ident] = prompt.location
            record = records[ident] = _record(ident, prompt, index)
            record["responses"].extend(prompt.responses)
            totals["responses"] += len(prompt.responses)
            rules[rule] = rules.get(rule, 0) + 1
            matched_by.setdefault(ident, rule)
        flush()
        if totals["source_prompts"] == 0:
            raise InputError(f"{source}: no prompts found")
        if first_unmatched is not None and not totals["prompts"]:
            raise InputError(
                f"{source}: none of {totals['source_prompts']} source prompts matched a registered prompt; "
                f"the first, {first_unmatched.location}: {_shown(first_unmatched.prompt)}"
                + (f" (id {first_unmatched.ident!r})" if first_unmatched.ident is not None else "")
                + f"; tried: id, messages:prompt_sha256, {index.tried()}"
            )
        for temporary, target in written:
            publish_new(temporary, target)
            published.append(target)
    except BaseException:
        for temporary, _ in written:
            temporary.unlink(missing_ok=True)
        for target in published:  # all or nothing: this call's own files only
            target.unlink(missing_ok=True)
        raise
    return {
        "schema": SCHEMA,
        "format": fmt,
        "source": str(source),
        "files": [entry for entry in files if entry["path"] is not None],
        **totals,
        "unmatched": len(unmatched),
        "unmatched_prompts": unmatched,
        "steps_without_matches": [entry["step"] for entry in files if entry["path"] is None],
        "match_rules": rules,
        "matched_by": matched_by,
        **options.notes,
    }
