"""Refreshed prices reaching `estimate --prices`, `scan --inventory ... --prices` and
`catalog diff` exactly, with their effective date and source, through the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner, Result
from tests.catalog.price_data import AZURE, EC2, SPOT_MEDIAN
from tests.catalog.price_server import FakePrices

from gpu_audit.cli import main


def cli(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def refreshed(tmp_path: Path) -> Path:
    out = tmp_path / "prices.json"
    for provider, region in (("aws", "us-east-1"), ("azure", "eastus")):
        done = cli("catalog", "refresh", "--provider", provider, "--region", region, "-o", str(out))
        assert done.exit_code == 0, done.output
    return out


def test_estimate_uses_the_refreshed_prices(price_server: FakePrices, tmp_path: Path) -> None:
    prices = refreshed(tmp_path)
    args = ["estimate", "--instance-type", "p4d.24xlarge", "--hours", "10", "--cloud", "aws"]
    done = cli(*args, "--format", "json", "--prices", str(prices))
    assert done.exit_code == 0, done.output
    options = json.loads(done.stdout)["options"]
    p4d = [
        o for o in options if o["instance_type"] == "p4d.24xlarge" and o["region"] == "us-east-1"
    ]
    by_capacity = {o["capacity"]: o for o in p4d}
    assert by_capacity["spot"]["hourly_usd"] == SPOT_MEDIAN["p4d.24xlarge"]
    assert by_capacity["spot"]["run_usd"] == 100.0
    assert "DescribeSpotPriceHistory" in by_capacity["spot"]["source"]
    assert by_capacity["spot"]["as_of"] == "2026-11-01"  # the older of the two dates
    bare = json.loads(cli(*args, "--format", "json").stdout)["options"]
    assert bare != options  # without --prices: the bundled prices


def _inventory(tmp_path: Path) -> Path:
    resources = [
        {
            "provider": "aws",
            "id": f"i-{capacity}",
            "region": "us-east-1",
            "instance_type": "p4d.24xlarge",
            "state": "running",
            "capacity": capacity,
            "workload": "training",
        }
        for capacity in ("on-demand", "spot")
    ]
    resources.append(
        {
            "provider": "azure",
            "id": "/subscriptions/s/resourceGroups/g/providers/Microsoft.Compute/virtualMachines/h200",
            "region": "eastus",
            "instance_type": "Standard_ND96isr_H200_v5",
            "state": "running",
            "capacity": "on-demand",
            "workload": "training",
        }
    )
    resources.append(
        {
            "provider": "aws",
            "service": "sagemaker",
            "id": "arn:aws:sagemaker:us-east-1:111122223333:training-job/pretrain",
            "region": "us-east-1",
            "instance_type": "ml.p4d.24xlarge",
            "state": "running",
            "capacity": "spot",
            "workload": "training",
        }
    )
    path = tmp_path / "fleet.yaml"
    body = {"version": 1, "captured_at": "2026-11-25T12:00:00Z", "resources": resources}
    path.write_text(yaml.safe_dump(body))
    return path


def test_scan_reports_the_refreshed_prices_with_date_and_source(
    price_server: FakePrices, tmp_path: Path
) -> None:
    prices = refreshed(tmp_path)
    fleet = _inventory(tmp_path)
    report = tmp_path / "report.json"
    markdown = tmp_path / "report.md"
    done = cli(
        "scan",
        "--inventory",
        str(fleet),
        "--prices",
        str(prices),
        "--fail-on",
        "none",
        "-o",
        str(report),
        "--report",
        f"markdown={markdown}",
    )
    assert done.exit_code == 0, done.output
    found = {r["id"]: r["price"] for r in json.loads(report.read_text())["resources"]}
    on_demand, spot = found["i-on-demand"], found["i-spot"]
    assert on_demand["hourly_usd"] == EC2["p4d.24xlarge"]
    assert spot["hourly_usd"] == SPOT_MEDIAN["p4d.24xlarge"]
    assert on_demand["as_of"] == "2026-11-01" and "pricing:GetProducts" in on_demand["source"]
    h200 = next(p for key, p in found.items() if key.endswith("h200"))
    assert h200["hourly_usd"] == AZURE["Standard_ND96isr_H200_v5"][0]
    assert "Azure Retail Prices API" in h200["source"] and h200["as_of"] == "2026-10-01"
    training = next(p for key, p in found.items() if key.endswith("training-job/pretrain"))
    assert training["hourly_usd"] == round(25.25 * 10.0 / 19.5, 5)  # SageMaker managed spot
    assert training["on_demand_hourly_usd"] == 25.25 and "AmazonSageMaker" in training["source"]
    header = markdown.read_text().split("## ")[0]
    assert (
        "| Prices | prices.json (" in header and "oldest price used 2026\u201110\u201101" in header
    )  # non-breaking hyphens
    assert "gpu-audit: prices: prices.json" in done.stderr
    bare = cli("scan", "--inventory", str(fleet), "--fail-on", "none", "--format", "json")
    bare_prices = {r["id"]: r["price"] for r in json.loads(bare.stdout)["resources"]}
    assert bare_prices["i-on-demand"]["hourly_usd"] == 21.95764  # the bundled price again
    assert next(p for k, p in bare_prices.items() if k.endswith("h200"))["hourly_usd"] is None


def test_settings_key_and_stale_warning(price_server: FakePrices, tmp_path: Path) -> None:
    prices = refreshed(tmp_path)
    body = json.loads(prices.read_text())
    for row in body["rows"]:
        row["fetched_at"] = "2026-01-02T00:00:00Z"
    prices.write_text(json.dumps(body))
    config = tmp_path / "settings.yaml"
    config.write_text("prices: prices.json\nprices_max_age_days: 30\n")
    fleet = _inventory(tmp_path)
    done = cli(
        "scan",
        "--inventory",
        str(fleet),
        "--config",
        str(config),
        "--format",
        "json",
        "--fail-on",
        "none",
    )
    assert done.exit_code == 0, done.output
    warnings = [line for line in done.stderr.splitlines() if "warning" in line]
    assert len(warnings) == 1 and "fetched 2026-01-02" in warnings[0] and "over 30" in warnings[0]
    resources = json.loads(done.stdout)["resources"]
    assert {r["id"]: r["price"]["hourly_usd"] for r in resources}["i-spot"] == 10.0


def test_diff_lists_what_changed(price_server: FakePrices, tmp_path: Path) -> None:
    prices = refreshed(tmp_path)
    done = cli("catalog", "diff", str(prices))
    assert done.exit_code == 0, done.output
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["type", "region", "capacity", "old", "$/h", "new", "$/h", "change"]
    p4d = next(
        line.split() for line in lines if line.startswith("p4d.24xlarge ") and "on-demand" in line
    )
    # issue 38.12: prices rounded as every report writes them
    assert p4d == ["p4d.24xlarge", "us-east-1", "on-demand", "$21.9576", "$19.5000", "-11.2%"]
    h200 = next(line.split() for line in lines if "H200" in line and "on-demand" in line)
    assert h200[3:] == ["-", "$110.2400", "new"]
    assert lines[-1].endswith("unchanged")
    exact = json.loads(cli("catalog", "diff", str(prices), "--format", "json").stdout)
    [row] = [
        c for c in exact["changes"] if c["type"] == "p4d.24xlarge" and c["capacity"] == "on-demand"
    ]
    assert (row["old_usd_per_hour"], row["new_usd_per_hour"], row["change_percent"]) == (
        21.957642,
        19.5,
        -11.2,
    )


def test_a_bad_price_file_is_one_located_line(tmp_path: Path) -> None:
    bad = tmp_path / "prices.json"
    bad.write_text(json.dumps({"gpu_audit_prices": 1, "rows": [{"provider": "aws"}]}))
    done = cli("estimate", "--gpu", "A100-80GB:8", "--hours", "1", "--prices", str(bad))
    assert done.exit_code == 2
    assert done.output.strip().splitlines() == [
        f"gpu-audit: error: {bad}:1: price file: rows[0]: type: expected a non-empty string"
    ]


def test_a_price_file_value_with_control_characters_is_refused(tmp_path: Path) -> None:
    body = json.loads((Path(__file__).parents[2] / "fixtures/prices/example.json").read_text())
    body["rows"][0]["source"] = "GetProducts\x1b[2J\u202e"
    bad = tmp_path / "prices.json"
    bad.write_text(json.dumps(body))
    done = cli("catalog", "lookup", "p4d.24xlarge", "--prices", str(bad))
    assert done.exit_code == 2
    assert done.output.strip().splitlines() == [
        f"gpu-audit: error: {bad}:1: price file: rows[0]: source: control or formatting characters"
    ]


def test_the_example_price_file_in_the_docs(tmp_path: Path) -> None:
    example = str(Path(__file__).parents[2] / "fixtures/prices/example.json")
    done = cli(
        "catalog", "lookup", "Standard_ND96isr_H200_v5", "--region", "eastus", "--prices", example
    )
    assert done.exit_code == 0 and "110.24" in done.output
    diff = cli("catalog", "diff", example)
    assert "3 prices changed or new, 0 unchanged" in diff.output


def test_check_prices_a_job_from_the_price_file(price_server: FakePrices, tmp_path: Path) -> None:
    prices = refreshed(tmp_path)
    fixture = Path(__file__).parents[2] / "fixtures/jobs/sagemaker/spot-p4d-training.json"
    job = tmp_path / "train.json"
    job.write_text(fixture.read_text().replace("us-west-2", "us-east-1"))  # the refreshed region
    done = cli("check", str(job), "--format", "json", "--fail-on", "none", "--prices", str(prices))
    assert done.exit_code == 0, done.output
    (resource,) = json.loads(done.stdout)["resources"]
    price = resource["price"]
    assert resource["region"] == "us-east-1" and resource["capacity"] == "spot"
    # a SageMaker job file is billed by SageMaker: priced on the refreshed `sagemaker:` card, as
    # `scan` prices the same training job (test above), × its 2 nodes
    assert resource["service"] == "sagemaker"
    assert price["spot_hourly_usd"] == pytest.approx(round(25.25 * 10.0 / 19.5, 5) * 2)
    assert price["on_demand_hourly_usd"] == pytest.approx(25.25 * 2)
    assert "AmazonSageMaker" in price["source"]


def test_lookup_escapes_what_it_echoes() -> None:
    done = cli("catalog", "lookup", "p9\x1b[2J.huge")
    assert done.exit_code == 2
    assert "\x1b" not in done.output and "\\x1b[2J" in done.output
