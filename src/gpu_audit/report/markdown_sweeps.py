"""The Markdown report's *Sweeps and finished runs* (`scan --since`), and the one-line form the
terminal table and the text report print: every name from the cloud escaped."""

from __future__ import annotations

from gpu_audit.core.results import ScanResult
from gpu_audit.core.runs import Sweep
from gpu_audit.report.escape import terminal_safe
from gpu_audit.report.markdown_text import inline, table
from gpu_audit.report.summary import plural
from gpu_audit.report.sweeps import ceiling_text, count, sweep_data
from gpu_audit.report.values import MISSING, money, percent


def _percent(value: object) -> str:
    """A share the JSON report states in percent (`sweep_data`), as few decimals as it needs."""
    return percent(
        value if isinstance(value, float) else None, "markdown", places=None, scaled=False
    )


ROWS = 50  # rows per table; the JSON report lists every sweep and trial


def _where(sweep: Sweep) -> str:
    return "/".join(v or "–" for v in (sweep.provider, sweep.account, sweep.region))


def _ceiling(sweep: Sweep, data: dict[str, object]) -> str:
    said = ceiling_text(sweep)
    if said is not None:
        return said
    hours = data["gpu_hours"]
    shown = MISSING["markdown"] if hours is None else f"{hours:,.1f}"
    ceiling = data["ceiling_gpu_hours"]
    return f"{shown} of {ceiling:,.1f}" if isinstance(ceiling, float) else f"{shown} (ceiling n/a)"


def _retried(value: int | None) -> str:
    return "retried: not stated" if value is None else f"{value} retried"


def _tuning_row(sweep: Sweep) -> list[str]:
    data = sweep_data(sweep)
    outcomes = data["trials_by_outcome"]
    assert isinstance(outcomes, dict)
    trials = (
        f"{len(sweep.trials)}: {outcomes['completed']} completed, {outcomes['stopped']} stopped "
        f"early, {outcomes['failed']} failed, {_retried(outcomes['retried'])}"
    )
    failed = f"{money(data['failed_usd'], 'markdown')} ({_percent(data['failed_share_pct'])})"
    return [
        inline(sweep.name, 80),
        inline(_where(sweep), 80),
        trials,
        money(data["cost_usd"], "markdown"),
        money(data["cost_per_success_usd"], "markdown"),
        failed,
        _ceiling(sweep, data),
        _percent(data["spot_savings_pct"]),
        count(sweep.interruptions),
    ]


def _job_row(sweep: Sweep) -> list[str]:
    data = sweep_data(sweep)
    hours = data["billable_hours"]
    return [
        inline(sweep.name, 80),
        inline(_where(sweep), 80),
        inline(sweep.state, 40),
        MISSING["markdown"] if hours is None else f"{hours:,.2f}",
        money(data["cost_usd"], "markdown"),
        _percent(data["spot_savings_pct"]),
        count(sweep.interruptions),
    ]


def _more(rows: int) -> list[str]:
    return ["", f"_… and {rows - ROWS} more (every one: `--format json`)._"] if rows > ROWS else []


def sweeps_section(result: ScanResult) -> list[str]:
    """The "Sweeps and finished runs" section: tuning sweeps and jobs alone, costliest first; no
    lines without sweeps."""
    sweeps = result.sweeps
    if not sweeps:
        return []
    since = min(s.since for s in sweeps).date().isoformat()
    tuning = sorted((s for s in sweeps if s.kind == "tuning"), key=lambda s: -(s.cost_usd or 0))
    alone = sorted((s for s in sweeps if s.kind != "tuning"), key=lambda s: -(s.cost_usd or 0))
    lines = [
        f"## Sweeps and finished runs since {since}",
        "",
        "What SageMaker and Vertex AI tuning sweeps and training jobs cost as they ran: billable "
        "time at the rate card's rate (SageMaker bills managed spot as fewer billable seconds). "
        "Cost per successful trial is the cost of every trial over the completed ones.",
    ]
    if tuning:
        headers = [
            "Sweep",
            "Where",
            "Trials",
            "Cost",
            "Per successful trial",
            "Failed trials",
            "GPU-hours",
            "Spot savings",
            "Interruptions",
        ]
        rows = [_tuning_row(s) for s in tuning[:ROWS]]
        lines += ["", *table(headers, rows, align="lllrrrrrr"), *_more(len(tuning))]
    if alone:
        headers = [
            "Training job",
            "Where",
            "State",
            "Billable hours",
            "Cost",
            "Spot savings",
            "Interruptions",
        ]
        rows = [_job_row(s) for s in alone[:ROWS]]
        lines += ["", *table(headers, rows, align="lllrrrr"), *_more(len(alone))]
    return lines


def sweeps_line(result: ScanResult) -> str | None:
    """One line for the terminal: the period's sweeps, their cost and cost per successful trial."""
    sweeps = result.sweeps
    if not sweeps:
        return None
    tuning = [s for s in sweeps if s.kind == "tuning"]
    total = sum(s.cost_usd or 0 for s in sweeps)
    completed = sum(s.completed for s in tuning)
    failed = sum(s.failed_usd or 0 for s in tuning)
    per = money(sum(s.cost_usd or 0 for s in tuning) / completed) if completed else "—"
    since = min(s.since for s in sweeps).date().isoformat()
    over = [s for s in tuning if (s.ceiling_used or 0) > 1]
    beyond = "".join(f"; {s.name} {ceiling_text(s)}" for s in over[:3])
    return terminal_safe(
        f"Finished runs since {since}: {plural(len(tuning), 'sweep')} and "
        f"{plural(len(sweeps) - len(tuning), 'training job')} cost {money(total)}; "
        f"{per} per successful trial; {money(failed)} on failed trials{beyond} "
        "(every sweep: --format markdown or json)"
    )
