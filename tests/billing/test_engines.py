"""One query definition, three engines: the Athena and BigQuery renderings parse in their own
dialect, the Athena one gives DuckDB's answer on the same rows, and `--engine athena` reads that
answer back through boto3 from a moto server on loopback (its results queued through moto's
own API, as Athena would page them)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from datetime import date, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import requests
import sqlglot
from click.testing import CliRunner

from gpu_audit.billing import duck
from gpu_audit.billing.daily import DayGroup, collapse, run_daily
from gpu_audit.billing.exports import discover
from gpu_audit.billing.period import parse_period
from gpu_audit.billing.query import GROUP_COLUMNS, SUM_COLUMNS
from gpu_audit.billing.remote import remote_sql
from gpu_audit.billing.report import DEFAULT_TAGS, WORKLOAD_TAG, gpu_types
from gpu_audit.cli.main import main
from tests.billing.quarter import Quarter, build_quarter

KEYS = (*DEFAULT_TAGS, WORKLOAD_TAG)
PERIOD = parse_period("2026-Q3")
TABLE = "focus_db.aws_focus"


@pytest.fixture(scope="module")
def quarter(tmp_path_factory: pytest.TempPathFactory) -> Quarter:
    return build_quarter(tmp_path_factory.mktemp("bill"))


@pytest.mark.parametrize(
    ("engine", "table", "quoted", "marks"),
    [
        ("athena", TABLE, '"focus_db"."aws_focus"', ("ELEMENT_AT(\"Tags\", 'user:team')", "TRY_CAST", "REGEXP_LIKE")),
        ("bigquery", "acme.focus.gcp_billing_export_focus_01", "`acme`.`focus`.`gcp_billing_export_focus_01`",
         ("SAFE_CAST", "REGEXP_CONTAINS", "UNNEST(`x_Labels`)", "BIGNUMERIC")),
    ],
)  # fmt: skip
def test_each_rendering_parses_in_its_own_dialect(
    engine: str, table: str, quoted: str, marks: tuple[str, ...]
) -> None:
    sql = remote_sql(engine, table, PERIOD, KEYS, gpu_types())
    sqlglot.parse_one(sql, read=engine)  # raises on SQL the engine's grammar refuses
    assert quoted in sql
    for mark in marks:
        assert mark in sql, mark
    for duckdb_only in ("read_parquet", "read_csv", "TIMESTAMPTZ", "regexp_matches"):
        assert duckdb_only not in sql


def test_a_bad_table_name_is_one_line() -> None:
    result = CliRunner().invoke(
        main,
        ["billing", "--engine", "athena", "--table", "a.b.c.d", "--period", "2026-Q3", "--sql"],
    )
    assert result.exit_code == 2 and "--table" in result.stderr


def _athena_view(conn: Any, folder: Path) -> None:
    """The AWS export's current files as the Glue table Athena would query."""
    export = discover(str(folder), duck.file_system(conn), PERIOD)
    from gpu_audit.billing.remote import SCHEMAS

    files = ", ".join(f"'{name}'" for name in export.files)
    rel = f"read_parquet([{files}], union_by_name = true)"
    present = dict(
        conn.execute(
            f"SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM {rel})"
        ).fetchall()
    )
    # the columns the table has that these files lack are NULL (as in a Glue table; FOCUS 1.3's
    # provider column read as the table's ProviderName), tags written as JSON a map
    absent = "".join(
        f', {"ServiceProviderName" if "ServiceProviderName" in present else f"CAST(NULL AS {kind})"} AS "{name}"'
        if name == "ProviderName"
        else f', CAST(NULL AS {kind}) AS "{name}"'
        for name, kind in SCHEMAS["athena"].items()
        if name not in present
    )
    tags = present.get("Tags") == "VARCHAR"
    replace = ' REPLACE (CAST(json("Tags") AS MAP(VARCHAR, VARCHAR)) AS "Tags")' if tags else ""
    conn.execute("CREATE SCHEMA focus_db")
    conn.execute(f"CREATE VIEW focus_db.aws_focus AS SELECT *{replace}{absent} FROM {rel}")


def athena_answer(folder: Path) -> tuple[list[str], list[tuple[Any, ...]]]:
    """Athena's SQL, read back into DuckDB's dialect and run on the same rows."""
    conn = duck.connect()
    _athena_view(conn, folder)
    sql = remote_sql("athena", TABLE, PERIOD, KEYS, gpu_types())
    result = conn.execute(sqlglot.transpile(sql, read="athena", write="duckdb")[0])
    return [d[0] for d in result.description], result.fetchall()


def test_the_athena_rendering_gives_duckdbs_answer(quarter: Quarter) -> None:
    _, rows = athena_answer(quarter.root / "aws")
    _, direct = duck.run([str(quarter.root / "aws")], PERIOD, KEYS, gpu_types())
    days = [DayGroup(row[-1], duck.group(row[:-1], KEYS)) for row in rows]
    assert sorted(map(repr, collapse(days))) == sorted(map(repr, direct))
    # the daily series is DuckDB's daily read's, group by group and day by day
    _, daily = run_daily([str(quarter.root / "aws")], PERIOD, KEYS, gpu_types())
    assert sorted(map(repr, days)) == sorted(map(repr, daily))
    assert len({d.day for d in days if d.day is not None}) > 1
    # the GPU resource's transfer and the GPU team's other transfer are in the one query
    assert {"transfer", "team-transfer"} <= {g.kind for g in direct}


@pytest.fixture()
def athena(moto_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_url)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAGPUAUDITTEST0001")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "gpu-audit-test-secret-never-printed")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    yield moto_url


def _text(value: Any) -> dict[str, str]:
    if value is None:
        return {}
    if isinstance(value, bool):
        return {"VarCharValue": str(value).lower()}
    if isinstance(value, date) and not isinstance(value, datetime):  # Athena's DATE
        return {"VarCharValue": value.isoformat()}
    if hasattr(value, "strftime"):
        return {"VarCharValue": value.strftime("%Y-%m-%d %H:%M:%S.000 UTC")}
    return {"VarCharValue": str(value)}


def _queue_athena(athena: str, folder: Path) -> None:
    """The Athena rendering's answer on `folder`'s rows, queued in moto as Athena pages it."""
    names, rows = athena_answer(folder)
    header = {"Data": [{"VarCharValue": name} for name in names]}
    answer = [header, *({"Data": [_text(v) for v in row]} for row in rows)]
    queued = {"account_id": "123456789012", "region": "us-east-1",
              "results": [{"rows": answer, "column_info": [{"Name": n, "Type": "varchar"} for n in names]}]}  # fmt: skip
    assert (
        requests.post(
            f"{athena}/moto-api/static/athena/query-results", json=queued, timeout=10
        ).status_code
        == 201
    )


def test_engine_athena_reads_the_aggregate_through_boto3(quarter: Quarter, athena: str) -> None:
    _queue_athena(athena, quarter.root / "aws")
    remote = CliRunner().invoke(main, ["billing", "--engine", "athena", "--table", TABLE, "--period", "2026-Q3",
                                       "--athena-output", "s3://acme-athena-results/", "--format", "json"])  # fmt: skip
    assert remote.exit_code == 0, remote.stderr
    local = CliRunner().invoke(
        main, ["billing", str(quarter.root / "aws"), "--period", "2026-Q3", "--format", "json"]
    )
    got, want = json.loads(remote.stdout), json.loads(local.stdout)
    assert got["engine"] == "athena" and got["sources"][0]["path"] == TABLE
    assert got["totals"] == want["totals"] and got["breakdowns"] == want["breakdowns"]
    assert got["team_transfer"] == want["team_transfer"] and want["team_transfer"]["tag:team"]
    assert [f["resource_id"] for f in got["findings"]] == [
        f["resource_id"] for f in want["findings"]
    ]


def test_an_athena_error_is_one_line(athena: str) -> None:
    result = CliRunner().invoke(main, ["billing", "--engine", "athena", "--table", TABLE, "--period", "2026-Q3",
                                       "--athena-workgroup", "no-such-workgroup"])  # fmt: skip
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        "gpu-audit: error: athena: An error occurred (InvalidRequestException) when calling the "
        "StartQueryExecution operation: WorkGroup does not exist"
    ]


BQ_TABLE = "acme-billing.focus.gcp_billing_export_focus_01"


def bigquery_answer(folder: Path) -> tuple[list[str], list[tuple[Any, ...]]]:
    """BigQuery's SQL, read back into DuckDB's dialect and run on the GCP export's rows (as a
    table with the columns BigQuery's FOCUS export has; those the files lack are NULL)."""
    from gpu_audit.billing.remote import SCHEMAS

    conn = duck.connect()
    export = discover(str(folder), duck.file_system(conn), PERIOD)
    files = ", ".join(f"'{p}'" for p in export.files)
    present = {
        row[0]
        for row in conn.execute(
            f"DESCRIBE SELECT * FROM read_parquet([{files}], union_by_name = true)"
        ).fetchall()
    }
    columns = ", ".join(
        f'"{name}"' if name in present else f'CAST(NULL AS {kind}) AS "{name}"'
        for name, kind in SCHEMAS["bigquery"].items()
    )
    conn.execute('CREATE SCHEMA "acme-billing"')
    conn.execute(
        f'CREATE VIEW "acme-billing".gcp_focus AS SELECT {columns} FROM read_parquet([{files}], union_by_name = true)'
    )
    sql = remote_sql("bigquery", BQ_TABLE, PERIOD, KEYS, gpu_types())
    local = sqlglot.transpile(sql, read="bigquery", write="duckdb")[0]
    # SQLGlot reads BIGNUMERIC back as DECIMAL(38, 5); BigQuery's BIGNUMERIC keeps 38 digits
    # after the point, so the read-back keeps DuckDB's 10 (the Vertex rows have 6)
    local = local.replace("DECIMAL(38, 5)", "DECIMAL(38, 10)")
    local = local.replace(
        '"acme-billing"."focus"."gcp_billing_export_focus_01"', '"acme-billing".gcp_focus'
    )
    result = conn.execute(local)
    return [d[0] for d in result.description], result.fetchall()


class BigQueryServer:
    """jobs.query answers 'not done yet'; jobs.getQueryResults then pages the rows, two a page,
    with BigQuery's own value encoding (every cell a string; TIMESTAMP as epoch seconds)."""

    def __init__(self, rows: list[tuple[Any, ...]], raw: bytes | None = None) -> None:
        self.pages = [rows[i : i + 2] for i in range(0, len(rows), 2)] or [[]]
        self.requests: list[str] = []
        self.raw = raw  # answer the pages with these bytes instead (a broken answer)

    @staticmethod
    def cell(value: Any) -> dict[str, Any]:
        if value is None:
            return {"v": None}
        if isinstance(value, bool):
            return {"v": str(value).lower()}
        if hasattr(value, "timestamp"):
            return {"v": f"{value.timestamp():.6E}"}
        return {"v": str(value)}

    def handler(self) -> type:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _reply(self, body: dict[str, Any]) -> None:
                data = (
                    json.dumps(body).encode()
                    if server.raw is None or "jobReference" in body
                    else server.raw
                )
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:
                server.requests.append(f"POST {self.path}")
                length = int(self.headers["Content-Length"])
                assert json.loads(self.rfile.read(length))["useLegacySql"] is False
                self._reply({"jobReference": {"projectId": "acme-billing", "jobId": "job-1", "location": "US"},
                             "jobComplete": False})  # fmt: skip

            def do_GET(self) -> None:
                server.requests.append(f"GET {self.path}")
                query = parse_qs(urlsplit(self.path).query)
                index = int(query.get("pageToken", ["0"])[0])
                page = {
                    "jobComplete": True,
                    "rows": [{"f": [server.cell(v) for v in row]} for row in server.pages[index]],
                }
                if index + 1 < len(server.pages):
                    page["pageToken"] = str(index + 1)
                self._reply(page)

        return Handler


def test_engine_bigquery_pages_the_aggregate_through_an_authorized_session(
    quarter: Quarter, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, rows = bigquery_answer(quarter.root / "gcp")
    fake = BigQueryServer(rows)
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), fake.handler())
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        monkeypatch.setenv(
            "GPU_AUDIT_BIGQUERY_ENDPOINT", f"http://127.0.0.1:{httpd.server_address[1]}"
        )
        remote = CliRunner().invoke(main, ["billing", "--engine", "bigquery", "--table", BQ_TABLE, "--bigquery-project",
                                           "acme-billing", "--period", "2026-Q3", "--format", "json"])  # fmt: skip
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert remote.exit_code == 0, remote.stderr
    assert fake.requests[0] == "POST /bigquery/v2/projects/acme-billing/queries"
    assert len(fake.requests) == 1 + len(fake.pages) and "location=US" in fake.requests[-1]
    local = CliRunner().invoke(
        main, ["billing", str(quarter.root / "gcp"), "--period", "2026-Q3", "--format", "json"]
    )
    got, want = json.loads(remote.stdout), json.loads(local.stdout)
    assert got["engine"] == "bigquery"
    assert got["totals"] == want["totals"] and got["breakdowns"] == want["breakdowns"]
    assert got["team_transfer"] == want["team_transfer"] and want["team_transfer"]["tag:team"]
    assert [f["resource_id"] for f in got["findings"]] == [
        f["resource_id"] for f in want["findings"]
    ]


def test_bigquery_needs_a_project() -> None:
    result = CliRunner().invoke(
        main, ["billing", "--engine", "bigquery", "--table", BQ_TABLE, "--period", "2026-Q3"]
    )
    assert result.exit_code == 2 and "--bigquery-project" in result.stderr


def test_summing_alike_rows_first_gives_the_plain_querys_answer(quarter: Quarter) -> None:
    """The fast path (query.summed_first) and its plain twin, on every cloud's layout."""
    paths = [str(quarter.root / cloud) for cloud in ("aws", "azure", "gcp")]
    _, fast = duck.run(paths, PERIOD, KEYS, gpu_types())
    _, plain = duck.run(paths, PERIOD, KEYS, gpu_types(), summed_first=False)
    assert sorted(map(repr, fast)) == sorted(map(repr, plain))
    assert sum(g.rows for g in fast if g.in_period) == len(quarter.in_period())


def test_sql_prints_the_query_duckdb_runs(quarter: Quarter) -> None:
    paths = [str(quarter.root / cloud) for cloud in ("aws", "azure", "gcp")]
    printed = CliRunner().invoke(main, ["billing", *paths, "--period", "2026-Q3", "--sql"])
    assert printed.exit_code == 0 and "period_flag" in printed.stdout  # the fast path's query
    conn = duck.connect()
    rows = conn.execute(printed.stdout).fetchall()
    _, groups = duck.run(paths, PERIOD, KEYS, gpu_types())
    assert sorted(map(repr, (duck.group(row, KEYS) for row in rows))) == sorted(map(repr, groups))


@pytest.mark.parametrize(
    ("rows", "raw", "message"),
    [
        ([("aws", "USD")], None, "billing query: an answer row has 2 columns where the query has"),
        (
            [tuple(["x"] * (len(GROUP_COLUMNS) + len(KEYS) + len(SUM_COLUMNS) + 1))],
            None,
            "billing query: a value of the answer is not of its column's type",
        ),
        ([], b"<html>proxy error</html>", "bigquery: the answer is not JSON"),
    ],
)
def test_a_bigquery_answer_of_another_shape_is_one_line(
    rows: list[tuple[Any, ...]], raw: bytes | None, message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = BigQueryServer(rows, raw)
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), fake.handler())
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        monkeypatch.setenv(
            "GPU_AUDIT_BIGQUERY_ENDPOINT", f"http://127.0.0.1:{httpd.server_address[1]}"
        )
        result = CliRunner().invoke(main, ["billing", "--engine", "bigquery", "--table", BQ_TABLE,
                                           "--bigquery-project", "acme-billing", "--period", "2026-Q3"])  # fmt: skip
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert result.exit_code == 2 and not isinstance(
        result.exception, (ValueError, AttributeError, IndexError)
    )
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"gpu-audit: error: {message}"), result.stderr


REAL_SAMPLE = Path(__file__).resolve().parents[2] / "fixtures/billing/real/focus-1.0-sample-300.csv"


@pytest.mark.parametrize("engine", ["athena", "bigquery"])
def test_each_rendering_reads_a_plain_focus_file_as_duckdb_does(engine: str) -> None:
    """The new reading (each row's provider, `NULL` cells, instance types in the description) is
    part of the one query: each engine's rendering, run back in DuckDB on the FinOps
    Foundation's sample laid out as that engine's table, gives the groups DuckDB gives."""
    from gpu_audit.billing.remote import SCHEMAS

    period = parse_period("2024-09")
    conn = duck.connect()
    # BigQuery's table is FOCUS 1.3's: the provider is ServiceProviderName
    raw = (
        f"(SELECT *, ProviderName AS ServiceProviderName FROM read_csv('{REAL_SAMPLE}', "
        "all_varchar = true, header = true))"
    )
    present = {r[0] for r in conn.execute(f"DESCRIBE SELECT * FROM {raw}").fetchall()}
    # the table as the engine holds it: its types, the sample's text cells (`NULL` as written)
    columns = ", ".join(
        (f'TRY_CAST(NULLIF("{name}", \'NULL\') AS {kind}) AS "{name}"' if name in present
         else f'CAST(NULL AS {kind}) AS "{name}"')
        for name, kind in SCHEMAS[engine].items()
        if name != "Tags"  # tags are not read here (no tag keys)
    )  # fmt: skip
    table = "focus_db.aws_focus" if engine == "athena" else BQ_TABLE
    conn.execute('CREATE SCHEMA IF NOT EXISTS "focus_db"')
    conn.execute(f'CREATE VIEW "focus_db"."plain" AS SELECT {columns} FROM {raw}')
    sql = remote_sql(engine, table, period, (), gpu_types())
    local = sqlglot.transpile(sql, read=engine, write="duckdb")[0]
    local = local.replace("DECIMAL(38, 5)", "DECIMAL(38, 10)")  # see bigquery_answer
    for quoted in (
        '"focus_db"."aws_focus"',
        '"acme-billing"."focus"."gcp_billing_export_focus_01"',
    ):
        local = local.replace(quoted, '"focus_db"."plain"')
    rows = conn.execute(local).fetchall()
    _, direct = duck.run([str(REAL_SAMPLE)], period, (), gpu_types())

    def figures(groups: Any) -> list[tuple[Any, ...]]:
        return sorted(
            (g.cloud, g.kind, g.instance_type, g.billing_period, g.effective, g.billed, g.list,
             g.gpu_hours, g.rows, g.over_list_rows, g.negative_rows)
            for g in groups
        )  # fmt: skip

    got = figures(collapse(DayGroup(row[-1], duck.group(row[:-1], ())) for row in rows))
    assert got == figures(direct)
    assert {g[0] for g in got} == {"aws", "azure", "oci"}
    assert any(g[1] == "gpu" and g[2] == "g5.4xlarge" for g in got)


DAILY_NOW = "2026-08-20T06:00:00Z"  # as tests/billing/test_forecast.py reads its daily quarter


@pytest.fixture(scope="module")
def daily(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    from datetime import date

    from tests.billing import daily_bill

    return daily_bill.build(tmp_path_factory.mktemp("daily"), date(2026, 8, 19))


def _forecast_and_rises(args: list[str]) -> dict[str, Any]:
    result = CliRunner().invoke(
        main, ["billing", *args, "--period", "2026-Q3", "--now", DAILY_NOW, "--format", "json"]
    )
    assert result.exit_code == 0, result.stderr
    body = json.loads(result.stdout)
    rises = [f for f in body["findings"] if f["rule_id"] == "billed-spend-rise"]
    return {"forecast": body["forecast"], "anomalies": body["anomalies"], "rises": rises,
            "totals": body["totals"]}  # fmt: skip


def test_engine_athena_gives_duckdbs_forecast_and_rises(
    daily: tuple[Path, Path], athena: str
) -> None:
    """The daily series is in the one query: Athena's answer (its rendering run back in DuckDB
    on the daily AWS export's rows, paged through boto3 from moto) gives the forecast and the
    spend rises that DuckDB's own read of the folder gives."""
    _queue_athena(athena, daily[0])
    got = _forecast_and_rises(["--engine", "athena", "--table", TABLE,
                               "--athena-output", "s3://acme-athena-results/"])  # fmt: skip
    want = _forecast_and_rises([str(daily[0])])
    assert got == want
    assert want["forecast"]["total"]["forecast_usd"] > want["forecast"]["total"]["to_date_usd"] > 0
    # the p5.48xlarge cluster left running from 14 August is a rise on either engine
    assert [(f["resource_id"], f["rise_start"]) for f in got["rises"]] == [
        ("team:research", "2026-08-14T00:00:00Z")
    ]


def test_engine_bigquery_gives_duckdbs_forecast_and_rises(
    daily: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """As for Athena, on the daily GCP export (the sweep run away on 5-7 August)."""
    _, rows = bigquery_answer(daily[1])
    fake = BigQueryServer(rows)
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), fake.handler())
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        monkeypatch.setenv(
            "GPU_AUDIT_BIGQUERY_ENDPOINT", f"http://127.0.0.1:{httpd.server_address[1]}"
        )
        got = _forecast_and_rises(["--engine", "bigquery", "--table", BQ_TABLE,
                                   "--bigquery-project", "acme-billing"])  # fmt: skip
    finally:
        httpd.shutdown()
        httpd.server_close()
    want = _forecast_and_rises([str(daily[1])])
    assert got == want
    assert want["forecast"]["total"]["forecast_usd"] > 0
    assert [(f["resource_id"], f["rise_start"]) for f in got["rises"]] == [
        ("team:vision", "2026-08-05T00:00:00Z")
    ]
