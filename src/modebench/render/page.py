"""HTML building blocks of the report: escaping, tables, figures and the page shell.

Everything the page shows that came from a receipt passes through :func:`esc`. The page shell
carries a Content-Security-Policy that forbids every fetch (``default-src 'none'``), so even a
mistake elsewhere cannot make the file reach the network when it is opened.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence
from typing import Any

from modebench._words import counted

__all__ = ["esc", "figure", "number", "page", "short", "table", "visible"]

# Characters a reader cannot see or that reorder what follows (C0/C1 controls except tab, line
# feed and carriage return; zero-width and bidirectional controls such as U+202E; BOM): shown as
# their code, so an id cannot pass for another one.
_INVISIBLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]")
#: Characters of one receipt-supplied text (id, key, path, note) shown on a page.
TEXT_LIMIT = 300

_CSS = """
:root { color-scheme: light; --ink: #1a1a1a; --muted: #555; --rule: #d0d0d0; --bad: #a33b00; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink);
  margin: 0; background: #fafafa; }
main { max-width: 1100px; margin: 0 auto; padding: 1.2rem 1.5rem 3rem; background: #fff; }
h1 { font-size: 1.6rem; margin: 0.2rem 0 0.8rem; } h2 { font-size: 1.3rem; margin-top: 2rem;
  border-bottom: 2px solid var(--rule); padding-bottom: 0.2rem; } h3 { font-size: 1.08rem; margin-top: 1.4rem; }
h4 { font-size: 0.98rem; margin: 0.9rem 0 0.3rem; }
table { border-collapse: collapse; margin: 0.5rem 0 1rem; font-size: 0.9rem; display: block; max-width: 100%; overflow-x: auto; }
th, td { border-bottom: 1px solid var(--rule); padding: 0.25rem 0.6rem; text-align: left; vertical-align: top; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.ci { color: var(--muted); font-size: 0.82rem; white-space: nowrap; }
figure { margin: 0.8rem 0 1.2rem; } figure svg { max-width: 100%; height: auto; }
figcaption { color: var(--muted); font-size: 0.85rem; margin-top: 0.2rem; }
dl.identity { display: grid; grid-template-columns: max-content 1fr; gap: 0.15rem 1rem; font-size: 0.9rem; }
dl.identity dt { font-weight: 600; } dl.identity dd { margin: 0; overflow-wrap: anywhere; }
code, pre { font: 0.85rem/1.35 ui-monospace, "DejaVu Sans Mono", monospace; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; background: #f3f3f3; padding: 0.5rem; margin: 0; }
.failed { border: 3px solid var(--bad); background: #fff4ee; padding: 0.6rem 1rem; }
.failed h2 { color: var(--bad); border: 0; margin-top: 0.3rem; }
.bar { display: inline-block; height: 0.8rem; background: #0072B2; vertical-align: middle; }
.modes td { max-width: 30rem; } .modes td code { word-break: break-all; }
.grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(500px, 1fr)); gap: 0 1.2rem; }
.note { color: var(--muted); font-size: 0.88rem; }
"""


def encodable(text: str) -> str:
    """``text`` with each lone surrogate (valid in JSON, ``"\\udfff"``, not in UTF-8) shown as its
    escape, visibly: a response or id holding one must not stop the page from being written."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def visible(text: str) -> str:
    """``text`` with invisible and reordering characters written as their code (``<U+202E>``)."""
    return _INVISIBLE.sub(lambda m: f"<U+{ord(m.group()):04X}>", text)


def short(value: Any, limit: int = TEXT_LIMIT) -> str:
    """A text shortened visibly: its first ``limit`` characters and how many were left out."""
    text = value if isinstance(value, str) else str(value)
    return (
        text
        if len(text) <= limit
        else f"{text[:limit]}… [{counted(len(text) - limit, 'more character', 'more characters', grouped=True)}]"
    )


def esc(value: Any) -> str:
    return html.escape(visible(value if isinstance(value, str) else str(value)), quote=True)


def number(value: Any) -> str:
    """A number as the text report prints it (``format(v, 'g')``); a null as an en dash."""
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "true" if value else "false"
    return format(value, "g") if isinstance(value, float) else str(value)


def table(
    headers: Sequence[str], rows: Iterable[Sequence[str]], *, caption: str = "", numeric: Sequence[int] = ()
) -> str:
    """A table of already-escaped cell HTML; ``numeric`` columns are right-aligned."""
    head = "".join(
        f'<th scope="col"{" class=num" if i in numeric else ""}>{esc(h)}</th>' for i, h in enumerate(headers)
    )
    body = []
    for row in rows:
        cells = "".join(f"<td{' class=num' if i in numeric else ''}>{c}</td>" for i, c in enumerate(row))
        body.append(f"<tr>{cells}</tr>")
    cap = f"<caption>{esc(caption)}</caption>" if caption else ""
    return f"<table>{cap}<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def figure(body: str, caption: str, kind: str) -> str:
    """A ``<figure>`` the browser tests find by ``data-figure``; the caption is its visible text alternative."""
    return f'<figure data-figure="{esc(kind)}">{body}<figcaption>{esc(caption)}</figcaption></figure>'


def page(title: str, sections: Sequence[str]) -> str:
    policy = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{policy}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)}</title><style>{_CSS}</style></head>\n"
        f"<body><main>\n<h1>{esc(title)}</h1>\n" + "\n".join(sections) + "\n</main></body></html>\n"
    )
