"""`catalog refresh --provider gcp --interruptions --project P`: Compute Engine capacity advice
for Spot VMs read through google-cloud-compute's AdviceClient (REST) against the project's GCP
server on loopback (tests/collectors/gcp_server.py) in `CapacityAdviceResponse`'s shape: a 429
retried, a type the region lacks (400) and an answer with no uptime left out (not evaluated),
a 403 one line with the file left as it was; `per_hour = 3600 ÷ estimatedUptime` (docs/spot.md)."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from tests.collectors.gcp_server import FakeGcp, serve
from tests.policy.test_lost_work import A2_OD, A2_SPOT, RESUME_H, cents, check, resource
from tests.policy.test_lost_work import vertex as vertex_job

from gpu_audit.catalog.capacity_advice import advice_row, uptime_seconds
from gpu_audit.catalog.interruptions import read_rates, use_rates
from gpu_audit.cli.main import main
from gpu_audit.errors import ConfigError

COMMAND = ["catalog", "refresh", "--provider", "gcp", "--interruptions", "--project", "ml-prod"]


def _answer(uptime: str | None, obtainability: float, zone: str, kind: str) -> dict[str, Any]:
    """A `CapacityAdviceResponse` as the REST API returns it (camelCase JSON)."""
    scores: dict[str, Any] = {"obtainability": obtainability}
    if uptime is not None:
        scores["estimatedUptime"] = uptime
    shard = {"zone": zone, "machineType": kind, "instanceCount": 1, "provisioningModel": "SPOT"}
    return {"recommendations": [{"scores": scores, "shards": [shard]}]}


@pytest.fixture
def gcp(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGcp]:
    fake = FakeGcp(
        advice={
            ("us-central1", "a2-highgpu-1g"): _answer("3600s", 0.9, "us-central1-a", "a2-highgpu-1g"),
            ("us-central1", "g2-standard-4"): _answer("600s", 0.5, "us-central1-b", "g2-standard-4"),
            # advice without an uptime estimate: no row, never assumed rare
            ("us-central1", "a2-ultragpu-1g"): _answer(None, 0.2, "us-central1-c", "a2-ultragpu-1g"),
        }
    )  # fmt: skip
    with serve(fake) as url:
        monkeypatch.setenv("GPU_AUDIT_GCE_ENDPOINT", url)
        yield fake
    use_rates(None)


def test_uptime_converts_to_preemptions_per_hour() -> None:
    assert [uptime_seconds(t) for t in ("3600s", "600s", "5400.5s", "1h", 3600, "0s")] == [
        3600.0, 600.0, 5400.5, None, None, None,
    ]  # fmt: skip
    row = advice_row(_answer("600s", 0.5, "z", "g2-standard-4"), "g2-standard-4", "r", "d")
    assert row is not None and (row["per_hour"], row["public"]) == (
        6.0,
        "estimatedUptime 600s, obtainability 0.5",
    )
    with pytest.raises(ConfigError, match="estimatedUptime '1 hour' is not a duration"):
        advice_row(_answer("1 hour", 0.5, "z", "k"), "k", "r", "d")


def test_refresh_asks_each_type_in_the_region_and_keeps_the_others(
    tmp_path: Path, gcp: FakeGcp
) -> None:
    output = tmp_path / "rates.json"
    gcp.advice_throttled = 1  # one 429 first: retried
    result = CliRunner().invoke(main, [*COMMAND, "--region", "us-central1", "-o", str(output)])
    assert result.exit_code == 0, result.output
    posts = [r for r in gcp.requests if r.method == "POST"]
    types = 25  # the catalog's GCP GPU machine types, each asked once (plus the retried call)
    assert len(posts) == types + 1
    assert {r.path for r in posts} == {
        "/compute/v1/projects/ml-prod/regions/us-central1/advice/capacity"
    }
    assert result.stdout.strip() == (
        f"{output}: 2 gcp interruption rates, {types} requests "
        f"({types - 2} type-region pairs with no Spot advice: not evaluated)"
    )
    body = gcp.advice_bodies[-1]
    assert body["instanceProperties"] == {"scheduling": {"provisioningModel": "SPOT"}}
    assert (body["size"], body["distributionPolicy"]["targetShape"]) == (1, "ANY_SINGLE_ZONE")
    written = read_rates(str(output))
    rows = {(r.type, r.region): r for r in written.rows if r.provider == "gcp"}
    assert set(rows) == {("a2-highgpu-1g", "us-central1"), ("g2-standard-4", "us-central1")}
    a2 = rows[("a2-highgpu-1g", "us-central1")]
    assert (a2.per_hour, a2.public, a2.source) == (
        1.0,
        "estimatedUptime 3600s, obtainability 0.9",
        "gcp-capacity-advice",
    )
    assert rows[("g2-standard-4", "us-central1")].per_hour == 6.0
    (source,) = written.sources
    assert source.url == "POST compute/v1/projects/ml-prod/regions/{region}/advice/capacity (SPOT)"


def test_the_refreshed_rate_prices_a_6_hour_interval_to_the_cent(
    tmp_path: Path, gcp: FakeGcp
) -> None:
    """The Vertex a2-highgpu-1g spot job, 24 h, checkpoint every 6 h (no region named: the
    type's highest rate, here us-central1's 1 an hour): lost = 24 × 1 × (3 + 5/60) × 1.6594 =
    $122.80 against a $61.56 discount: spot-lost-work worth $61.24."""
    output = tmp_path / "rates.json"
    refreshed = CliRunner().invoke(main, [*COMMAND, "--region", "us-central1", "-o", str(output)])
    assert refreshed.exit_code == 0, refreshed.output
    job = vertex_job(tmp_path, "bert-spot", spot=True, interval="360")
    report = check(str(job), "--interruption-rates", str(output))
    hours = Decimal(24)
    lost = hours * 1 * (Decimal(3) + RESUME_H) * A2_SPOT
    figures = resource(report, "bert-spot")["interruption"]
    assert (
        (figures["lost_usd"], figures["net_usd"])
        == (
            cents(lost),
            cents((A2_OD - A2_SPOT) * hours - lost),
        )
        == (122.80, -61.24)
    )
    assert figures["rate_public"] == "estimatedUptime 3600s, obtainability 0.9"


def test_a_403_or_no_project_is_one_line_and_the_file_is_left_as_it_was(
    tmp_path: Path, gcp: FakeGcp
) -> None:
    output = tmp_path / "rates.json"
    output.write_text('{"kept": true}')  # not a rate file: refused before any call
    refused = CliRunner().invoke(main, [*COMMAND, "-o", str(output)])
    assert refused.exit_code == 2 and gcp.requests == []
    output.unlink()
    gcp.advice_forbidden = {"ml-prod"}
    result = CliRunner().invoke(main, [*COMMAND, "--region", "us-central1", "-o", str(output)])
    assert result.exit_code == 2 and not output.exists()
    (line,) = result.stderr.strip().splitlines()
    assert "advice.capacity a2-highgpu-1g in us-central1: 403" in line
    assert "The caller does not have permission" in line
    assert line.endswith(f"{output} left as it was")
    no_project = CliRunner().invoke(main, [*COMMAND[:5], "-o", str(output)])
    assert no_project.exit_code == 2 and "--project is required" in no_project.stderr
