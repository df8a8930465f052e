"""The billing report's formats: JSON and CSV (`render_data`), Markdown and the terminal table
(`render_text`), by name."""

from __future__ import annotations

from collections.abc import Callable

from gpu_audit.billing.render_data import render_csv, render_json
from gpu_audit.billing.render_text import render_markdown, render_table
from gpu_audit.billing.report import BillingReport

RENDERERS: dict[str, Callable[[BillingReport], str]] = {
    "table": render_table,
    "json": render_json,
    "csv": render_csv,
    "markdown": render_markdown,
}
