"""A bill at its limits: one located line (file, row, column or option) and exit 2, never a
traceback or the engine's SQL: huge and non-finite amounts, times past 9999 or infinite, a period
at the calendar's end, a provider column of another type, a manifest nested too deep, a `--tag`
key no cloud allows, and a JSON cell that is no JSON."""

from __future__ import annotations

import csv
import gzip
import io
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpu_audit.cli.main import main

duckdb = pytest.importorskip("duckdb")

DEMO = Path(__file__).resolve().parents[2] / "fixtures" / "billing" / "demo"
NOW = ("--now", "2026-10-05T08:00:00Z", "--format", "json")


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["billing", *args, *NOW])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stderr


def one_error(code: int, err: str, *words: str) -> str:
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gpu-audit: error: "), err
    assert "LINE " not in lines[0] and "SELECT" not in lines[0], lines[0]  # no SQL leaked
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


def gcp_with(tmp_path: Path, replace: str) -> Path:
    """The demo GCP export with its first file's rows rewritten by `SELECT * REPLACE (…)`."""
    folder = tmp_path / "gcp"
    shutil.copytree(DEMO / "gcp", folder)
    target = folder / "focus-000000000000.parquet"
    conn = duckdb.connect()
    conn.execute("SET TimeZone = 'UTC'")
    conn.execute(
        f"COPY (SELECT * REPLACE ({replace}) FROM read_parquet('{DEMO / 'gcp' / target.name}')) "
        f"TO '{target}' (FORMAT parquet)"
    )
    return folder


@pytest.mark.parametrize(
    ("replace", "column", "value"),
    [
        ("CAST(1e28 AS DECIMAL(38, 9)) AS EffectiveCost", "EffectiveCost", "1e+28"),
        ("CAST('inf' AS DOUBLE) AS EffectiveCost", "EffectiveCost", "inf"),
        ("CAST('nan' AS DOUBLE) AS BilledCost", "BilledCost", "nan"),
        ("CAST(1e300 AS DOUBLE) AS EffectiveCost", "EffectiveCost", "1e+300"),
        ("CAST(1e20 AS DOUBLE) AS ConsumedQuantity", "ConsumedQuantity", "1e+20"),
        (
            "CAST('10000-01-01 00:00:00+00' AS TIMESTAMPTZ) AS ChargePeriodEnd",
            "ChargePeriodEnd",
            "10000-01-01",
        ),
        ("CAST('infinity' AS TIMESTAMPTZ) AS ChargePeriodEnd", "ChargePeriodEnd", "infinity"),
    ],
)
def test_a_parquet_cell_out_of_bounds_is_located(
    tmp_path: Path, replace: str, column: str, value: str
) -> None:
    folder = gcp_with(tmp_path, replace)
    line = one_error(*run(str(folder), "--period", "2026-Q3"), "focus-000000000000.parquet")
    assert f"row 1: column '{column}': '{value}" in line


def test_a_provider_column_of_another_type_is_read_as_text(tmp_path: Path) -> None:
    """An INTEGER ProviderName once stopped DuckDB's binder (a traceback). Since plain FOCUS
    files are read (issue 44), a Parquet folder whose rows name another provider is read as
    plain FOCUS, each row by its own provider: the number is read as the text '42'."""
    folder = gcp_with(tmp_path, "42 AS ProviderName")
    result = CliRunner().invoke(main, ["billing", str(folder), "--period", "2026-Q3", *NOW])
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["totals"]["read"]["rows"] > 0


def azure_with(tmp_path: Path, column: str, value: str) -> Path:
    """The demo Azure container with the first row of every CSV part given `value` in `column`."""
    folder = tmp_path / "azure"
    shutil.copytree(DEMO / "azure", folder)
    for part in folder.rglob("*.csv.gz"):
        rows = list(csv.reader(io.StringIO(gzip.decompress(part.read_bytes()).decode())))
        rows[1][rows[0].index(column)] = value
        out = io.StringIO()
        csv.writer(out, lineterminator="\n").writerows(rows)
        part.write_bytes(gzip.compress(out.getvalue().encode()))
    return folder


@pytest.mark.parametrize(
    ("column", "value", "what"),
    [
        ("EffectiveCost", "999999999999999999999999999.5", "is not an amount"),  # InvalidOperation
        ("EffectiveCost", "9999999999999999999999999999.5", "is not an amount"),  # HUGEINT overflow
        ("BilledCost", "-1e16", "is not an amount"),
        ("ChargePeriodEnd", "infinity", "is not a time"),
        ("ChargePeriodStart", "infinity", "is not a time"),
        ("ChargePeriodEnd", "10000-01-01T00:00:00Z", "is not a time"),
        ("Tags", '{"team": ', "is not JSON"),
        ("x_SkuDetails", "{bad", "is not JSON"),
    ],
)
def test_a_csv_cell_out_of_bounds_or_malformed_is_located(
    tmp_path: Path, column: str, value: str, what: str
) -> None:
    folder = azure_with(tmp_path, column, value)
    line = one_error(*run(str(folder), "--period", "2026-Q3"), ".csv.gz: row 1: ")
    assert f"column '{column}': {value[:40]!r} {what}" in line


@pytest.mark.parametrize("period", ["9999-Q4", "9999-12"])
@pytest.mark.parametrize("cloud", ["aws", "azure", "gcp"])
def test_a_period_at_the_calendar_end_has_no_rows(period: str, cloud: str) -> None:
    one_error(*run(str(DEMO / cloud), "--period", period), f"no rows charged in {period}")


def test_a_period_of_year_zero_is_refused() -> None:
    one_error(*run(str(DEMO / "gcp"), "--period", "0000-Q1"), "--period: year 0 is out of range")


def test_a_period_before_year_1000_is_named_with_four_digits() -> None:
    one_error(*run(str(DEMO / "gcp"), "--period", "0999-Q1"), "no rows charged in 0999-Q1")


@pytest.mark.parametrize("key", ["", " ", "a\\b", "trailing\\", 'a"b', "a\nb"])
def test_a_tag_key_no_cloud_allows_is_refused(key: str) -> None:
    one_error(*run(str(DEMO / "azure"), "--period", "2026-Q3", "--tag", key), "--tag: ")


def test_a_deeply_nested_manifest_is_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "azure"
    shutil.copytree(DEMO / "azure", folder)
    manifest = sorted(folder.rglob("manifest.json"))[0]
    manifest.write_text("[" * 100_000 + "]" * 100_000)
    one_error(*run(str(folder), "--period", "2026-Q3"), "manifest.json", "nested too deeply")
