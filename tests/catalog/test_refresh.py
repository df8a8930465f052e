"""`catalog refresh` against loopback servers in the price APIs' shapes, through the real CLI,
and its prices reaching `estimate`, `scan` and `catalog lookup` (`--prices`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from tests.catalog.price_data import AZURE, EC2, SPOT_MEDIAN
from tests.catalog.price_server import FakePrices

from gpu_audit.cli import main


def cli(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def rows(path: Path) -> dict[tuple[str, str, str], dict[str, Any]]:
    body = json.loads(path.read_text())
    assert body["gpu_audit_prices"] == 1
    return {(r["type"], r["region"], r["capacity"]): r for r in body["rows"]}


def refresh(provider: str, region: str, out: Path) -> Result:
    return cli("catalog", "refresh", "--provider", provider, "--region", region, "-o", str(out))


def test_aws_refresh_keeps_linux_on_demand_and_the_spot_median(
    price_server: FakePrices, tmp_path: Path
) -> None:
    out = tmp_path / "prices.json"
    done = refresh("aws", "us-east-1", out)
    assert done.exit_code == 0, done.output
    found = rows(out)
    for name, usd in EC2.items():
        row = found[(name, "us-east-1", "on-demand")]
        assert row["usd_per_hour"] == usd  # not Windows, SQL, dedicated, reserved capacity
        assert row["effective"] == "2026-11-01"
        assert "pricing:GetProducts AmazonEC2" in row["source"] and "OnDemand" in row["source"]
    assert not any(k[0] == "m5.large" for k in found)  # only what the catalog knows
    assert not any(k[1] == "us-west-2" for k in found)
    p4d = found[("p4d.24xlarge", "us-east-1", "spot")]
    assert p4d["usd_per_hour"] == SPOT_MEDIAN["p4d.24xlarge"]  # median of 9, 10 and 12
    assert [(z["zone"], z["usd_per_hour"]) for z in p4d["zones"]] == [
        ("us-east-1a", 9.0),
        ("us-east-1b", 10.0),
        ("us-east-1c", 12.0),
    ]  # older points and the Windows zone ignored
    assert p4d["zones"][0]["observed_at"] == "2026-11-25T09:58:00Z"
    assert found[("g5.xlarge", "us-east-1", "spot")]["usd_per_hour"] == SPOT_MEDIAN["g5.xlarge"]
    assert found[("sagemaker:ml.p4d.24xlarge", "us-east-1", "on-demand")]["usd_per_hour"] == 25.25
    managed = found[("sagemaker:ml.p4d.24xlarge", "us-east-1", "spot")]
    assert managed["usd_per_hour"] == round(25.25 * 10.0 / 19.5, 6)  # at the EC2 spot discount
    assert ("sagemaker-hosting:ml.p4d.24xlarge", "us-east-1", "spot") not in found
    hosting = found[("sagemaker-hosting:ml.p4d.24xlarge", "us-east-1", "on-demand")]
    assert hosting["usd_per_hour"] == 26.5  # the notebook rate never
    for row in found.values():
        assert row["fetched_at"].endswith("Z") and row["provider"] == "aws"
    # one query per region with ANY_OF on the types, paged
    pricing = [r for name, r in price_server.requests if name == "pricing"]
    ec2_queries = [r for r in pricing if r["ServiceCode"] == "AmazonEC2"]
    assert len({json.dumps(r["Filters"]) for r in ec2_queries}) == 1
    any_of = [f for f in ec2_queries[0]["Filters"] if f["Type"] == "ANY_OF"]
    assert any_of[0]["Field"] == "instanceType" and "p4d.24xlarge" in any_of[0]["Value"]
    assert len(ec2_queries) > 1 and ec2_queries[1].get("NextToken")  # pages were followed


def test_loose_answers_are_checked_again(price_server: FakePrices, tmp_path: Path) -> None:
    """A source that ignores the filters still gives Linux, shared, used, on-demand prices."""
    price_server.loose = True
    out = tmp_path / "prices.json"
    assert refresh("aws", "us-east-1", out).exit_code == 0
    found = rows(out)
    assert {name: found[(name, "us-east-1", "on-demand")]["usd_per_hour"] for name in EC2} == EC2
    assert found[("sagemaker:ml.p4d.24xlarge", "us-east-1", "on-demand")]["usd_per_hour"] == 25.25


def test_throttled_answers_are_retried_and_counted(
    price_server: FakePrices, tmp_path: Path
) -> None:
    price_server.throttle = {"pricing": 1, "ec2": 1, "azure": 1}
    out = tmp_path / "prices.json"
    done = refresh("aws", "us-east-1", out)
    assert done.exit_code == 0, done.output
    assert rows(out)[("p4d.24xlarge", "us-east-1", "spot")]["usd_per_hour"] == 10.0
    sent = price_server.count("pricing") + price_server.count("ec2")
    assert f"{sent} requests" in done.output  # the throttled ones included
    done = refresh("azure", "eastus", out)
    assert done.exit_code == 0, done.output
    assert price_server.count("azure") == 3  # 429, then two pages


def test_a_failed_refresh_leaves_the_file_untouched(
    price_server: FakePrices, tmp_path: Path
) -> None:
    out = tmp_path / "prices.json"
    assert refresh("azure", "eastus", out).exit_code == 0
    before = out.read_bytes()
    price_server.fail = {"ec2"}  # on-demand prices arrive, then spot fails
    done = refresh("aws", "us-east-1", out)
    assert done.exit_code == 2
    lines = done.output.strip().splitlines()
    assert (
        len(lines) == 1
        and "DescribeSpotPriceHistory" in lines[0]
        and "Traceback" not in done.output
    )
    assert out.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["prices.json"]  # no temp file left


def test_azure_refresh_prices_h200_and_skips_the_traps(
    price_server: FakePrices, tmp_path: Path
) -> None:
    price_server.lost_link = {0}  # a full first page without NextPageLink
    price_server.empty_page = {100}  # then an empty page that links on
    out = tmp_path / "prices.json"
    done = refresh("azure", "eastus", out)
    assert done.exit_code == 0, done.output
    found = rows(out)
    for name, (usd, spot) in AZURE.items():
        assert found[(name, "eastus", "on-demand")]["usd_per_hour"] == usd
        assert found[(name, "eastus", "spot")]["usd_per_hour"] == spot
        assert found[(name, "eastus", "on-demand")]["effective"] == "2026-10-01"
    assert len(found) == 2 * len({k[0] for k in found})  # every size: on-demand and spot only
    skips = [q.get("$skip") for name, q in price_server.requests if name == "azure"]
    assert skips == [None, "100", "100"]  # the $skip fallback, then past the empty page
    lookup = cli(
        "catalog", "lookup", "Standard_ND96isr_H200_v5", "--region", "eastus", "--prices", str(out)
    )
    assert lookup.exit_code == 0, lookup.output
    assert (
        "110.24" in lookup.output
        and "44.1" in lookup.output
        and "Retail Prices API" in lookup.output
    )
    bare = cli("catalog", "lookup", "Standard_ND96isr_H200_v5", "--region", "eastus")
    assert "110.24" not in bare.output  # the bundled catalog still cannot price it


def test_one_provider_refresh_keeps_the_others(price_server: FakePrices, tmp_path: Path) -> None:
    out = tmp_path / "prices.json"
    assert refresh("azure", "eastus", out).exit_code == 0
    assert refresh("aws", "us-east-1", out).exit_code == 0
    providers = {row["provider"] for row in json.loads(out.read_text())["rows"]}
    assert providers == {"aws", "azure"}
    assert set(json.loads(out.read_text())["requests"]) == {"aws", "azure"}
    assert refresh("aws", "us-east-1", out).exit_code == 0  # a second refresh replaces, not adds
    assert len(rows(out)) == len(json.loads(out.read_text())["rows"])


def test_a_refresh_only_reads_and_the_actions_are_documented(
    price_server: FakePrices, tmp_path: Path
) -> None:
    out = tmp_path / "prices.json"
    assert refresh("aws", "us-east-1", out).exit_code == 0
    assert refresh("azure", "eastus", out).exit_code == 0
    actions = set()
    for api, request in price_server.requests:
        if api == "pricing":
            actions.add("pricing:" + request["target"].rpartition(".")[2])
        elif api == "ec2":
            actions.add("ec2:" + request["Action"])
    assert actions == {"pricing:GetProducts", "ec2:DescribeSpotPriceHistory"}
    assert all(a.partition(":")[2].startswith(("Describe", "List", "Get")) for a in actions)
    permissions = (Path(__file__).parents[2] / "docs" / "permissions.md").read_text()
    statement = permissions.split('"Sid": "GpuAuditReadPrices"')[1].split("}")[0]
    assert all(f'"{action}"' in statement for action in actions)


def test_service_specific_endpoints_are_honoured(
    price_server: FakePrices, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = price_server.base
    monkeypatch.delenv("AWS_ENDPOINT_URL")
    monkeypatch.setenv("AWS_ENDPOINT_URL_PRICING", base)
    monkeypatch.setenv("AWS_ENDPOINT_URL_EC2", base)
    out = tmp_path / "prices.json"
    done = refresh("aws", "us-east-1", out)
    assert done.exit_code == 0, done.output
    assert rows(out)[("p4d.24xlarge", "us-east-1", "spot")]["usd_per_hour"] == 10.0


def test_any_of_lists_stay_within_a_filter_value() -> None:
    from gpu_audit.prices.aws_pricing import VALUE_LIMIT, batches

    names = [f"type{i}.48xlarge" for i in range(200)]
    found = batches(names)
    assert len(found) > 1 and all(len(value) <= VALUE_LIMIT for value in found)
    assert ",".join(found).split(",") == names


@pytest.mark.parametrize("effective", ["20261001T000000Z", "2026-W40-4", "soon\x1b[2J"])
def test_a_price_api_date_no_run_could_read_is_not_written(
    price_server: FakePrices, tmp_path: Path, effective: str
) -> None:
    """The refresh checks the file it is about to write as `--prices` will read it."""
    out = tmp_path / "prices.json"
    assert refresh("aws", "us-east-1", out).exit_code == 0
    before = out.read_bytes()
    for item in price_server.azure:
        item["effectiveStartDate"] = effective
    done = refresh("azure", "eastus", out)
    assert done.exit_code == 2, done.output
    (line,) = done.output.strip().splitlines()
    assert "azure: the price API answered a value a price file cannot hold" in line
    assert "effective: " in line and "\x1b" not in line
    assert out.read_bytes() == before
