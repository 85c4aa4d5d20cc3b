"""Presentation of results: tables (text, JSON, CSV, Markdown); later the HTML report and figures."""

from __future__ import annotations

from modebench.render.tables import FORMATS, render_table

__all__ = ["FORMATS", "render_table"]
