"""The documented ``generate`` commands parse as written, and every flag is documented."""

from __future__ import annotations

import argparse
import re
import shlex
from pathlib import Path

from modebench.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
DOCS = (
    ROOT / "docs" / "guide.md",
    ROOT / "docs" / "generate.md",
)  # the guide holds the README's former examples


def _commands(text: str) -> list[list[str]]:
    """Every ``modebench …`` command of the text, each side of a pipe on its own."""
    joined = text.replace("\\\n", " ")
    commands = []
    fenced = False
    for line in joined.splitlines():
        if line.strip().startswith("```"):
            fenced = not fenced  # commands live in code blocks; prose may wrap onto "modebench …"
        if not fenced or not line.strip().startswith("modebench "):
            continue
        words = shlex.split(line.strip())
        while "|" in words:
            cut = words.index("|")
            commands.append(words[1:cut])
            words = words[cut + 1 :]
        commands.append(words[1:])
    return commands


def test_documented_commands_parse() -> None:
    parser = build_parser()
    # Every generate command, and every command of docs/generate.md (the guide shows others
    # with placeholders).
    commands = [c for doc in DOCS for c in _commands(doc.read_text()) if c[0] == "generate" or doc == DOCS[1]]
    assert len([c for c in commands if c[0] == "generate"]) >= 5
    assert ["evaluate", "-"] in [c[:2] for c in commands]  # pipe mode's reader
    for argv in commands:
        parser.parse_args(argv)  # SystemExit on an unknown or malformed flag


def test_every_generate_flag_is_documented() -> None:
    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    generate = commands.choices["generate"]
    text = (ROOT / "docs" / "generate.md").read_text()
    flags = [s for a in generate._actions for s in a.option_strings if s.startswith("--") and s != "--help"]
    missing = [flag for flag in flags if not re.search(re.escape(flag) + r"\b", text)]
    assert missing == []
