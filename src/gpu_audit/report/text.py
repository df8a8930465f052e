"""Plain text, one line per finding (`path:line: severity rule: message`), for hooks and logs.

The default when stdout is not a terminal (pre-commit, CI, cron): editors and CI annotators
read `file:line:` prefixes, and it needs no table library at start-up. Waived and suppressed
findings are not listed one by one; the summary line counts them. Unreadable inputs go to
stderr (the CLI prints them), not into the report.
"""

from __future__ import annotations

import io
from typing import TextIO

from gpu_audit.model import Finding, Kind, ScanResult
from gpu_audit.report.escape import terminal_safe
from gpu_audit.report.since import counts_line, new_findings
from gpu_audit.report.summary import saving_text, summarize

# Control and bidi characters would let a tag value repaint a terminal or forge a line.
clean = terminal_safe


def render(result: ScanResult) -> str:
    buffer = io.StringIO()
    write(result, buffer)
    return buffer.getvalue()


def write(result: ScanResult, stream: TextIO) -> None:
    ordered = _ordered([f for f in result.findings if f.is_open])
    new = new_findings(result)
    for start in range(0, len(ordered), 4096):
        chunk = ordered[start : start + 4096]
        stream.write("".join(_line(f) + (" [new]\n" if id(f) in new else "\n") for f in chunk))
    for gap in result.coverage_gaps:
        stream.write(
            f"{clean(gap.location)}: incomplete: {clean(gap.error)}: {clean(gap.message)}\n"
        )
    if result.since is not None:
        stream.write(counts_line(result.since) + "\n")
    stream.write(summary_text(result) + "\n")


def _ordered(findings: list[Finding]) -> list[Finding]:
    return sorted(
        findings,
        key=lambda f: (f.resource.source.path or "", f.line or 0, f.resource.location, f.rule_id),
    )


def _line(finding: Finding) -> str:
    resource = finding.resource
    if resource.kind is Kind.JOB and resource.source.path:
        where = f"{resource.source.path}:{finding.line or 1}"
    else:
        where = resource.location
    saving = saving_text(finding) if finding.saving_usd else None
    money = f" (saves {saving})" if saving else ""
    return (
        f"{clean(where)}: {finding.severity.label} {clean(finding.rule_id)}: "
        f"{clean(finding.message)}{money}"
    )


def summary_text(result: ScanResult) -> str:
    from gpu_audit.report.table import summary_line

    return summary_line(summarize(result))
