"""The documented ``generate`` commands parse as written, and every flag is documented."""

from __future__ import annotations

import argparse
import re
import shlex
from pathlib import Path

from modebench.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
DOCS = (ROOT / "README.md", ROOT / "docs" / "generate.md")


def _commands(text: str) -> list[list[str]]:
    joined = text.replace("\\\n", " ")
    return [
        shlex.split(line.strip())[1:] for line in joined.splitlines() if line.strip().startswith("modebench ")
    ]


def test_documented_commands_parse() -> None:
    parser = build_parser()
    commands = [c for doc in DOCS for c in _commands(doc.read_text()) if c[0] == "generate"]
    assert len(commands) >= 4
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
