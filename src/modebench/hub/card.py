"""The ``README.md`` dataset card that makes a release directory a Hugging Face dataset.

The YAML header's ``configs:`` block names one configuration per registry ``config_name`` and,
for each, the Parquet file of every split, so ``datasets.load_dataset(DIR, "level2_mathir")``
reads exactly the files the registry hashes — on the directory as it is, or on the same files
pushed to a Hub repository. The body is the datasheet of every configuration, rendered from the
release's own ``cards/<config>.json`` (see ``docs/datasets-hub.md``).

The YAML is written by hand (every value is a registry-validated name or path, or a JSON string,
which YAML reads as a double-quoted scalar), so writing a card needs no YAML library.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["dataset_card"]

#: Split order inside a configuration: what users tune on, then report on, then train on.
_SPLIT_ORDER = {"eval": 0, "dev": 1, "train": 2}


def _quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=True)


def _yaml_header(records: Sequence[Mapping[str, Any]], license_id: str | None, title: str) -> list[str]:
    lines = ["---"]
    if license_id is not None:
        lines.append(f"license: {license_id.lower()}")
    lines += [f"pretty_name: {_quote(title)}", "configs:"]
    by_config: dict[str, list[Mapping[str, Any]]] = {}
    for record in records:
        by_config.setdefault(record["config_name"], []).append(record)
    for config in sorted(by_config):
        lines += [f"- config_name: {config}", "  data_files:"]
        for record in sorted(by_config[config], key=lambda r: _SPLIT_ORDER.get(r["split"], 9)):
            lines += [f"  - split: {record['split']}", f"    path: {_quote(record['data_file'])}"]
    lines.append("---")
    return lines


def _value(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _datasheet(config: str, sheet: Mapping[str, Any], records: Sequence[Mapping[str, Any]]) -> list[str]:
    lines = [f"### {config}", ""]
    for record in sorted(records, key=lambda r: _SPLIT_ORDER.get(r["split"], 9)):
        lines.append(
            f"- `{record['split']}`: {record['rows']} rows, `{record['data_file']}`, "
            f"SHA-256 `{record['parquet_sha256']}`"
        )
    lines.append("")
    for key, value in sheet.items():
        if key in ("config", "splits", "composition"):
            continue  # the split list above states the same facts from the registry itself
        label = key.replace("_", " ").capitalize()
        if isinstance(value, Mapping):
            lines.append(f"**{label}**:")
            lines += [f"- `{name}`: {_value(item)}" for name, item in value.items()]
        elif isinstance(value, list) and all(isinstance(item, str) for item in value):
            lines.append(f"**{label}**:")
            lines += [f"- {item}" for item in value]
        else:
            lines.append(f"**{label}**: {_value(value)}")
        lines.append("")
    return lines


def dataset_card(
    records: Sequence[Mapping[str, Any]],
    datasheets: Mapping[str, Mapping[str, Any]],
    *,
    title: str,
    summary: str,
) -> str:
    """The ``README.md`` text for a release whose registry holds ``records``.

    ``datasheets`` maps each configuration to its datasheet (the JSON of ``cards/<config>.json``).
    """
    licenses = {sheet.get("license") for sheet in datasheets.values()}
    license_id = licenses.pop() if len(licenses) == 1 else None
    configs = sorted({record["config_name"] for record in records})
    example = configs[0]
    lines = _yaml_header(records, license_id if isinstance(license_id, str) else None, title)
    lines += [
        "",
        f"# {title}",
        "",
        summary,
        "",
        "## Loading",
        "",
        "Every configuration below is a `datasets` configuration; each split is one Parquet file.",
        "",
        "```python",
        "import datasets",
        "",
        f'splits = datasets.load_dataset("PATH_OR_REPO", "{example}")',
        "```",
        "",
        "ModeBench reads the same files through its registry (`registry.json`), checking the SHA-256",
        "and row count of every split before use:",
        "",
        "```python",
        "from modebench.data import load_split",
        "",
        f'dataset = load_split("PATH/data", "{example}", "{_first_split(records, example)}")',
        "```",
        "",
        "The `answer` column is the executable reference: never send it to a model.",
        "",
        "## Configurations",
        "",
        "| config | level | domain | splits (rows) |",
        "| --- | ---: | --- | --- |",
    ]
    for config in configs:
        own = [record for record in records if record["config_name"] == config]
        own.sort(key=lambda r: _SPLIT_ORDER.get(r["split"], 9))
        splits = ", ".join(f"{record['split']} ({record['rows']})" for record in own)
        lines.append(f"| {config} | {own[0]['level']} | {own[0]['domain']} | {splits} |")
    lines += ["", "## Datasheets", ""]
    for config in configs:
        own = [record for record in records if record["config_name"] == config]
        lines += _datasheet(config, datasheets.get(config, {}), own)
    return "\n".join(lines).rstrip("\n") + "\n"


def _first_split(records: Sequence[Mapping[str, Any]], config: str) -> str:
    splits: list[str] = sorted(
        (str(record["split"]) for record in records if record["config_name"] == config),
        key=lambda name: _SPLIT_ORDER.get(name, 9),
    )
    return splits[0]
