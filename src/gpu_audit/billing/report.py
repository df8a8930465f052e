"""A billing run, end to end: read the exports, add up the period, judge it, join the history."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from gpu_audit.billing import daybook, duck, oci
from gpu_audit.billing.anomaly import Rise, from_days, may_rise, with_rises
from gpu_audit.billing.coverage import Coverage, join_history
from gpu_audit.billing.daily import collapse
from gpu_audit.billing.daybook import Daily
from gpu_audit.billing.exports import ExportFiles, discover
from gpu_audit.billing.forecast import Forecast, forecast
from gpu_audit.billing.incremental import Reading, run_incremental
from gpu_audit.billing.judge import billed_resources, resource_key
from gpu_audit.billing.model import BilledGroup
from gpu_audit.billing.period import Period
from gpu_audit.billing.summary import BillingSummary, summarize
from gpu_audit.catalog import instance_types, normalise_type
from gpu_audit.core.frozen import record
from gpu_audit.core.resource import Kind, Resource
from gpu_audit.core.results import Finding, NotEvaluated, WaiverStatus
from gpu_audit.errors import ConfigError
from gpu_audit.history.billing_cache import ForecastRow
from gpu_audit.policy.engine import evaluate
from gpu_audit.policy.loader import Policy

DEFAULT_TAGS = ("team", "project", "owner")
WORKLOAD_TAG = "workload"


@record
class BillingReport:
    generated_at: datetime
    engine: str
    summary: BillingSummary
    resources: tuple[Resource, ...]
    findings: tuple[Finding, ...]
    not_evaluated: tuple[NotEvaluated, ...]
    waivers: tuple[WaiverStatus, ...]
    policy_files: tuple[str, ...]
    coverage: Coverage | None = None
    forecast: Forecast | None = None  # to the period's end (billing/forecast.py)
    rises: tuple[Rise, ...] = ()  # every team's and resource's largest rise (billing/anomaly.py)
    reading: Reading | None = None  # what an incremental run read (billing/incremental.py)
    past_forecasts: tuple[ForecastRow, ...] = ()  # earlier runs' totals for this period

    @property
    def open_findings(self) -> tuple[Finding, ...]:
        """The findings not waived."""
        return tuple(f for f in self.findings if f.is_open)

    @property
    def waste_usd(self) -> float:
        """Open findings' dollars over the period, the largest per resource (never added twice)."""
        best: dict[str, float] = {}
        for f in self.open_findings:
            if f.saving_usd is not None and f.saving_usd > 0:
                best[f.resource.id] = max(best.get(f.resource.id, 0.0), f.saving_usd)
        return round(sum(best.values()), 2)


def query_keys(tag_keys: Sequence[str]) -> tuple[str, ...]:
    """The tags the query reads: the report's, and `workload` (it says training or serving
    where the usage type does not). A key no cloud allows (empty, a backslash, a quote, a
    control character) is refused: it would be a broken JSON path in the query."""
    for key in tag_keys:
        if not key.strip() or any(c in key for c in '\\"') or not key.isprintable():
            raise ConfigError(
                f"--tag: {key[:80]!r} is not a tag key (AWS, Azure and GCP keys are non-empty, "
                "with no backslash, quote or control character)"
            )
    return (*tag_keys, *(() if WORKLOAD_TAG in tag_keys else (WORKLOAD_TAG,)))


def gpu_types() -> list[tuple[str, str, str, int]]:
    """The catalog's GPU instance types (and OCI's GPU shapes) as (cloud, lower-case type, GPU
    model, GPUs)."""
    return [
        (spec.cloud, normalise_type(spec.instance_type), spec.gpu_model, spec.gpu_count)
        for spec in instance_types()
        if spec.gpu_count > 0
    ] + oci.gpu_types()


def read_groups(
    paths: Sequence[str], period: Period, tag_keys: Sequence[str]
) -> tuple[BillingSummary, list[BilledGroup]]:
    """The period's summary and the billing query's groups from the exports at `paths` (DuckDB; the
    billing extra)."""
    keys = query_keys(tag_keys)
    exports, groups = duck.run(paths, period, keys, gpu_types())
    return summarize(period, exports, groups, tag_keys), groups


def read_remote(
    engine: str,
    table: str,
    period: Period,
    tag_keys: Sequence[str],
    where: Mapping[str, str | None],
) -> tuple[BillingSummary, list[BilledGroup], Daily]:
    """The same daily aggregation run by Athena or BigQuery on the table the bill lives in:
    the period's groups (the days summed back, as `read_daily`'s) and the daily series."""
    from gpu_audit.billing import remote  # keeps billing.remote off `billing`'s start-up

    keys = query_keys(tag_keys)
    sql = remote.remote_sql(engine, table, period, keys, gpu_types())
    if engine == "athena":
        days = remote.run_athena(sql, keys, where.get("workgroup"), where.get("output"))
    else:
        project = where.get("project")
        if not project:
            raise ConfigError(
                "--engine bigquery needs --bigquery-project (the project that runs the job)"
            )
        days = remote.run_bigquery(sql, keys, project)
    groups = collapse(days)
    source = ExportFiles(path=table, cloud=remote.ENGINES[engine], files=())
    daily = from_days(days, team_key(tag_keys))
    return summarize(period, [source], groups, tag_keys), groups, daily


def judge(
    summary: BillingSummary,
    groups: Sequence[BilledGroup],
    policy: Policy,
    now: datetime,
    history: str | None = None,
    engine: str = "duckdb",
    daily: Daily | None = None,
    reading: Reading | None = None,
) -> BillingReport:
    """`daily` (the daily series, `billing.daybook`): the forecast, and the rises the engine
    judges (fields on the billed resources, and a `spend` resource per team)."""
    resources = tuple(billed_resources(groups, summary.period))
    team = team_key(summary.tag_keys)
    daily = daily or from_days((), team)
    resources, rises = with_rises(resources, daily, summary.period, team)
    evaluation = evaluate(resources, policy, now)
    return BillingReport(
        generated_at=now,
        engine=engine,
        summary=summary,
        resources=resources,
        # most severe first, then the most dollars: the order a reader acts in
        findings=tuple(
            sorted(
                evaluation.findings,
                key=lambda f: (-f.severity, -(f.saving_usd or 0.0), f.rule_id, f.resource.id),
            )
        ),
        not_evaluated=evaluation.not_evaluated,
        waivers=evaluation.waivers,
        policy_files=tuple(policy.files),
        coverage=join_history(history, [r for r in resources if r.kind is Kind.BILLED])
        if history
        else None,
        forecast=forecast(daily.forecast_days, summary.period, now, team),
        rises=rises,
        reading=reading,
    )


def team_key(tag_keys: Sequence[str]) -> str | None:
    """The tag the forecast and the rises are per team by: `team`, else the first `--tag`."""
    return "team" if "team" in tag_keys else (tag_keys[0] if tag_keys else None)


def read_daily(
    paths: Sequence[str],
    period: Period,
    tag_keys: Sequence[str],
    history: str | None = None,
    now: datetime | None = None,
    full: bool = False,
) -> tuple[BillingSummary, list[BilledGroup], Daily, Reading | None]:
    """`read_groups` with the daily series: one read of the exports gives both; with a
    history, only the files that are new or changed are read (billing/incremental.py). The
    daily groups stay in the engine (billing/daybook.py): only the period's groups and what
    the forecast and the anomalies read come back."""
    keys, types = query_keys(tag_keys), gpu_types()
    reading = None
    conn = duck.connect()
    try:
        if history:
            exports, reading = run_incremental(
                conn, paths, period, keys, types, history, now or period.end, full
            )
        else:
            exports = [discover(path, duck.file_system(conn), period) for path in paths]
            daybook.create(conn, keys)
            daybook.load(conn, exports, period, keys, types, paths)
        groups = daybook.collapse(conn, keys)
        daily = daybook.daily(conn, groups, keys, team_key(tag_keys), may_rise, resource_key)
    finally:
        conn.close()
    return summarize(period, exports, groups, tag_keys), groups, daily, reading
