"""Bad exports: one clear line each (file, row or column) and exit 2, never a traceback and
never a guess; a currency other than USD is reported as such, never added to dollars."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from gpu_audit.cli.main import main
from tests.billing.quarter import Quarter, build_quarter

pytest.importorskip("duckdb")


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Quarter:
    return build_quarter(tmp_path_factory.mktemp("pristine"))


@pytest.fixture()
def bill(pristine: Quarter, tmp_path: Path) -> Path:
    shutil.copytree(pristine.root, tmp_path / "bill")
    return tmp_path / "bill"


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["billing", *args, "--format", "json"])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stderr


def one_error(code: int, err: str) -> str:
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gpu-audit: error: "), err
    return lines[0]


def test_a_truncated_parquet_file_is_named(bill: Path) -> None:
    data = sorted((bill / "aws" / "data").rglob("*.parquet"))
    listed = next(f for f in data if "BILLING_PERIOD=2026-07" in str(f))
    listed.write_bytes(listed.read_bytes()[:100])
    line = one_error(*run(str(bill / "aws"), "--period", "2026-Q3"))
    assert listed.name in line


def test_a_manifest_naming_a_missing_file_is_named(bill: Path) -> None:
    manifest = next((bill / "aws" / "metadata").rglob("*BILLING_PERIOD=2026-08*/*-Manifest.json"))
    body = json.loads(manifest.read_text())
    body["dataFiles"].append(body["dataFiles"][0].replace("00001", "00009"))
    manifest.write_text(json.dumps(body))
    line = one_error(*run(str(bill / "aws"), "--period", "2026-Q3"))
    assert "names a missing data file" in line and "00009" in line and "Manifest.json" in line


def _azure_csv(bill: Path) -> Path:
    return sorted((bill / "azure").rglob("*.csv.gz"))[0]


def _counted_azure_csvs(pristine: Quarter) -> set[str]:
    return {
        r.file
        for r in pristine.rows
        if r.cloud == "azure" and r.counted and r.file.endswith(".csv.gz")
    }


def test_a_csv_row_with_a_bad_number_is_located(bill: Path, pristine: Quarter) -> None:
    name = sorted(_counted_azure_csvs(pristine))[0]
    target = bill / "azure" / name
    lines = gzip.decompress(target.read_bytes()).decode().splitlines()
    header = lines[0].split(",")
    column = header.index("EffectiveCost")
    cells = lines[3].split(",")
    cells[column] = "12,34x" if False else "12.3.4"
    lines[3] = ",".join(cells)
    target.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    line = one_error(*run(str(bill / "azure"), "--period", "2026-Q3"))
    assert (
        target.name in line and "EffectiveCost" in line and "'12.3.4'" in line and "row 3" in line
    )


def test_a_csv_row_with_too_many_cells_is_located(bill: Path, pristine: Quarter) -> None:
    name = sorted(_counted_azure_csvs(pristine))[0]
    target = bill / "azure" / name
    lines = gzip.decompress(target.read_bytes()).decode().splitlines()
    lines[5] = lines[5] + ",extra,cells"
    target.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    line = one_error(*run(str(bill / "azure"), "--period", "2026-Q3"))
    assert target.name in line and "line 6: " in line and "cells where the header has" in line


def test_an_unknown_focus_version_is_refused(bill: Path) -> None:
    manifest = next((bill / "azure").rglob("manifest.json"))
    body = json.loads(manifest.read_text())
    body["exportConfig"]["dataVersion"] = "9.9"
    manifest.write_text(json.dumps(body))
    line = one_error(*run(str(bill / "azure"), "--period", "2026-Q3"))
    assert "unknown FOCUS version '9.9'" in line and "manifest.json" in line


def test_a_file_missing_a_focus_column_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "gcp"
    folder.mkdir()
    duckdb.sql(
        f"COPY (SELECT 1.5 AS BilledCost, 'USD' AS BillingCurrency) TO '{folder / 'x.parquet'}' (FORMAT parquet)"
    )
    line = one_error(*run(str(folder), "--period", "2026-Q3"))
    assert (
        "x.parquet" in line
        and "'EffectiveCost', 'ChargePeriodStart', 'ChargeCategory' are missing" in line
    )


def test_a_period_with_no_data_says_what_the_exports_hold(bill: Path) -> None:
    line = one_error(*run(str(bill / "aws"), str(bill / "gcp"), "--period", "2025-Q1"))
    assert "no rows charged in 2025-Q1" in line


def test_a_path_that_holds_no_export_is_named(tmp_path: Path) -> None:
    line = one_error(*run(str(tmp_path), "--period", "2026-Q3"))
    assert str(tmp_path) in line and "no FOCUS export found" in line


@pytest.mark.parametrize("period", ["2026-Q5", "2026-13", "Q3", "2026-07-01"])
def test_a_bad_period_is_one_line(period: str, bill: Path) -> None:
    line = one_error(*run(str(bill / "gcp"), "--period", period))
    assert "--period" in line


def test_another_currency_is_reported_apart_and_never_summed(bill: Path, tmp_path: Path) -> None:
    folder = tmp_path / "eur"
    folder.mkdir()
    source = sorted((bill / "gcp").glob("*.parquet"))[0]
    duckdb.sql(
        f"COPY (SELECT * REPLACE ('EUR' AS BillingCurrency) FROM read_parquet('{source}')) "
        f"TO '{folder / 'eur.parquet'}' (FORMAT parquet)"
    )
    result = CliRunner().invoke(
        main, ["billing", str(bill / "aws"), "--period", "2026-Q3", "--format", "json"]
    )
    usd_only = json.loads(result.stdout)
    result = CliRunner().invoke(
        main, ["billing", str(bill / "aws"), str(folder), "--period", "2026-Q3", "--format", "json"]
    )
    both = json.loads(result.stdout)
    assert both["totals"] == usd_only["totals"]
    assert [c["currency"] for c in both["other_currencies"]] == ["EUR"]
    assert both["other_currencies"][0]["gpu"]["effective_usd"] > 0


@pytest.mark.parametrize(
    ("prefix", "extension"),
    [("s3://acme-billing/focus/gpu-focus", "httpfs"), ("az://costs/focus", "azure")],
)
def test_a_remote_prefix_without_its_extension_is_one_line_and_downloads_nothing(
    prefix: str, extension: str
) -> None:
    installed = duckdb.sql(
        f"SELECT installed FROM duckdb_extensions() WHERE extension_name = '{extension}'"
    ).fetchall()
    if installed and installed[0][0]:
        pytest.skip(
            f"DuckDB's {extension} extension is installed on this machine: the read would go to the cloud"
        )
    line = one_error(*run(prefix, "--period", "2026-Q3"))
    assert prefix in line and f"DuckDB's {extension} extension, which is not installed here" in line


def test_a_parent_folder_of_an_aws_export_is_read_through_its_manifests(
    bill: Path, pristine: Quarter
) -> None:
    parent = bill / "exports"
    parent.mkdir()
    shutil.move(str(bill / "aws"), str(parent / "gpu-focus"))
    nested = CliRunner().invoke(
        main, ["billing", str(parent), "--period", "2026-Q3", "--format", "json"]
    )
    direct = CliRunner().invoke(
        main, ["billing", str(parent / "gpu-focus"), "--period", "2026-Q3", "--format", "json"]
    )
    assert nested.exit_code == direct.exit_code == 0
    assert json.loads(nested.stdout)["totals"] == json.loads(direct.stdout)["totals"]


def test_aws_data_files_without_their_manifests_are_refused_not_read_as_gcp(bill: Path) -> None:
    shutil.rmtree(bill / "aws" / "metadata")
    line = one_error(*run(str(bill / "aws"), "--period", "2026-Q3"))
    assert "read as GCP's FOCUS export, but they say provider 'AWS'" in line
