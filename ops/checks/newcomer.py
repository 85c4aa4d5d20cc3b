#!/usr/bin/env python3
"""A scripted newcomer: run every shell command the README shows and check its exit code.

The pages run are README.md and every page under ``docs/`` that carries the page mark
``<!-- newcomer: page … -->`` on a line of its own (the README is the front door and shows one
example of each use; the rest of its former examples moved to such pages, which keep running).
Every fenced ``sh``/``bash``/``shell`` block of those pages runs in its own fresh temporary directory,
its commands in order (a ``\\`` continuation joins lines; ``#`` comments are the shell's), each
checked for exit code 0 — or for ``N`` where the command's comment says ``exit N``. The environment
is a newcomer's: the environment running this script (``.venv/bin/python ops/checks/newcomer.py``) first on PATH, HOME, XDG caches and
Matplotlib's config in the temporary directory, and no network (pip without an index, Hugging Face
offline, every HTTP(S) request sent to a closed local port), so a command that would download
fails here as it would on a plane.

An HTML comment on the line before a block says what the block needs (``;``-separated):

* ``<!-- newcomer: checkout -->`` — the block is run where the checkout is: the directory also gets
  the repository's ``Makefile``, ``pyproject.toml`` and ``.venv`` (linked, so ``make demo`` finds
  its installed venv);
* ``setup=COMMAND`` — run first (e.g. ``setup=make demo`` for "after ``make demo``" blocks);
* ``fixture=FILE:custom`` / ``fixture=FILE:frozen:CONFIG[:REGISTRY]`` — the user's own response file,
  made just before the first command that names FILE: ``custom`` is the walkthrough's five records,
  ``frozen`` one record per prompt of the split with 4 responses (the split's own witnesses for some
  draws, so pass rates vary) and a ``run.json`` beside it;
* ``skip=REASON`` (last) — not run (installs packages, needs a model server, …); the reason is printed.

``make check`` in the Quick start is always skipped by this script: it runs the test suite, which
runs this script — it would recurse.

Usage: ``python ops/checks/newcomer.py [--readme PAGE.md] [--json]``; exit 0 when every command behaved.
``--readme`` runs that one page instead of the README and the marked docs pages.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SHELLS = ("sh", "bash", "shell")
RECURSES = "make check"
TIMEOUT = 300.0
_FENCE = re.compile(r"^```(\w*)\s*$")
_DIRECTIVE = re.compile(r"^<!--\s*newcomer:(.*?)-->\s*$")
_EXPECTED = re.compile(r"#.*\bexit (\d+)\b")
_PAGE_MARK = re.compile(r"^<!--\s*newcomer:\s*page\b.*-->\s*$", re.M)
RUN = {
    "model": {"id": "newcomer-model", "revision": "r1"},
    "generation": {"draws_per_prompt": 4, "temperature": 1.0},
    "prompt_condition": "registered_hints_v1",
}


@dataclass
class Block:
    line: int
    commands: list[str]
    checkout: bool = False
    setup: list[str] = field(default_factory=list)
    fixtures: dict[str, list[str]] = field(default_factory=dict)
    skip: str | None = None


def blocks(text: str) -> list[Block]:
    """The README's shell blocks with their directives, in order."""
    found: list[Block] = []
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        match = _FENCE.match(lines[index])
        if not match or not match.group(1):
            index += 1
            continue
        start = index
        end = next(i for i in range(index + 1, len(lines)) if lines[i].startswith("```"))
        index = end + 1
        if match.group(1) not in SHELLS:
            continue
        block = Block(start + 1, _commands(lines[start + 1 : end]))
        directive = _DIRECTIVE.match(lines[start - 1]) if start else None
        text = directive.group(1) if directive else ""
        text, _, reason = text.partition("skip=")  # the reason is the rest, ';' and all
        if reason:
            block.skip = reason.strip()
        for item in text.split(";"):
            key, _, value = item.strip().partition("=")
            if key == "checkout":
                block.checkout = True
            elif key == "setup":
                block.setup.append(value.strip())
            elif key == "fixture":
                name, _, spec = value.strip().partition(":")
                block.fixtures[name] = spec.split(":")
            elif key:
                raise ValueError(f"line {start}: unknown newcomer directive {key!r}")
        found.append(block)
    return found


def pages() -> list[Path]:
    """The README, then every docs page with the page mark, in path order."""
    marked = [
        path
        for path in sorted((ROOT / "docs").rglob("*.md"))
        if _PAGE_MARK.search(path.read_text(encoding="utf-8"))
    ]
    return [ROOT / "README.md", *marked]


def _commands(lines: list[str]) -> list[str]:
    commands: list[str] = []
    pending = ""
    for line in lines:
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        command = (pending + line).strip()
        pending = ""
        if command and not command.startswith("#"):
            commands.append(command)
    return commands


def environment(home: Path) -> dict[str, str]:
    """A newcomer's environment without network: the venv first on PATH, caches in ``home``."""
    closed = "http://127.0.0.1:9"  # the discard port: nothing listens, every request fails at once
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("MODEBENCH_", "PYTEST_", "PIP_", "HF_", "VIRTUAL_ENV"))
        and key.lower() not in ("http_proxy", "https_proxy", "all_proxy", "no_proxy", "pythonpath")
    }
    env.update(
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",  # this environment's
        HOME=str(home),
        XDG_CACHE_HOME=str(home / ".cache"),
        XDG_CONFIG_HOME=str(home / ".config"),
        MPLCONFIGDIR=str(home / ".matplotlib"),
        PIP_NO_INDEX="1",
        HF_HUB_OFFLINE="1",
        HF_DATASETS_OFFLINE="1",
        http_proxy=closed,
        https_proxy=closed,
        HTTP_PROXY=closed,
        HTTPS_PROXY=closed,
        COLUMNS="100",
    )
    return env


def make_fixture(directory: Path, name: str, spec: list[str]) -> None:
    """The user's own files a README command reads (``responses.jsonl`` and its ``run.json``)."""
    target = directory / name
    if spec[0] == "custom":
        from modebench.walkthrough import export

        scratch = directory / ".walkthrough"
        export(scratch)
        shutil.move(scratch / "responses.jsonl", target)
        shutil.move(scratch / "run.json", directory / "run.json")
        shutil.rmtree(scratch)
        return
    if spec[0] != "frozen" or len(spec) not in (2, 3):
        raise ValueError(f"unknown fixture {':'.join(spec)!r}")
    from modebench.data import iter_tasks
    from modebench.domains import plugin

    registry = spec[2] if len(spec) == 3 else "bundled"
    if registry != "bundled":
        registry = str(directory / registry)
    records = []
    for index, task in enumerate(iter_tasks(spec[1], registry=registry, offline=True)):
        witnesses = plugin(task.domain).witnesses
        solved = witnesses(task.level, dict(task.answer))[0] if witnesses is not None else "no answer"
        right = index % 5  # 0–4 of 4 draws right: every difficulty stratum occurs
        responses = [solved] * min(right, 4) + ["\\boxed{no answer}"] * (4 - min(right, 4))
        records.append({"id": task.id, "responses": responses})
    target.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    (directory / "run.json").write_text(json.dumps(RUN), encoding="utf-8")


def run_block(block: Block, scratch: Path) -> list[dict[str, Any]]:
    """Run one block in a fresh directory; one result per command (setup included)."""
    directory = Path(tempfile.mkdtemp(prefix="block-", dir=scratch))
    home = directory / ".home"
    home.mkdir()
    if block.checkout:
        for name in ("Makefile", "pyproject.toml", ".venv"):  # linked: make sees the venv is current
            (directory / name).symlink_to(ROOT / name)
    env = environment(home)
    results = []
    steps = [(command, "setup") for command in block.setup] + [(command, "") for command in block.commands]
    pending = dict(block.fixtures)
    for command, role in steps:
        if command.strip() == RECURSES:
            results.append(_result(block, command, "skipped: runs the test suite, which runs this script"))
            continue
        for name in [name for name in pending if name in command]:
            make_fixture(directory, name, pending.pop(name))
        expected = int(match.group(1)) if (match := _EXPECTED.search(command)) else 0
        started = time.monotonic()
        try:
            done = subprocess.run(
                ["bash", "-c", command],
                cwd=directory,
                env=env,
                capture_output=True,
                text=True,
                timeout=TIMEOUT,
                stdin=subprocess.DEVNULL,
            )
            code, tail = done.returncode, (done.stderr or done.stdout)[-2000:]
        except subprocess.TimeoutExpired:
            code, tail = -1, f"timed out after {TIMEOUT:g} s"
        outcome = "ok" if code == expected else f"FAILED: exit {code}, expected {expected}"
        results.append(
            _result(block, command, outcome, role=role, seconds=time.monotonic() - started, output=tail)
        )
    return results


def _result(block: Block, command: str, outcome: str, **extra: Any) -> dict[str, Any]:
    return {"line": block.line, "command": command, "outcome": outcome, **extra}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--readme", help="run this one page (default: the README and the marked docs pages)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args(argv)
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="newcomer-") as scratch:
        for page in [Path(args.readme).resolve()] if args.readme else pages():
            name = page.relative_to(ROOT).as_posix() if page.is_relative_to(ROOT) else page.name
            for block in blocks(page.read_text(encoding="utf-8")):
                if block.skip is not None:
                    found = [_result(block, c, f"skipped: {block.skip}") for c in block.commands]
                else:
                    found = run_block(block, Path(scratch))
                results.extend({"page": name, **result} for result in found)
    failed = [r for r in results if r["outcome"].startswith("FAILED")]
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        for result in results:
            where = f"{result['page']}:{result['line']}"
            print(f"{where:<22}  {result['outcome'][:60]:<8}  {result['command']}")
            if result["outcome"].startswith("FAILED"):
                print("    " + result["output"].strip().replace("\n", "\n    "))
        ran = sum(r["outcome"] == "ok" for r in results)
        skipped = sum(r["outcome"].startswith("skipped") for r in results)
        print(f"{ran} commands ok, {len(failed)} failed, {skipped} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
