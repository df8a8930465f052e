"""A diff as a terminal table or versioned JSON; Markdown in diff/markdown.py."""

from __future__ import annotations

import json
import textwrap
from dataclasses import asdict
from typing import Any

from gpu_audit.diff.cells import (
    across,
    across_run,
    cap,
    capacity,
    delta,
    gpus,
    headline,
    summary,
)
from gpu_audit.diff.model import DiffResult, JobChange
from gpu_audit.report.escape import terminal_safe
from gpu_audit.report.formats import COMMANDS

FORMATS = COMMANDS["diff"]  # the one format list: report/formats.py
JSON_VERSION = 1
TABLE_HEADERS = ["file", "job", "change", "GPUs", "capacity", "runtime cap", "per run", "delta"]


def render(result: DiffResult, fmt: str) -> str:
    """The diff in `fmt` (json, markdown, text, csv, sarif, else the terminal table)."""
    if fmt == "json":
        return render_json(result)
    if fmt == "markdown":
        from gpu_audit.diff.markdown import render_markdown  # keeps diff.markdown off --help

        return render_markdown(result)
    if fmt in ("text", "csv"):
        from gpu_audit.diff.plain import render_csv, render_text  # keeps diff.plain off --help

        return render_text(result) if fmt == "text" else render_csv(result)
    if fmt == "sarif":
        from gpu_audit.diff.sarif import render_sarif  # keeps diff.sarif off --help

        return render_sarif(result)
    return render_table(result)


def render_table(result: DiffResult) -> str:
    """The table fits the terminal as `check`'s does: the capacity, cap, GPU and change columns
    go first, then the widest is clipped; the costs never are."""
    from gpu_audit.report.fit import fitted, terminal_width  # keeps report.fit off --help

    safe = terminal_safe
    width = terminal_width()
    said = safe(f"gpu-audit diff: {headline(result)}. {summary(result)}")
    lines = textwrap.wrap(said, width, break_on_hyphens=False)  # the table's width, as it
    changed = result.changed
    if changed:
        rows = [
            [
                j.file,
                j.name,
                j.change,
                across(j, gpus),
                across(j, capacity),
                across(j, cap),
                across_run(j),
                delta(j),
            ]
            for j in changed
        ]
        # then the change (added, removed, modified: the per-run cells say which, `→` or one)
        drop = ("runtime cap", "capacity", "GPUs", "change")
        keep = ("per run", "delta")  # the costs are never clipped
        lines += ["", fitted(TABLE_HEADERS, rows, width, drop, keep=keep)]
    for job in changed:
        extra = [f"  note: {n}" for n in job.notes]
        extra += [
            f"  + {f.severity} {f.rule_id}: {f.message} ({f.location})" for f in job.findings_new
        ]
        extra += [
            f"  - {f.severity} {f.rule_id}: resolved ({f.location})" for f in job.findings_resolved
        ]
        if extra:
            lines += ["", safe(f"{job.file} {job.name}:")]
            for line in map(safe, extra):
                lines += textwrap.wrap(
                    line, width, subsequent_indent="    ", break_on_hyphens=False
                )
    unchanged = len(result.jobs) - len(changed)
    if unchanged:
        lines += ["", f"{unchanged} GPU job(s) unchanged."]
    if result.prices_as_of:
        dates = f"Prices as of {', '.join(result.prices_as_of)}; sources: --format json."
        lines += textwrap.wrap(dates, width, break_on_hyphens=False)
    return "\n".join(lines) + "\n"


def render_json(result: DiffResult) -> str:
    """The diff as versioned JSON (`diff-v1.schema.json`), two-space indent, non-ASCII kept."""
    data: dict[str, Any] = {
        "version": JSON_VERSION,
        "kind": "diff",
        "base": {"ref": result.base, "commit": result.base_commit},
        "head": {"ref": result.head, "commit": result.head_commit},
        "jobs": [_job_json(j) for j in result.jobs],
        "total": asdict(result.total),
        "prices_as_of": list(result.prices_as_of),
        "errors": list(result.errors),
    }
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _job_json(job: JobChange) -> dict[str, Any]:
    data = asdict(job)
    for side in ("before", "after"):
        cost = getattr(job, side)
        if cost is not None:
            data[side]["unbounded"] = cost.unbounded
    data["unbounded"] = job.unbounded
    return data
