"""`gpu-audit billing` on the FinOps Foundation's own FOCUS 1.0 sample (fixtures/billing/real:
anonymised real rows of AWS, Microsoft and Oracle in one file, `NULL` cells, no `x_` columns):
read as a plain CSV, a CSV.gz, a Parquet file and a folder of Oracle-style daily reports, its GPU
figures equal what the rows say, summed here with csv + Decimal, not by the code under test."""

from __future__ import annotations

import csv
import gzip
import io
import json
import re
from collections import defaultdict
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

import duckdb
import pytest
from click.testing import CliRunner

from gpu_audit.cli.main import main

REAL = Path(__file__).resolve().parents[2] / "fixtures/billing/real"
SAMPLE = REAL / "focus-1.0-sample-300.csv"
FULL = REAL / "focus-1.0-sample-1000.csv.gz"
# The GPU instance types the sample bills (AWS's instance-type pages: g5.4xlarge has one A10G,
# g3.4xlarge one M60); every other instance type in it is a CPU instance.
GPUS = {"g5.4xlarge": 1, "g3.4xlarge": 1}
PERIOD = "2024-09"


def cents(amount: Decimal) -> Decimal:
    return amount.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


def rows_of(path: Path) -> list[dict[str, str]]:
    opener: Any = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def number(cell: str) -> Decimal:
    return Decimal(0) if cell in ("", "NULL") else Decimal(cell)


def gpu_type(row: dict[str, str]) -> str | None:
    """The instance type of a row of GPU instance hours, read from its description by hand."""
    if row["ChargeCategory"] != "Usage" or not row["ChargePeriodStart"].startswith(PERIOD):
        return None
    found = re.search(r"per On Demand Linux (\S+) Instance Hour", row["ChargeDescription"])
    return found.group(1) if found and found.group(1) in GPUS else None


def expected(rows: list[dict[str, str]]) -> dict[str, Any]:
    gpu = [r for r in rows if gpu_type(r)]
    return {
        "rows": len(gpu),
        "effective": cents(sum((number(r["EffectiveCost"]) for r in gpu), Decimal(0))),
        "billed": cents(sum((number(r["BilledCost"]) for r in gpu), Decimal(0))),
        "list": cents(sum((number(r["ListCost"]) for r in gpu), Decimal(0))),
        "gpu_hours": sum(
            (number(r["ConsumedQuantity"]) * GPUS[gpu_type(r) or ""] for r in gpu), Decimal(0)
        ),
        "read_rows": sum(1 for r in rows if r["ChargePeriodStart"].startswith(PERIOD)),
    }


def bill(*paths: str, fmt: str = "json") -> str:
    result = CliRunner().invoke(
        main,
        ["billing", *paths, "--period", PERIOD, "--format", fmt, "--now", "2024-10-05T00:00:00Z"],
    )
    assert result.exit_code == 0, result.stderr
    return result.stdout


def shown(value: float) -> Decimal:
    return Decimal(str(value))


def test_the_sample_holds_what_the_tests_rely_on() -> None:
    rows = rows_of(SAMPLE)
    assert {r["ProviderName"] for r in rows} == {"AWS", "Microsoft", "Oracle"}
    assert any(v == "NULL" for r in rows for v in r.values())
    assert not any(name.startswith("x_") for name in rows[0])
    assert expected(rows)["rows"] >= 10


def oci_folder(rows: list[dict[str, str]], tmp_path: Path) -> str:
    """The rows as Oracle's FOCUS reports are laid out: a folder per day, gzip CSV."""
    by_day: dict[str, list[dict[str, str]]] = defaultdict(list)
    for row in rows:
        by_day[row["ChargePeriodStart"][:10]].append(row)
    for day, part in by_day.items():
        folder = tmp_path / "FOCUS Reports" / day.replace("-", "/")
        folder.mkdir(parents=True)
        text = io.StringIO()
        writer = csv.DictWriter(text, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(part)
        with gzip.open(folder / "0001.csv.gz", "wt", encoding="utf-8") as out:
            out.write(text.getvalue())
    return str(tmp_path / "FOCUS Reports")


@pytest.mark.parametrize("name", ["csv", "csv.gz", "parquet", "oci-folder"])
def test_gpu_figures_of_the_plain_sample_equal_its_rows(name: str, tmp_path: Path) -> None:
    rows = rows_of(SAMPLE)
    path = str(SAMPLE)
    if name == "csv.gz":
        path = str(tmp_path / "sample.csv.gz")
        with gzip.open(path, "wb") as out:
            out.write(SAMPLE.read_bytes())
    elif name == "parquet":
        path = str(tmp_path / "sample.parquet")
        duckdb.sql(
            f"COPY (SELECT * FROM read_csv('{SAMPLE}', all_varchar = true, nullstr = 'NULL')) "
            f"TO '{path}' (FORMAT parquet)"
        )
    elif name == "oci-folder":
        path = oci_folder(rows, tmp_path)
    out = bill(path)
    report = json.loads(out)
    want = expected(rows)
    gpu = report["totals"]["gpu"]
    assert gpu["rows"] == want["rows"]
    assert shown(gpu["effective_usd"]) == want["effective"]
    assert shown(gpu["billed_usd"]) == want["billed"]
    assert shown(gpu["gpu_hours"]) == want["gpu_hours"].quantize(Decimal("0.01"))
    assert report["totals"]["read"]["rows"] == want["read_rows"]
    assert [line["key"] for line in report["breakdowns"]["cloud"]] == ["aws"]
    assert "NULL" not in out


def test_the_full_sample_gzip_reads_every_row_and_finds_the_same_gpus() -> None:
    rows = rows_of(FULL)
    report = json.loads(bill(str(FULL)))
    want = expected(rows)
    assert report["totals"]["gpu"]["rows"] == want["rows"]
    assert shown(report["totals"]["gpu"]["effective_usd"]) == want["effective"]
    assert report["totals"]["read"]["rows"] == want["read_rows"]


@pytest.mark.parametrize("fmt", ["table", "markdown", "csv"])
def test_no_report_shows_null_as_a_value(fmt: str) -> None:
    assert "NULL" not in bill(str(SAMPLE), fmt=fmt)


def test_a_csv_that_is_not_focus_names_the_file_and_the_columns(tmp_path: Path) -> None:
    bad = tmp_path / "costs.csv"
    bad.write_text("Date,Cost,BillingCurrency\n2024-09-01,1.00,USD\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["billing", str(bad), "--period", PERIOD])
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "costs.csv" in lines[0]
    for column in ("BilledCost", "EffectiveCost", "ChargePeriodStart", "ChargeCategory"):
        assert column in lines[0]


def test_list_cost_savings_invoices_and_quality_equal_the_rows() -> None:
    """The FinOps reader's figures on the real sample, each summed here from the rows."""
    import jsonschema

    rows = rows_of(SAMPLE)
    report = json.loads(bill(str(SAMPLE)))
    schema = json.loads(
        (REAL.parents[2] / "src/gpu_audit/billing/billing-v1.schema.json").read_text()
    )
    jsonschema.validate(report, schema)
    gpu = [r for r in rows if gpu_type(r)]
    effective = sum((number(r["EffectiveCost"]) for r in gpu), Decimal(0))
    listed = sum((number(r["ListCost"]) for r in gpu), Decimal(0))
    spend = report["spend"]  # no unused capacity in the sample: spend is the usage
    assert shown(spend["list_usd"]) == cents(listed)
    assert shown(spend["savings_rate"]) == (1 - effective / listed).quantize(Decimal("0.0001"))
    hours = sum((number(r["ConsumedQuantity"]) for r in gpu), Decimal(0))
    assert shown(spend["cost_per_gpu_hour_usd"]) == (effective / hours).quantize(Decimal("0.001"))
    # each provider's invoice: every row's BilledCost by BillingPeriodStart, any charge category
    invoices: dict[tuple[str, str], Decimal] = defaultdict(Decimal)
    for r in rows:
        provider = {"AWS": "aws", "Microsoft": "azure", "Oracle": "oci"}[r["ProviderName"]]
        invoices[(provider, r["BillingPeriodStart"][:10])] += number(r["BilledCost"])
    got = {
        (i["provider"], i["billing_period_start"]): shown(i["billed"]) for i in report["invoices"]
    }
    assert got == {key: cents(value) for key, value in invoices.items()}
    assert ("oci", "2024-10-01") in got  # an invoice month that is not the charge month
    # the anonymisation rounds EffectiveCost to whole dollars: above ListCost on some GPU rows
    warnings = {w["code"]: w["rows"] for w in report["data_quality"]}
    over = sum(1 for r in gpu if number(r["EffectiveCost"]) > number(r["ListCost"]))
    negative = sum(1 for r in rows if number(r["ConsumedQuantity"]) < 0)
    assert over and warnings["effective-over-list"] == over
    assert negative and warnings["negative-usage"] == negative
    assert [m["month"] for m in report["months"]] == ["2024-09"]
    by_type = {line["key"]: line for line in report["breakdowns"]["instance_type"]}
    for itype in GPUS:
        part = [r for r in gpu if gpu_type(r) == itype]
        cost = sum((number(r["EffectiveCost"]) for r in part), Decimal(0))
        used = sum((number(r["ConsumedQuantity"]) for r in part), Decimal(0))
        assert shown(by_type[itype]["cost_per_gpu_hour_usd"]) == (cost / used).quantize(
            Decimal("0.001")
        )


def test_the_sample_read_again_from_a_history_gives_the_same_bill(tmp_path: Path) -> None:
    """A daily `--history` run on the sample's daily reports: the first reads every file and
    keeps its day groups, the second reads none and sums the kept groups where they are (the
    copy beside the history); both give the plain read's figures, which equal the rows."""
    rows = rows_of(SAMPLE)
    folder = oci_folder(rows, tmp_path)
    history = str(tmp_path / "audits.db")
    plain = json.loads(bill(folder))
    first = json.loads(bill(folder, "--history", history))
    again = json.loads(bill(folder, "--history", history))
    read, reused = first["incremental"], again["incremental"]
    assert read["files_read"] > 1 and (reused["files_read"], reused["files_reused"]) == (
        0,
        read["files_read"],
    )
    for report in (first, again):
        for part in ("totals", "breakdowns", "spend", "months", "invoices", "forecast"):
            assert report[part] == plain[part], part
    want = expected(rows)
    assert shown(again["totals"]["gpu"]["effective_usd"]) == want["effective"]
    assert again["totals"]["gpu"]["rows"] == want["rows"]
