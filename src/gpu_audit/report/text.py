"""Plain text, one line per finding (`path:line: severity rule: message`), for hooks and logs.

The default when stdout is not a terminal (pre-commit, CI, cron): editors and CI annotators
read `file:line:` prefixes, and it needs no table library at start-up. Waived and suppressed
findings are not listed one by one; the summary line counts them. Unreadable inputs go to
stderr (the CLI prints them), not into the report.
"""

from __future__ import annotations

import re

from gpu_audit.model import Finding, Kind, ScanResult
from gpu_audit.report.since import counts_line, new_findings
from gpu_audit.report.summary import summarize

# C0/C1 control characters (ESC sequences included) would let a tag value repaint a terminal.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def clean(text: object) -> str:
    """One printable line: newlines and control characters from cloud or file values escaped."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", str(text))


def render(result: ScanResult) -> str:
    new = new_findings(result)
    lines = [
        _line(f) + (" [new]" if id(f) in new else "")
        for f in _ordered(result.findings)
        if f.is_open
    ]
    for gap in result.coverage_gaps:
        lines.append(f"{clean(gap.location)}: incomplete: {clean(gap.error)}: {clean(gap.message)}")
    if result.since is not None:
        lines.append(counts_line(result.since))
    lines.append(summary_text(result))
    return "\n".join(lines) + "\n"


def _ordered(findings: tuple[Finding, ...]) -> list[Finding]:
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
    saving = finding.monthly_savings_usd
    money = f" (saves ${saving:,.0f}/month)" if saving else ""
    return (
        f"{clean(where)}: {finding.severity.label} {finding.rule_id}: "
        f"{clean(finding.message)}{money}"
    )


def summary_text(result: ScanResult) -> str:
    from gpu_audit.report.table import summary_line

    return summary_line(summarize(result))
