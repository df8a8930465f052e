"""The diff's gates: a cost increase over a threshold, and new findings at a severity."""

from __future__ import annotations

import re

from gpu_audit.core.frozen import record
from gpu_audit.core.resource import Severity
from gpu_audit.diff.model import DiffResult
from gpu_audit.errors import ConfigError, ExitCode
from gpu_audit.report.values import money

_THRESHOLD = re.compile(r"^\s*\$?(\d+(?:\.\d+)?)\s*(%?)\s*$")


@record
class Increase:
    """`--fail-on-increase`: dollars per run over all changed jobs, or percent of their before."""

    amount: float
    percent: bool

    @classmethod
    def parse(cls, text: str) -> Increase:
        """A `--fail-on-increase` threshold: dollars per run (`500`) or a percent (`20%`);
        ConfigError otherwise."""
        match = _THRESHOLD.match(text)
        if match is None:
            raise ConfigError(
                f"--fail-on-increase '{text}': expected dollars per run (500) or a percent (20%)"
            )
        return cls(float(match.group(1)), bool(match.group(2)))

    def __str__(self) -> str:
        return f"{self.amount:g}%" if self.percent else money(self.amount)


def verdict(
    result: DiffResult,
    increase: Increase | None,
    fail_on: str | None,
    fail_on_new: bool,
) -> tuple[ExitCode, list[str]]:
    """The exit code and one line per gate that tripped. Errors (2) come before gates (1)."""
    reasons = [*_increase(result, increase), *_findings(result, fail_on, fail_on_new)]
    if result.errors:
        return ExitCode.ERROR, reasons
    return (ExitCode.FINDINGS if reasons else ExitCode.OK), reasons


def _increase(result: DiffResult, increase: Increase | None) -> list[str]:
    if increase is None:
        return []
    total = result.total
    reasons = []
    if increase.percent:
        over = total.delta_usd > 0 and (
            total.delta_percent is None or total.delta_percent > increase.amount
        )
        size = "from $0" if total.delta_percent is None else f"{total.delta_percent:+,.1f}%"
    else:
        over = total.delta_usd > increase.amount
        size = money(total.delta_usd, signed=True)
    if over:
        reasons.append(f"the change costs {size} per run, over --fail-on-increase {increase}")
    for job in result.changed:  # an increase with no cap has no size: it trips any threshold
        if job.unbounded and not job.unpriced and (job.delta_hourly_usd or 0) > 0:
            sweep = any(c is not None and c.sweep for c in (job.before, job.after))
            what = "a sweep with no bound" if sweep else "no runtime cap"
            reasons.append(
                f"{job.file}: {job.name}: {money(job.delta_hourly_usd or 0, signed=True)}/h with "
                f"{what} (unbounded), over --fail-on-increase {increase}"
            )
    return reasons


def _findings(result: DiffResult, fail_on: str | None, fail_on_new: bool) -> list[str]:
    if fail_on == "none" or (fail_on is None and not fail_on_new):
        return []
    threshold = Severity.parse(fail_on or "info")
    flag = f"--fail-on {fail_on}" if fail_on else "--fail-on-new"
    return [
        f"{note.location}: new {note.severity} finding {note.rule_id}, at or above {flag}"
        for job in result.jobs
        for note in job.findings_new
        if Severity.parse(note.severity) >= threshold
    ]
