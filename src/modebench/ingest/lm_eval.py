"""lm-evaluation-harness ``--log_samples`` files.

Since 0.4.3 the harness writes ``samples_{task}_{date_id}.jsonl`` (``EvaluationTracker
.save_results_samples``): one JSON line per document *and filter* — a task with two filters (e.g.
``gsm8k``: ``strict-match`` and ``flexible-extract``) writes every document twice, with the same
``resps`` and its ``filter`` named. 0.4.0–0.4.2 wrote ``{model_args}_{task}.jsonl``: one indented
JSON array, again one element per document and filter, the filters one after another but unnamed.

Each document of the chosen filter is one prompt: its responses are every repeat in ``resps``.
The filter is ``--filter NAME`` (``#N`` for the N-th filter of a file without ``filter`` fields), by default the task's
first filter; the summary names it. A prompt's identity includes its task (the file), so documents
of different tasks never merge (two that match one registered prompt are an error). A document is
named by ``doc.id`` (or ``--id-field``, a dotted path into ``doc``), else matched by its prompt
text (the first request's context). A directory holding several runs of one task (reruns into
one output directory) keeps the newest by ``date_id`` and lists the others as skipped.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from modebench.ingest._jsonstream import iter_array
from modebench.ingest._source import ReadOptions, SourcePrompt, field, iter_json_lines, source_id
from modebench.validation import InputError

__all__ = ["read"]

_ROW_FIELDS = ("level", "domain", "answer")
# date_id is datetime.now().isoformat().replace(":", "-")
_MODERN = re.compile(r"samples_(?P<task>.+)_(?P<date>\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}(?:\.\d+)?)\.jsonl")


def _is_array(path: Path) -> bool:
    with path.open("rb") as handle:
        head = handle.read(4096).lstrip()
    return head.startswith(b"[")


def _task(path: Path) -> tuple[str, str]:
    """``(task, date_id)`` of a sample file; a legacy or renamed file's task is its stem."""
    found = _MODERN.fullmatch(path.name)
    if found is not None:
        return found.group("task"), found.group("date")
    return path.stem, ""


def _files(source: Path, notes: dict[str, Any]) -> list[Path]:
    if not source.is_dir():
        return [source]
    latest: dict[str, tuple[str, Path]] = {}
    skipped: list[dict[str, str]] = notes.setdefault("skipped_files", [])
    for path in sorted(p for p in source.rglob("*.jsonl") if p.is_file()):
        if not path.name.startswith("samples_") and not _is_array(path):
            skipped.append({"path": str(path), "reason": "not an lm-eval sample file"})
            continue
        task, date = _task(path)
        held = latest.get(task)
        if held is not None and held[1].parent != path.parent:
            raise InputError(
                f"{held[1]} and {path}: task {task} in two directories (two models or runs?); "
                "ingest one directory or file at a time"
            )
        if held is None or (date, str(path)) > (held[0], str(held[1])):
            if held is not None:
                skipped.append(
                    {"path": str(held[1]), "reason": f"older run of task {task}: {path.name} is newer"}
                )
            latest[task] = (date, path)
        else:
            skipped.append(
                {"path": str(path), "reason": f"older run of task {task}: {held[1].name} is newer"}
            )
    return sorted(path for _, path in latest.values())


def _prompt(arguments: Any) -> Any:
    # Older harness versions log [[context, gen_kwargs], …]; newer ones
    # {"gen_args_0": {"arg_0": context, "arg_1": gen_kwargs}, …}.
    if isinstance(arguments, list) and arguments and isinstance(arguments[0], list) and arguments[0]:
        return arguments[0][0]
    if isinstance(arguments, dict) and arguments:
        first = next(iter(arguments.values()))
        if isinstance(first, dict):
            return first.get("arg_0")
    return None


def _responses(resps: Any, location: str) -> list[str]:
    if not isinstance(resps, list) or not resps:
        raise InputError(f"{location}: resps must be a nonempty list of response lists")
    flat: list[str] = []
    for group in resps:
        items = group if isinstance(group, list) else [group]
        for item in items:
            if not isinstance(item, str):
                raise InputError(f"{location}: resps must contain only strings")
            flat.append(item)
    if not flat:
        raise InputError(f"{location}: resps holds no responses")
    return flat


def _records(path: Path) -> Iterator[tuple[str, Any]]:
    if _is_array(path):
        for number, record in enumerate(iter_array(path), start=1):
            if not isinstance(record, dict):
                raise InputError(f"{path}: element {number}: expected a JSON object")
            yield f"{path}: element {number}", record
    else:
        for number, record in iter_json_lines(path):
            yield f"{path}: line {number}", record


def _read_file(path: Path, options: ReadOptions) -> Iterator[SourcePrompt]:  # noqa: C901, PLR0912 - one branch per lm-eval layout and per record check, in file order
    task, _ = _task(path)
    wanted = options.lm_eval_filter
    chosen: str | None = wanted
    filters: list[str] = []
    # per filter, the doc ids seen: a legacy file's N-th occurrence of a doc is its N-th filter
    seen: dict[str, dict[Any, str]] = {}
    occurrences: dict[Any, int] = {}
    id_path = options.id_field or "id"
    for location, line in _records(path):
        doc = line.get("doc")
        if not isinstance(doc, dict):
            raise InputError(f"{location}: missing field: doc")
        if "resps" not in line:
            raise InputError(f"{location}: missing field: resps")
        responses = _responses(line["resps"], location)
        doc_id = line.get("doc_id")
        if isinstance(doc_id, bool) or not isinstance(doc_id, (int, str)):
            raise InputError(f"{location}: missing field: doc_id")
        name = line.get("filter")
        if not isinstance(name, str):
            occurrences[doc_id] = occurrences.get(doc_id, 0) + 1
            name = f"#{occurrences[doc_id]}"
        if name not in seen:
            filters.append(name)
            seen[name] = {}
            if chosen is None:
                chosen = name
        first = seen[name].get(doc_id)
        if first is not None:
            raise InputError(
                f"{location}: doc_id {doc_id} of filter {name} repeats {first} "
                "(two runs appended to one file?); keep one run's lines"
            )
        seen[name][doc_id] = location
        if name != chosen:
            continue
        if options.id_field is not None:
            ident: str | None = source_id(doc, id_path, location)
            rule = f"id-field:{options.id_field}"
        else:
            value = field(doc, id_path)
            ident = str(value) if isinstance(value, (str, int)) and not isinstance(value, bool) else None
            rule = "id"
        row = {f: doc[f] for f in _ROW_FIELDS} if all(f in doc for f in _ROW_FIELDS) else None
        yield SourcePrompt(
            None, ident, _prompt(line.get("arguments")), responses, location, row, id_rule=rule
        )
    if chosen is not None and chosen not in seen:
        raise InputError(f"{path}: no filter {chosen} (filters: {', '.join(filters) or 'none'})")
    if not filters:
        raise InputError(f"{path}: no samples")
    options.notes.setdefault("filters", {})[f"{task} ({path.name})"] = {"chosen": chosen, "filters": filters}


def read(source: Path, options: ReadOptions) -> Iterator[SourcePrompt]:
    files = _files(source, options.notes)
    if not files:
        raise InputError(f"{source}: no lm-eval sample files (samples_*.jsonl)")
    for path in files:
        yield from _read_file(path, options)
