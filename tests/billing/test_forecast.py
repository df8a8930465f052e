"""The quarter before it ends: the forecast and the spend rises on a synthetic daily quarter
(tests/billing/daily_bill.py), run through the CLI as a user runs it on 20 August. Every
expected figure is worked out here from the quarter's arithmetic (`daily_bill.spend`), in
Decimal, never by the code under test."""

from __future__ import annotations

import csv
import io
import json
import re
from datetime import date, timedelta
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner

from gpu_audit.cli.main import main
from tests.billing import daily_bill
from tests.billing.daily_bill import CLUSTER_DAY, Q3_FIRST, SWEEP_DAYS, days, spend

SCHEMA = Path(__file__).resolve().parents[2] / "src/gpu_audit/billing/billing-v1.schema.json"
THROUGH = date(2026, 8, 19)  # the last day read on 20 August
NOW = "2026-08-20T06:00:00Z"
DAYS_LEFT = (date(2026, 9, 30) - THROUGH).days  # 42: 20 August to 30 September


def cents(amount: Decimal) -> float:
    return float(amount.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


@pytest.fixture(scope="module")
def bill(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return daily_bill.build(tmp_path_factory.mktemp("daily"), THROUGH)


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def billing(bill: tuple[Path, Path], *extra: str, fmt: str = "json") -> str:
    code, out, err = run(
        "billing", str(bill[0]), str(bill[1]), "--period", "2026-Q3", "--now", NOW,
        "--format", fmt, *extra,
    )  # fmt: skip
    assert code == 0, err
    return out


@pytest.fixture(scope="module")
def report(bill: tuple[Path, Path]) -> dict[str, Any]:
    body = json.loads(billing(bill))
    jsonschema.validate(body, json.loads(SCHEMA.read_text(encoding="utf-8")))
    return body


def expected(cloud: str | None, team: str | object | None = "*") -> tuple[Decimal, Decimal]:
    """(spend to date, forecast) by the method: to date + the last 14 days' mean × 42."""
    kw: dict[str, Any] = {"team": team}
    to_date = sum((spend(d, cloud, **kw) for d in days(Q3_FIRST, THROUGH)), Decimal(0))
    window = [spend(THROUGH - timedelta(days=i), cloud, **kw) for i in range(14)]
    return to_date, to_date + sum(window, Decimal(0)) / 14 * DAYS_LEFT


def test_the_forecast_is_spend_to_date_plus_the_last_14_days_mean_per_cloud_team_and_total(
    report: dict[str, Any],
) -> None:
    f = report["forecast"]
    assert f["last_day"] == "2026-08-19" and f["days_left"] == 42 and f["window_days"] == 14
    assert "14 days" in f["method"]
    for line, (cloud, team) in [
        (f["total"], (None, "*")),
        *((p, (p["key"], "*")) for p in f["clouds"]),
        *((p, (None, p["key"])) for p in f["teams"]),
    ]:
        to_date, forecast = expected(cloud, team)
        assert (line["to_date_usd"], line["forecast_usd"]) == (cents(to_date), cents(forecast))
    assert [p["key"] for p in f["clouds"]] == ["aws", "gcp"]
    assert {p["key"] for p in f["teams"]} == {"nlp", "research", "vision"}
    # the reservation's unused hours are not GPU usage: the total is the report's GPU figure
    assert f["total"]["to_date_usd"] == report["totals"]["gpu"]["effective_usd"]
    # by hand, nlp after the reservation: 2 × $20 × (24 × 10 weekdays + 6 × 4 weekend days) / 14
    nlp = next(p for p in f["teams"] if p["key"] == "nlp")
    assert nlp["daily_mean_usd"] == cents(Decimal(2 * 20 * (24 * 10 + 6 * 4)) / 14)


def test_a_steady_team_ends_the_quarter_inside_the_band(report: dict[str, Any]) -> None:
    """nlp on the reservation and vision after its sweep are steady weekday/weekend patterns:
    what the quarter really spends lies inside the band the 20 August run gives."""
    teams = {p["key"]: p for p in report["forecast"]["teams"]}
    for team in ("nlp", "vision"):
        actual = sum((spend(d, team=team) for d in days(Q3_FIRST, date(2026, 9, 30))), Decimal(0))
        line = teams[team]
        assert line["low_usd"] <= cents(actual) <= line["high_usd"], team
    assert teams["nlp"]["forecast_usd"] == cents(
        sum((spend(d, team="nlp") for d in days(Q3_FIRST, date(2026, 9, 30))), Decimal(0))
    )  # six full weeks ahead of a weekly pattern: exact


def test_the_cluster_and_the_sweep_are_anomalies_on_their_days_and_weekends_are_not(
    report: dict[str, Any],
) -> None:
    found = {(a["series"], a["key"]): a for a in report["anomalies"]}
    assert set(found) == {("team", "research"), ("team", "vision")}
    cluster = found[("team", "research")]
    per_day = 2 * 24 * Decimal(55)  # two p5.48xlarge around the clock
    so_far = per_day * ((THROUGH - CLUSTER_DAY).days + 1)
    assert (cluster["start"], cluster["ongoing"]) == ("2026-08-14", True)
    assert cluster["above_usd"] == cents(so_far)
    assert cluster["forecast_usd"] == cents(so_far + per_day * DAYS_LEFT)
    sweep = found[("team", "vision")]
    assert (sweep["start"], sweep["last_day"], sweep["ongoing"]) == (
        "2026-08-05", "2026-08-07", False
    )  # fmt: skip
    extra = daily_bill.SWEEP_TRIALS * 8 * Decimal("2.90") * len(SWEEP_DAYS)
    assert sweep["above_usd"] == sweep["forecast_usd"] == cents(extra)
    # through the policy engine: one finding per team, of kind spend, with the day it started
    rises = [f for f in report["findings"] if f["rule_id"] == "billed-spend-rise"]
    assert sorted((f["resource_id"], f["rise_start"]) for f in rises) == [
        ("team:research", "2026-08-14T00:00:00Z"),
        ("team:vision", "2026-08-05T00:00:00Z"),
    ]


def test_a_period_already_over_has_no_forecast(bill: tuple[Path, Path]) -> None:
    code, out, err = run("billing", str(bill[0]), str(bill[1]), "--period", "2026-Q3",
                         "--now", "2026-10-02T00:00:00Z", "--format", "json")  # fmt: skip
    assert code == 0, err
    body = json.loads(out)
    assert body["forecast"] is None
    assert {a["key"] for a in body["anomalies"]} == {"research", "vision"}  # still shown


def test_csv_markdown_and_table_carry_the_forecast_and_anomalies(
    bill: tuple[Path, Path], report: dict[str, Any]
) -> None:
    rows = list(csv.DictReader(io.StringIO(billing(bill, fmt="csv"))))
    total = next(r for r in rows if r["section"] == "forecast" and r["dimension"] == "total")
    assert Decimal(total["effective_usd"]) == Decimal(
        str(report["forecast"]["total"]["forecast_usd"])
    )
    anomalies = {r["resource_id"]: r for r in rows if r["section"] == "anomaly"}
    assert anomalies["research"]["key"] == "2026-08-14"
    md = billing(bill, fmt="markdown")
    assert "## Forecast to the period's end" in md and "## GPU spend anomalies" in md
    chart = re.search(r"```mermaid\nxychart-beta\n(.*?)```", md, re.S)
    assert chart, md
    bars = re.search(r"bar \[(.*?)\]", chart.group(1))
    assert bars
    values = [Decimal(v) for v in bars.group(1).split(", ")]
    assert len(values) == (THROUGH - Q3_FIRST).days + 1
    assert values[(CLUSTER_DAY - Q3_FIRST).days] == Decimal(str(cents(spend(CLUSTER_DAY))))
    assert "| 2026-08-14 | \\$" in md  # the table beside the chart
    table = billing(bill, fmt="table")
    assert "Forecast to the period's end" in table and "team research" in table


def test_the_engine_finds_what_python_finds_from_the_same_day_groups(
    bill: tuple[Path, Path],
) -> None:
    """The daily groups summed in DuckDB (billing/daybook.py) give the period's groups, the
    forecast, every team's and resource's rise and each team's spend that the day groups
    give in Python; the engine's pre-test keeps every series with a rise (and drops some)."""
    from datetime import UTC, datetime

    from gpu_audit.billing import daybook, duck
    from gpu_audit.billing.anomaly import detect, from_days, may_rise
    from gpu_audit.billing.daily import collapse, run_daily
    from gpu_audit.billing.exports import discover
    from gpu_audit.billing.forecast import forecast
    from gpu_audit.billing.judge import resource_key
    from gpu_audit.billing.period import parse_period
    from gpu_audit.billing.report import DEFAULT_TAGS, gpu_types, query_keys

    period, keys, types = parse_period("2026-Q3"), query_keys(DEFAULT_TAGS), gpu_types()
    paths = [str(p) for p in bill]
    _, days_read = run_daily(paths, period, keys, types)
    python = from_days(days_read, "team")
    conn = duck.connect()
    daybook.create(conn, keys)
    daybook.load(conn, [discover(p, duck.file_system(conn), period) for p in paths], period,
                 keys, types, paths)  # fmt: skip
    groups = daybook.collapse(conn, keys)
    engine = daybook.daily(conn, groups, keys, "team", may_rise, resource_key)
    assert sorted(map(repr, groups)) == sorted(map(repr, collapse(days_read)))
    now = datetime(2026, 8, 20, 6, tzinfo=UTC)
    assert forecast(engine.forecast_days, period, now, "team") == forecast(
        python.forecast_days, period, now, "team"
    )
    by_team, by_resource = detect(engine, period)
    assert (by_team, by_resource) == detect(python, period)
    assert by_team  # the cluster and the sweep rise (new resources: no history of their own)
    assert len(engine.resources) < len(python.resources)
    assert all(python.resources[k] == v for k, v in engine.resources.items())
    assert dict(engine.team_spend) == dict(python.team_spend)
    assert engine.last == python.last and dict(engine.teams) == {
        k: dict(v) for k, v in python.teams.items()
    }


def test_the_engines_pre_test_keeps_every_series_with_a_rise() -> None:
    """`may_rise` on 400 random series (steady, weekday/weekend, jumps of every size near the
    threshold, gaps, a late start): every series `rises` finds a rise in is kept."""
    import random

    from gpu_audit.billing import duck
    from gpu_audit.billing.anomaly import may_rise, rises

    rng = random.Random(45)
    first, last = date(2026, 6, 1), date(2026, 8, 31)
    conn = duck.connect()
    conn.execute("CREATE TEMP TABLE s (sid BIGINT, day DATE, v DECIMAL(38, 10))")
    series: dict[int, dict[date, Decimal]] = {}
    for sid in range(400):
        start = first + timedelta(days=rng.randrange(40))
        base = Decimal(rng.choice([0, 1, 3, 50, 2000]))
        jump_at = start + timedelta(days=rng.randrange(10, 60))
        jump = Decimal(rng.choice([0, 0.5, 2.9, 3.0, 3.1, 4, 10])) * max(base / 10, Decimal(1))
        one: dict[date, Decimal] = {}
        for day in days(start, last):
            if rng.random() < 0.05:
                continue  # a day without rows: $0
            weekend = Decimal("0.4") if day.weekday() >= 5 and sid % 2 else Decimal(1)
            noise = Decimal(rng.randint(-3, 3)) / 100 * base
            one[day] = (base * weekend + noise + (jump if day >= jump_at else 0)).quantize(
                Decimal("0.0000000001")
            )
        series[sid] = one
    rows = [(sid, d, str(v)) for sid, one in series.items() for d, v in one.items()]
    conn.execute(
        "INSERT INTO s SELECT unnest(?::BIGINT[]), unnest(?::DATE[]), "
        "CAST(unnest(?::VARCHAR[]) AS DECIMAL(38, 10))",
        [list(column) for column in zip(*rows, strict=True)],
    )
    kept = set(may_rise(conn, "s", last))
    rising = {sid for sid, one in series.items() if rises(one, last, 30, "resource", str(sid))}
    assert len(rising) > 40 and rising <= kept
    assert len(kept) < len(series) - 40  # and the pre-test does leave series out


def test_the_engines_coarse_test_is_pythons_at_the_edges() -> None:
    """A day group charged over more than 25 hours is coarse (a weekly or monthly row), told in
    the engine by its times in microseconds and in Python by a timedelta: the two agree at the
    boundary (25 h exactly is not coarse, a microsecond more is), at zero, backwards and with a
    time missing."""
    from dataclasses import replace
    from datetime import UTC, datetime

    from gpu_audit.billing import daily, daybook, duck

    start = datetime(2026, 8, 1, tzinfo=UTC)
    spans = [timedelta(0), timedelta(hours=25), timedelta(hours=25, microseconds=1),
             timedelta(days=31), -timedelta(days=2), None]  # fmt: skip
    conn = duck.connect()
    base = daybook._slim("aws", "team", None, None, start, start)
    for span in spans:
        for first, last in ((start, None if span is None else start + span), (None, start)):
            row = conn.execute(
                f"SELECT {daybook._COARSE} FROM (SELECT ?::TIMESTAMPTZ AS first_charge, "
                "?::TIMESTAMPTZ AS last_charge)",
                [first, last],
            ).fetchone()
            assert row is not None
            python = daily.coarse(replace(base, first_charge=first, last_charge=last))
            assert row[0] is python, (span, first, last)
