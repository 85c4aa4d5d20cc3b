"""Response surface and program grammars.

MathIR has its own surface rules: the last ``\\boxed{…}`` is used verbatim when ``\\boxed`` occurs
anywhere (no fallback to the raw text), otherwise the stripped response, optionally unwrapped from
one whole-response ```` ```mathir ```` fence, capped at 200 characters and free of ``<``/``>``.
Newlines inside a raw candidate are fine (unlike other domains).
"""

from __future__ import annotations

import re

from modebench.domains._surface import has_box, last_boxed
from modebench.domains.mathir.expr import MODEL_NODE_LIMIT, ExprError, Tree, parse_expr, strip_ws

RAW_CANDIDATE_CAP = 200
PROGRAM_CAP = 160
COMMANDS = frozenset({"add", "sub", "mul", "div"})
MENU_IDS = frozenset("ABCDEFGH")

_FENCE = re.compile(r"```(?:mathir)?\s*(.*?)\s*```", re.IGNORECASE | re.DOTALL)
_COMMAND = re.compile(r"([A-Za-z][A-Za-z0-9_]*)\((.*)\)", re.DOTALL)


class ProgramError(Exception):
    """The candidate (or a reference action string) is outside the program grammar."""


def candidate(text: str) -> str | None:
    """The program candidate of a response, or None (→ malformed)."""
    if has_box(text):
        return last_boxed(text)
    body = text.strip()
    if not body:
        return None
    fenced = _FENCE.fullmatch(body)
    if fenced is not None:
        body = fenced.group(1).strip()
    if len(body) > RAW_CANDIDATE_CAP or "<" in body or ">" in body:
        return None
    return body or None


# The reference's diagnostics, word for word: a result's ``detail`` travels in the worker reply,
# so its length decides where a long response crosses the reply cap (docs/fidelity.md).
_STEP_ERRORS = {
    False: (
        "program is empty or too long",
        "empty program command",
        "program has an invalid number of commands",
    ),
    True: (
        "action program is empty or too long",
        "empty action",
        "action program has an invalid number of steps",
    ),
}


def split_steps(program: str, max_steps: int, menu: bool = False) -> list[str]:
    """Whitespace removal, the one-trailing-``;`` rule and the step-count bound."""
    too_long, empty, count = _STEP_ERRORS[menu]
    compact = strip_ws(program)
    if not compact or len(compact) > PROGRAM_CAP:
        raise ProgramError(too_long)
    if compact.endswith(";"):
        compact = compact[:-1]
    if not compact or compact.startswith(";") or ";;" in compact:
        raise ProgramError(empty)
    steps = compact.split(";")
    if not 1 <= len(steps) <= max_steps:
        raise ProgramError(count)
    return steps


def parse_command(step: str, symbols: frozenset[str]) -> tuple[str, Tree]:
    """``NAME(ARG)`` with NAME a command (``neg`` is only an expression operator)."""
    match = _COMMAND.fullmatch(step)
    if match is None:
        raise ProgramError("commands must use op(expression) syntax")
    if match.group(1) not in COMMANDS:
        raise ProgramError(f"unsupported command {match.group(1)!r}")
    try:
        arg = parse_expr(match.group(2), symbols, MODEL_NODE_LIMIT)
    except ExprError as exc:
        raise ProgramError(str(exc)) from None
    return match.group(1), arg


def parse_free_program(program: str, symbols: frozenset[str], max_steps: int) -> tuple[tuple[str, Tree], ...]:
    """A ``linear-v0`` program (also the syntax of one menu action with ``max_steps=1``)."""
    return tuple(parse_command(step, symbols) for step in split_steps(program, max_steps))


def parse_menu_program(program: str, menu: frozenset[str], max_steps: int) -> tuple[str, ...]:
    """A ``linear-menu-v1`` program: 1..max_steps IDs, each one ASCII letter A–H in the menu."""
    steps = split_steps(program, max_steps, menu=True)
    for step in steps:
        if step not in MENU_IDS or step not in menu:
            raise ProgramError("unknown action ID")
    return tuple(steps)
