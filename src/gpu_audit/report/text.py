"""Plain text, one line per finding (`path:line: severity rule: message`), for hooks and logs.

The default when stdout is not a terminal (pre-commit, CI, cron): editors and CI annotators
read `file:line:` prefixes, and it needs no table library at start-up. Waived and suppressed
findings are not listed one by one; the summary line counts them. Unreadable inputs go to
stderr (the CLI prints them), not into the report.
"""

from __future__ import annotations

import io
from datetime import datetime
from typing import TextIO

from gpu_audit.core.resource import Kind, Resource, Severity
from gpu_audit.core.results import Finding, ScanResult
from gpu_audit.core.savings import summarize
from gpu_audit.report.escape import terminal_safe
from gpu_audit.report.markdown_sweeps import sweeps_line
from gpu_audit.report.since import counts_line, new_findings
from gpu_audit.report.summary import price_date, saving_text, summary_line

# Control and bidi characters would let a tag value repaint a terminal or forge a line.
clean = terminal_safe


def render(result: ScanResult) -> str:
    """The text report as a string."""
    buffer = io.StringIO()
    write(result, buffer)
    return buffer.getvalue()


def write(result: ScanResult, stream: TextIO) -> None:
    """Write one line per open finding (`path:line: severity rule: message`, sorted by place), then
    the coverage gaps, the comparison's counts and the sweeps' line."""
    lines = _Lines(result.generated_at)
    ordered = lines.ordered([f for f in result.findings if f.is_open])
    new = new_findings(result)
    for start in range(0, len(ordered), 4096):
        chunk = ordered[start : start + 4096]
        stream.write("".join(lines.line(f) + (" [new]\n" if id(f) in new else "\n") for f in chunk))
    for gap in result.coverage_gaps:
        stream.write(
            f"{clean(gap.location)}: incomplete: {clean(gap.error)}: {clean(gap.message)}\n"
        )
    if result.since is not None:
        stream.write(counts_line(result.since, result.scope.command == "check") + "\n")
    runs = sweeps_line(result)
    if runs:
        stream.write(runs + "\n")
    stream.write(summary_text(result) + "\n")


class _Lines:
    """Findings as lines: `where: severity rule: message (saves …)`, every outside text cleaned.

    What a resource or a rule contributes is worked out once (a resource's place, a rule's
    label), and a message seen before is not cleaned again (a bounded memo): a scan of 100k
    resources has about 200k findings, most sharing their rule's and resource's texts.
    """

    def __init__(self, now: datetime | None = None) -> None:
        self.now = now  # when the report is made: a price older than the limit is marked
        self.dates: dict[int, str | None] = {}  # id(resource) → its price's date phrase
        self.places: dict[int, tuple[str, str]] = {}  # id(resource) → (path or "", location)
        self.rules: dict[tuple[Severity, str], str] = {}
        self.messages: dict[str, str] = {}

    def place(self, resource: Resource) -> tuple[str, str]:
        """A resource's (file, location), cached by identity."""
        known = self.places.get(id(resource))
        if known is None:  # the result holds every resource: an id is not reused meanwhile
            known = self.places[id(resource)] = (resource.source.path or "", resource.location)
        return known

    def ordered(self, findings: list[Finding]) -> list[Finding]:
        """The findings sorted by file, line, location, then rule."""

        def key(finding: Finding) -> tuple[str, int, str, str]:
            path, location = self.place(finding.resource)
            return (path, finding.line or 0, location, finding.rule_id)

        return sorted(findings, key=key)

    def line(self, finding: Finding) -> str:
        """A finding's line: where, severity and rule, the message, and its saving with its price's
        date; every value made terminal-safe."""
        resource = finding.resource
        if resource.kind is Kind.JOB and resource.source.path:
            where = clean(f"{resource.source.path}:{finding.line or 1}")
        else:
            where = self.cleaned(self.place(resource)[1])
        rule = self.rules.get((finding.severity, finding.rule_id))
        if rule is None:
            rule = f"{finding.severity.label} {clean(finding.rule_id)}"
            self.rules[(finding.severity, finding.rule_id)] = rule
        saving = saving_text(finding) if finding.saving_usd else None
        money = f" (saves {saving}{self.dated(resource)})" if saving else ""
        return f"{where}: {rule}: {self.cleaned(finding.message)}{money}"

    def dated(self, resource: Resource) -> str:
        """`; price as of 2026-07-20` beside a dollar figure (and when it is too old)."""
        key = id(resource)
        if key not in self.dates:
            self.dates[key] = price_date(resource, self.now)
        phrase = self.dates[key]
        return f"; {clean(phrase)}" if phrase else ""

    def cleaned(self, text: str) -> str:
        """`text` made terminal-safe, cached (the cache emptied at 65,536 messages)."""
        known = self.messages.get(text)
        if known is None:
            if len(self.messages) >= 1 << 16:
                self.messages.clear()
            known = self.messages[text] = clean(text)
        return known


def summary_text(result: ScanResult) -> str:
    """The summary line of a result (what `-q` prints)."""
    return summary_line(summarize(result))
