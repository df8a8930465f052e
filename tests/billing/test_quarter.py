"""The synthetic quarter's own tests: its layouts are the documented ones, every file reads, the
manifests hold, and the truth agrees with the files (DuckDB for Parquet, plain Python for the CSV)."""

from __future__ import annotations

import csv
import gzip
import json
import re
from collections import Counter, defaultdict
from datetime import UTC, datetime
from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

import duckdb
import pytest

from tests.billing.quarter import Q3_END, Q3_START, Quarter, Row, build_quarter, main
from tests.conftest import FIXTURES, ROOT

DEMO = FIXTURES / "billing" / "demo"
CENT = Decimal("0.01")
UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"


@pytest.fixture(scope="module")
def full(tmp_path_factory: pytest.TempPathFactory) -> Quarter:
    return build_quarter(tmp_path_factory.mktemp("quarter"))


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Quarter:
    return build_quarter(tmp_path_factory.mktemp("demo"), demo=True)


@pytest.fixture(params=["full", "demo"])
def quarter(request: pytest.FixtureRequest) -> Quarter:
    q: Quarter = request.getfixturevalue(request.param)
    return q


def _files(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


def _by_file(q: Quarter, cloud: str) -> dict[str, list[Row]]:
    out: dict[str, list[Row]] = defaultdict(list)
    for r in q.rows:
        if r.cloud == cloud:
            out[r.file].append(r)
    return out


def _demo(q: Quarter) -> bool:
    return q.root.name.startswith("demo")


def _con() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    return con


# --- AWS -------------------------------------------------------------------------------------


def test_aws_layout_is_the_data_exports_one(quarter: Quarter) -> None:
    root = quarter.root / "aws"
    data = re.compile(
        rf"data/BILLING_PERIOD=(2026-\d\d)/({UUID})/gpu-focus-0000[12]\.snappy\.parquet"
    )
    meta = re.compile(r"metadata/BILLING_PERIOD=(2026-\d\d)/gpu-focus-Manifest\.json")
    files = _files(root)
    assert all(data.fullmatch(f) or meta.fullmatch(f) for f in files), files
    periods = sorted({m.group(1) for f in files if (m := meta.fullmatch(f))})
    expected = ["2026-07", "2026-08", "2026-09", "2026-10"]
    assert periods == (
        expected if _demo(quarter) else ["2026-06", *expected]
    )  # the demo has no June
    assert {f for f in files if data.fullmatch(f)} == set(_by_file(quarter, "aws"))


def test_aws_manifests_list_the_current_files_only(quarter: Quarter) -> None:
    root = quarter.root / "aws"
    con = _con()
    listed: set[str] = set()
    for path in sorted(root.glob("metadata/BILLING_PERIOD=*/gpu-focus-Manifest.json")):
        period = path.parent.name.removeprefix("BILLING_PERIOD=")
        manifest = json.loads(path.read_text())
        assert set(manifest) == {
            "executionId",
            "exportArn",
            "columns",
            "dataFiles",
            "billingPeriod",
        }
        assert re.fullmatch(
            rf"arn:aws:bcm-data-exports:us-east-1:111122223333:export/gpu-focus-{UUID}",
            manifest["exportArn"],
        )
        assert manifest["billingPeriod"]["start"] == f"{period}-01T00:00:00.000Z"
        for uri in manifest["dataFiles"]:
            prefix = f"s3://acme-billing/cur/gpu-focus/data/BILLING_PERIOD={period}/{manifest['executionId']}/"
            assert uri.startswith(prefix)
            rel = uri.removeprefix("s3://acme-billing/cur/gpu-focus/")
            assert (root / rel).is_file()
            # (DuckDB adds the folder's BILLING_PERIOD=... as a column unless told not to)
            describe = (
                f"DESCRIBE SELECT * FROM read_parquet('{root / rel}', hive_partitioning = false)"
            )
            names = [r[0] for r in con.execute(describe).fetchall()]
            assert names == [c["name"] for c in manifest["columns"]]
            listed.add(rel)
    by_file = _by_file(quarter, "aws")
    assert {f for f, rows in by_file.items() if rows[0].counted} == listed
    superseded = [f for f in by_file if f not in listed]
    assert len(superseded) == 1 and "BILLING_PERIOD=2026-08" in superseded[0]
    assert not any(r.counted for r in by_file[superseded[0]])
    if not _demo(quarter):  # two data files in July
        assert sum("BILLING_PERIOD=2026-07" in f for f in listed) == 2


def test_aws_correction_and_rows_outside_the_quarter(quarter: Quarter) -> None:
    aws = [r for r in quarter.rows if r.cloud == "aws" and r.counted]
    (fix,) = [r for r in aws if r.charge_class == "Correction"]
    assert "BILLING_PERIOD=2026-10" in fix.file and fix.charge_period_start == datetime(
        2026, 9, 14, tzinfo=UTC
    )
    assert fix.effective < 0 and fix.gpu_hours == fix.hours * 8 < 0 and fix in quarter.in_period()
    outside = [r for r in aws if not Q3_START <= r.charge_period_start < Q3_END]
    assert outside and not {id(r) for r in outside} & {id(r) for r in quarter.in_period()}
    assert any(
        r.charge_period_start == Q3_END for r in outside
    )  # the first instant after the quarter


def test_the_forgotten_cluster_ran_and_stopped_inside_the_quarter(quarter: Quarter) -> None:
    demo = _demo(quarter)
    rows = [r for r in quarter.in_period() if r.instance_type == "g5.12xlarge"]
    ids = {r.resource_id for r in rows}
    assert len(ids) == (2 if demo else 4) and all(i and i.startswith("i-0c1a") for i in ids)
    assert all(r.kind == "gpu" and r.tags == {} and r.account == "444455556666" for r in rows)
    starts = sorted({r.charge_period_start for r in rows})
    assert starts[0] == datetime(2026, 7, 3, tzinfo=UTC)
    if demo:  # weekly rows
        assert len(rows) == 2 * len(starts) and len(starts) == 7
    else:  # one row per instance per day, 2026-07-03 .. 2026-08-20
        assert (
            starts[-1] == datetime(2026, 8, 20, tzinfo=UTC)
            and len(starts) == 49
            and len(rows) == 4 * 49
        )
    per_instance = sum((r.hours for r in rows), Decimal(0)) / len(ids)
    assert per_instance == 49 * 24 - Decimal("10.75") - Decimal(
        "14.5"
    )  # started late, stopped early


# --- Azure -----------------------------------------------------------------------------------

AZ_BLOB = re.compile(
    rf"focus/gpu-focus-daily/(2026\d{{4}})-(2026\d{{4}})/(\d{{12}})/({UUID})/"
    r"(manifest\.json|part_\d_0001\.(csv\.gz|snappy\.parquet))"
)


def _azure_manifests(q: Quarter) -> list[tuple[Path, dict[str, Any]]]:
    root = q.root / "azure"
    return [(p, json.loads(p.read_text())) for p in sorted(root.rglob("manifest.json"))]


def test_azure_layout_and_manifests(quarter: Quarter) -> None:
    root = quarter.root / "azure"
    assert all(AZ_BLOB.fullmatch(f) for f in _files(root)), _files(root)
    con = _con()
    blobs_seen = set()
    for path, m in _azure_manifests(quarter):
        assert set(m) == {"manifestVersion", "byteCount", "blobCount", "dataRowCount", "exportConfig",
                          "deliveryConfig", "runInfo", "blobs"}  # fmt: skip
        assert m["exportConfig"] | {"resourceId": None, "apiVersion": None} == {
            "exportName": "gpu-focus-daily", "resourceId": None, "dataVersion": "1.0r2", "apiVersion": None,
            "type": "FocusCost", "timeFrame": "MonthToDate", "granularity": "Daily",
        }  # fmt: skip
        d = m["deliveryConfig"]
        assert d["partitionData"] is True and d["dataOverwriteBehavior"] == "CreateNewReport"
        assert (d["fileFormat"], d["compressionMode"]) in {("Csv", "Gzip"), ("Parquet", "Snappy")}
        assert (
            m["runInfo"]["runId"] == path.parent.name
            and m["runInfo"]["executionType"] == "Scheduled"
        )
        assert re.fullmatch(r"2026-0[789]-01T00:00:00", m["runInfo"]["startDate"])
        assert m["blobCount"] == len(m["blobs"])
        assert m["byteCount"] == sum(b["byteCount"] for b in m["blobs"])
        assert m["dataRowCount"] == sum(b["dataRowCount"] for b in m["blobs"])
        for b in m["blobs"]:
            blob = root / b["blobName"]  # relative to the container
            assert blob.parent == path.parent and blob.stat().st_size == b["byteCount"]
            rows = con.execute(f"SELECT count(*) FROM '{blob}'").fetchall()[0][0]
            assert rows == b["dataRowCount"]
            blobs_seen.add(b["blobName"])
    assert blobs_seen == set(_by_file(quarter, "azure"))


def test_azure_only_the_latest_run_per_start_date_counts(quarter: Quarter) -> None:
    runs: dict[str, list[tuple[str, Path, dict[str, Any]]]] = defaultdict(list)
    for path, m in _azure_manifests(quarter):
        runs[m["runInfo"]["startDate"]].append((m["runInfo"]["submittedTime"], path.parent, m))
    assert sorted(len(v) for v in runs.values()) == [1, 2, 2]
    by_file = _by_file(quarter, "azure")
    for start, found in runs.items():
        latest = max(found, key=lambda x: x[0])
        for _, folder, m in found:
            counted = {by_file[b["blobName"]][0].counted for b in m["blobs"]}
            assert counted == {folder == latest[1]}
        if len(found) == 2:  # the folder that sorts last by name is the early, superseded run
            assert max(f for _, f, _ in found) != latest[1], start
            early = min(found, key=lambda x: x[0])[2]["runInfo"]
            assert early["endDate"] < latest[2]["runInfo"]["endDate"]  # month-to-date: fewer days
    if not _demo(quarter):
        formats = {m["deliveryConfig"]["fileFormat"] for _, m in _azure_manifests(quarter)}
        assert formats == {"Csv", "Parquet"}
        assert any(m["blobCount"] == 2 for _, m in _azure_manifests(quarter))


def _csv_time(text: str) -> datetime:
    return datetime.fromisoformat(text.removesuffix("Z")).replace(tzinfo=UTC)


def test_azure_csv_agrees_with_the_truth_read_in_plain_python(quarter: Quarter) -> None:
    spellings, names = Counter(), set()
    for rel, truth in _by_file(quarter, "azure").items():
        if not rel.endswith(".csv.gz"):
            continue
        with gzip.open(quarter.root / "azure" / rel, "rt", encoding="utf-8", newline="") as f:
            rows = list(csv.DictReader(f))
        assert len(rows) == len(truth)
        for row, t in zip(rows, truth, strict=True):
            assert (
                Decimal(row["EffectiveCost"]) == t.effective
                and Decimal(row["BilledCost"]) == t.billed
            )
            assert _csv_time(row["ChargePeriodStart"]) == t.charge_period_start
            spellings[row["ChargePeriodStart"].endswith("Z")] += 1
            assert (json.loads(row["Tags"]) if row["Tags"] else {}) == t.tags
            assert (row["ResourceId"] or None) == t.resource_id and row["SubAccountId"] == t.account
            assert (
                Decimal(row["ConsumedQuantity"] or 0) == t.hours or row["ConsumedUnit"] != "Hours"
            )
            if t.kind in ("gpu", "unused"):
                size = json.loads(row["x_SkuDetails"])["ServiceType"]
                assert size == t.instance_type and row["x_SkuMeterCategory"] == "Virtual Machines"
            if t.kind == "unused":
                assert row["CommitmentDiscountStatus"] == "Unused" and row["ResourceId"] == ""
            names.add(row["ResourceName"])
    assert spellings[True] and spellings[False]  # periods with and without a zone
    assert 'gpu, "a"' in names  # a comma and a quote, quoted properly


# --- GCP -------------------------------------------------------------------------------------


def test_gcp_files_differ_in_columns(quarter: Quarter) -> None:
    root = quarter.root / "gcp"
    files = _files(root)
    n = 2 if _demo(quarter) else 3
    assert files == [f"focus-{i:012d}.parquet" for i in range(n)]
    con = _con()
    describe = "DESCRIBE SELECT * FROM '{}'"
    schemas = [
        {r[0]: r[1] for r in con.execute(describe.format(root / f)).fetchall()} for f in files
    ]
    assert "x_Labels" in schemas[0] and "x_Labels" not in schemas[1]
    assert "CapacityReservationStatus" not in schemas[1]
    assert schemas[0]["x_Labels"] == 'STRUCT("Key" VARCHAR, "Value" VARCHAR)[]'
    assert (
        schemas[0]["EffectiveCost"].startswith("DECIMAL")
        and schemas[1]["EffectiveCost"] == "DOUBLE"
    )
    assert schemas[0]["ChargePeriodStart"] == "TIMESTAMP WITH TIME ZONE"
    assert schemas[1]["ChargePeriodStart"] == "TIMESTAMP"
    newest = schemas[-1]
    assert (
        "ServiceProviderName" in newest
        and "ProviderName" not in newest
        and "x_ExportTime" in newest
    )
    assert "ProviderName" in schemas[0]
    kinds = Counter(r.kind for r in quarter.in_period() if r.cloud == "gcp")
    team = set() if _demo(quarter) else {"team-transfer"}  # the labelled feature store's traffic
    assert set(kinds) == {"gpu", "gpu-machine", "unused", "other"} | team


# --- every file against the truth ------------------------------------------------------------


def test_parquet_rows_agree_with_the_truth(quarter: Quarter) -> None:
    con = _con()
    for cloud in ("aws", "azure", "gcp"):
        for rel, truth in _by_file(quarter, cloud).items():
            if not rel.endswith(".parquet"):
                continue
            got = con.execute(
                "SELECT EffectiveCost, BilledCost, ChargePeriodStart, ResourceId, SubAccountId, ChargeClass,"
                f" BillingCurrency FROM '{quarter.root / cloud / rel}'"
            ).fetchall()
            assert len(got) == len(truth), rel
            for (eff, billed, start, resource, account, cls, cur), t in zip(
                got, truth, strict=True
            ):
                if isinstance(eff, float):  # a DOUBLE column: the shortest repr is the written text
                    eff, billed = Decimal(repr(eff)), Decimal(repr(billed))
                assert (eff, billed) == (t.effective, t.billed), rel
                start = start if start.tzinfo else start.replace(tzinfo=UTC)
                assert start == t.charge_period_start and cur == t.currency == "USD"
                assert ((resource or None), account, cls) == (
                    t.resource_id,
                    t.account,
                    t.charge_class,
                )


def test_aws_tags_and_sku_columns_agree_with_the_truth(full: Quarter) -> None:
    con = _con()
    for rel, truth in _by_file(full, "aws").items():
        got = con.execute(
            f"SELECT Tags, SkuMeter, PricingCategory, ConsumedQuantity FROM '{full.root / 'aws' / rel}'"
        ).fetchall()
        for (tags, meter, pricing, qty), t in zip(got, truth, strict=True):
            assert {k.removeprefix("user:"): v for k, v in (tags or {}).items()} == t.tags
            if t.instance_type:
                assert meter.endswith(":" + t.instance_type)
            assert t.capacity == {"Standard": "on-demand", "Dynamic": "spot", "Committed": "committed",
                                  None: "on-demand"}[pricing]  # fmt: skip
            if meter and re.search(r"Usage|Unused|Train", meter):
                assert t.hours == qty


def test_gpu_hours_are_hours_times_the_catalogs_gpus(full: Quarter) -> None:
    with (ROOT / "src/gpu_audit/catalog/data/instances.csv").open(encoding="utf-8") as f:
        catalog = {
            row[1]: (int(row[3]), row[2]) for row in csv.reader(line for line in f if not line.startswith("#"))
            if len(row) > 3 and row[3].isdigit()
        }  # fmt: skip
    for r in full.rows:
        if r.kind != "gpu":
            assert r.gpu_hours == 0
        elif r.instance_type is None:  # a GCP GPU SKU: its quantity is GPU-hours
            assert r.cloud == "gcp" and r.gpu_hours == r.hours
        else:
            gpus, model = catalog[r.instance_type.removeprefix("ml.")]
            assert (r.gpu_hours, r.gpu_model) == (r.hours * gpus, model)


def test_every_kind_capacity_and_tag_form_is_present(quarter: Quarter) -> None:
    rows = quarter.in_period()
    for cloud in ("aws", "azure", "gcp"):
        mine = [r for r in rows if r.cloud == cloud]
        assert {"gpu", "unused", "other"} <= {r.kind for r in mine}
        assert {"on-demand", "spot"} <= {r.capacity for r in mine if r.kind == "gpu"}
        assert any(r.tags for r in mine if r.kind == "gpu") and any(
            not r.tags for r in mine if r.kind == "gpu"
        )
    unused = [r for r in rows if r.kind == "unused"]
    assert all(r.gpu_hours == 0 and r.resource_id is None and r.effective > 0 for r in unused)
    assert {r.capacity for r in unused if r.cloud == "aws"} == {"on-demand"}
    assert {r.capacity for r in unused if r.cloud != "aws"} == {"committed"}
    assert any(
        r.capacity == "committed" and r.billed == 0 < r.effective for r in rows if r.kind == "gpu"
    )
    assert {r.tags.get("project") for r in rows if r.instance_type == "ml.p4d.24xlarge"} == {"llm"}


def test_totals_are_exact_sums_of_the_in_period_rows(quarter: Quarter) -> None:
    gpu = [r for r in quarter.in_period() if r.kind == "gpu"]
    whole = quarter.totals()
    assert whole["effective"] == sum((r.effective for r in gpu), Decimal(0))
    assert whole["gpu_hours"] == sum((r.gpu_hours for r in gpu), Decimal(0)) and whole[
        "rows"
    ] == len(gpu)
    by_team = quarter.totals(by="tag:team")
    assert None in by_team  # untagged spend is its own line
    assert sum((v["effective"] for v in by_team.values()), Decimal(0)) == whole["effective"]
    assert set(quarter.totals(by="cloud")) == {"aws", "azure", "gcp"}
    assert quarter.totals(kind="unused")["gpu_hours"] == 0
    with pytest.raises(ValueError, match="unknown grouping"):
        quarter.totals(by="colour")


def test_float_summation_drifts_and_half_even_differs_from_half_up(
    full: Quarter, demo: Quarter
) -> None:
    """Two traps for a reader that sums or rounds carelessly.

    - Float: summing the full quarter's AWS GPU EffectiveCost as floats differs from the exact
      decimal sum by the 10th decimal (it stays right to the cent).
    - Rounding: the p5 spot spend tagged team=vision (AWS, GPU) ends in an exact half cent after
      an even cent in both flavours (e.g. 66067.205000): ROUND_HALF_UP gives .21, ROUND_HALF_EVEN
      .20. The figure the report shows must be the one its docs name, rounded once."""
    aws = [r.effective for r in full.in_period() if r.cloud == "aws" and r.kind == "gpu"]
    exact = sum(aws, Decimal(0))
    floated = 0.0
    for value in aws:
        floated += float(value)
    assert Decimal(floated).quantize(Decimal("1e-10")) != exact.quantize(Decimal("1e-10"))
    assert Decimal(floated).quantize(CENT) == exact.quantize(CENT)
    for q in (full, demo):
        vision = q.totals(by="tag:team")["vision"]["effective"]
        assert vision == vision.quantize(Decimal("0.001")) and vision.as_tuple().digits[-4] == 5
        assert vision.quantize(CENT, ROUND_HALF_UP) - vision.quantize(CENT, ROUND_HALF_EVEN) == CENT


# --- the checked-in demo ---------------------------------------------------------------------


def test_the_checked_in_demo_is_what_the_builder_writes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([str(tmp_path), "--demo"]) == 0
    assert "count in 2026-Q3" in capsys.readouterr().out
    files = _files(DEMO)
    assert files == _files(tmp_path)
    assert sum((DEMO / f).stat().st_size for f in files) < 100_000
    con = _con()
    for f in files:
        mine, built = DEMO / f, tmp_path / f
        if f.endswith(".parquet"):  # the same rows and types (the bytes name the DuckDB version)
            read = "SELECT * FROM read_parquet('{}', hive_partitioning = false)"
            assert (
                con.execute(read.format(mine)).fetchall()
                == con.execute(read.format(built)).fetchall()
            ), f
            assert (
                con.execute(read.format(mine)).description
                == con.execute(read.format(built)).description
            )
        else:
            assert mine.read_bytes() == built.read_bytes(), f
