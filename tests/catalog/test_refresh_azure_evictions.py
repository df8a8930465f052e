"""`catalog refresh --provider azure --interruptions`: Resource Graph's SpotResources eviction
rates read through the Azure SDK's ResourceGraphClient against the project's Resource Graph
server on loopback (paging by `$skipToken`, a 429 with Retry-After, a 403), converted as
docs/spot.md says (the band's upper end ÷ 100 ÷ 672 instance-hours: Microsoft's 28 trailing
days), written with the other providers' rows kept; a failure leaves the file as it was."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest
from click.testing import CliRunner
from tests.collectors.azure_server import FakeAzure, serve
from tests.conftest import FIXTURES

from gpu_audit.catalog.evictions import band_of, band_rate, eviction_rows
from gpu_audit.catalog.interruptions import rate_for, read_rates, use_rates
from gpu_audit.catalog.lostwork import figures, money
from gpu_audit.cli.main import main
from gpu_audit.errors import ConfigError

ROWS = json.loads((FIXTURES / "interruptions" / "azure-spotresources.json").read_text())["data"]
GCP = FIXTURES / "interruptions" / "gcp-capacity-advice.json"
COMMAND = ["catalog", "refresh", "--provider", "azure", "--interruptions", "-o"]


def _role_actions() -> set[str]:
    """The Actions of the custom role in docs/permissions.md's Azure section."""
    doc = (FIXTURES.parent / "docs" / "permissions.md").read_text()
    section = doc[doc.index("\n## Azure\n") : doc.index("\n## Kubernetes\n")]
    found = re.search(r'"Actions": \[(.*?)\]', section, re.DOTALL)
    assert found is not None
    return set(json.loads(f"[{found.group(1)}]"))


@pytest.fixture
def graph(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAzure]:
    fake = FakeAzure(spot=ROWS, page_size=2, retry_after="0")
    with serve(fake) as url:
        monkeypatch.setenv("GPU_AUDIT_AZURE_ENDPOINT", url)
        yield fake
    use_rates(None)


def test_bands_convert_at_their_upper_end_over_28_days() -> None:
    """0-5 → 5 / 100 / 672 = 0.0000744; 5-10 → 0.00014881; 15-20 → 0.00029762; 20+ → 100:
    1 / 672 = 0.00148810 (an open band is never assumed rare)."""
    assert [band_rate(u) for u in (5, 10, 15, 20, 100)] == [
        0.0000744, 0.00014881, 0.00022321, 0.00029762, 0.0014881,
    ]  # fmt: skip
    assert [band_of(t) for t in ("0-5", "5 - 10%", "20+", "20+%", "3-7", "high", 5)] == [
        "0-5", "5-10", "20+", "20+", None, None, None,
    ]  # fmt: skip


def test_refresh_reads_every_page_and_keeps_the_other_providers(
    tmp_path: Path, graph: FakeAzure
) -> None:
    output = tmp_path / "rates.json"
    output.write_text(GCP.read_text())
    graph.faults["graph"] = [429]  # throttled once: retried after Retry-After
    result = CliRunner().invoke(main, [*COMMAND, str(output)])
    assert result.exit_code == 0, result.output
    # four GPU rows over two pages (the D-series size is filtered out by the query itself)
    assert result.stdout.strip() == f"{output}: 4 azure interruption rates, 2 requests"
    posts = [r for r in graph.requests if r.method == "POST"]
    assert len(posts) == 3 and {r.method for r in graph.requests} == {"POST"}
    # every call is the Resource Graph read the documented least-privilege role grants
    assert {r.path.lower() for r in graph.requests} == {
        "/providers/microsoft.resourcegraph/resources"
    }
    assert "Microsoft.ResourceGraph/resources/read" in _role_actions()
    first = posts[0].body or {}
    assert "subscriptions" not in first  # tenant scope: SpotResources is not per subscription
    assert first["query"].startswith(
        "SpotResources | where type =~ 'microsoft.compute/skuspotevictionrate/location' "
        "| where sku.name in~ ('standard_nc6s_v3', "
    )
    assert (posts[2].body or {})["options"]["$skipToken"] == "2"
    written = read_rates(str(output))
    rows = {(r.provider, r.type, r.region): r for r in written.rows}
    assert rows[("gcp", "a2-highgpu-1g", "us-central1")].per_hour == 1.0  # kept
    a100 = rows[("azure", "Standard_NC24ads_A100_v4", "eastus")]
    assert (a100.per_hour, a100.public, a100.source) == (
        0.0000744,
        "evictionRate 0-5% (28 days, upper end 5)",
        "azure-spot-eviction-rates",
    )
    assert rows[("azure", "Standard_NC24ads_A100_v4", "westus2")].per_hour == 0.00029762
    # the lower-case size of the answer is written as the catalog spells it
    assert rows[("azure", "Standard_NC6s_v3", "eastus")].per_hour == 0.00014881
    assert rows[("azure", "Standard_ND96isr_H100_v5", "eastus")].per_hour == 0.0014881
    assert not any(key[1] == "Standard_D2s_v4" for key in rows)
    (source,) = [s for s in written.sources if s.name == "azure-spot-eviction-rates"]
    assert source.url.endswith(
        "/providers/Microsoft.ResourceGraph/resources "
        "(microsoft.compute/skuspotevictionrate/location)"
    )


def test_the_refreshed_rates_price_lost_work_to_the_cent(tmp_path: Path, graph: FakeAzure) -> None:
    """Standard_NC24ads_A100_v4 in westus2 (15-20: 0.00029762 an hour), 24 h, no checkpoint,
    on-demand 3.673, spot 0.615962 (prices.csv): lost = 24 × 0.00029762 × (12 + 5/60) ×
    0.615962 = 0.0531 → $0.05; discount = (3.673 − 0.615962) × 24 = 73.3689 → $73.37;
    net = 73.3158 → $73.32."""
    output = tmp_path / "rates.json"
    assert CliRunner().invoke(main, [*COMMAND, str(output)]).exit_code == 0
    use_rates(str(output))
    rate = rate_for("azure", "Standard_NC24ads_A100_v4", "westus2")
    assert rate is not None and rate.public == "evictionRate 15-20% (28 days, upper end 20)"
    section = figures(rate, 24.0, None, 5.0, 3.673, 0.615962)
    hours, spot, od = Decimal(24), Decimal("0.615962"), Decimal("3.673")
    lost = hours * Decimal("0.00029762") * (hours / 2 + Decimal(5) / 60) * spot
    discount = (od - spot) * hours
    assert (
        (section.lost_usd, section.discount_usd, section.net_usd)
        == (
            money(float(lost)),
            money(float(discount)),
            money(float(discount - lost)),
        )
        == (0.05, 73.37, 73.32)
    )
    # a region the answer has no row for: not evaluated, never assumed rare
    assert rate_for("azure", "Standard_NC24ads_A100_v4", "northeurope") is None


def test_region_narrows_the_query(tmp_path: Path, graph: FakeAzure) -> None:
    output = tmp_path / "rates.json"
    result = CliRunner().invoke(main, [*COMMAND, str(output), "--region", "westus2"])
    assert result.exit_code == 0, result.output
    assert "| where location in~ ('westus2')" in (graph.requests[0].body or {})["query"]
    assert {r.region for r in read_rates(str(output)).rows} == {"westus2"}


def test_a_403_is_one_line_and_the_file_is_left_as_it_was(tmp_path: Path, graph: FakeAzure) -> None:
    output = tmp_path / "rates.json"
    output.write_text(GCP.read_text())
    graph.faults["graph"] = [403]
    result = CliRunner().invoke(main, [*COMMAND, str(output)])
    assert result.exit_code == 2
    (line,) = result.stderr.strip().splitlines()
    assert "AuthorizationFailed (403)" in line and "Microsoft.ResourceGraph/resources/read" in line
    assert line.endswith(f"{output} left as it was")
    assert output.read_text() == GCP.read_text()


def test_an_answer_of_another_shape_is_refused_whole(tmp_path: Path, graph: FakeAzure) -> None:
    output = tmp_path / "rates.json"
    graph.spot = [{**ROWS[0], "properties": {"evictionRate": "high"}}]
    result = CliRunner().invoke(main, [*COMMAND, str(output)])
    assert result.exit_code == 2 and not output.exists()
    assert "evictionRate 'high' is not a band (0-5, 5-10, 10-15, 15-20, 20+)" in result.stderr
    with pytest.raises(ConfigError, match=r"expected sku\.name and location"):
        eviction_rows([{"type": ROWS[0]["type"]}], "2026-12-04", ["Standard_NC6s_v3"])


def test_an_azure_ml_job_is_priced_with_the_refreshed_rates(
    tmp_path: Path, graph: FakeAzure
) -> None:
    """The Azure ML serverless job of fixtures/jobs/azureml (Standard_NC24ads_A100_v4 × 2,
    4 h timeout, no region: the type's highest rate, westus2's 15-20 band, 0.00029762 an
    hour), labelled with a 20-minute checkpoint; spot 0.88887 and on-demand 7.346 an hour for
    the two instances (the catalog's reference region): lost = 4 × 0.00029762 × 2 × (10/60 +
    5/60) × 0.88887 = 0.0005 → $0.00; discount = (7.346 − 0.88887) × 4 = 25.8285 → $25.83;
    net $25.83, the saving spot-for-training gives the same job on the Standard tier."""
    rates = tmp_path / "rates.json"
    assert CliRunner().invoke(main, [*COMMAND, str(rates)]).exit_code == 0
    source = (FIXTURES / "jobs" / "azureml" / "command-job-serverless.yaml").read_text()
    labelled = source.replace(
        "  team: vision", '  team: vision\n  gpu-audit/checkpoint-interval-minutes: "20"'
    )
    spot = tmp_path / "spot.yaml"
    spot.write_text(labelled)
    dedicated = tmp_path / "dedicated.yaml"
    dedicated.write_text(
        labelled.replace("job_tier: Spot", "job_tier: Standard").replace(
            "display_name: vit-finetune", "display_name: vit-dedicated"
        )
    )
    result = CliRunner().invoke(
        main, ["check", str(spot), str(dedicated), "--interruption-rates", str(rates),
               "--format", "json"],
    )  # fmt: skip
    assert result.exit_code in (0, 1), result.output
    report = json.loads(result.stdout)
    by_name = {r["name"]: (i, r) for i, r in enumerate(report["resources"])}
    hours, spot_rate, od = Decimal(4), Decimal("0.88887"), Decimal("7.346")
    lost = hours * Decimal("0.00029762") * 2 * (Decimal(10) / 60 + Decimal(5) / 60) * spot_rate
    discount = (od - spot_rate) * hours
    _, job = by_name["vit-finetune"]
    figures = job["interruption"]
    assert (figures["rate_per_hour"], figures["instances"], figures["spot_hourly_usd"]) == (
        0.00029762, 2, 0.88887,
    )  # fmt: skip
    assert (
        (figures["lost_usd"], figures["discount_usd"], figures["net_usd"])
        == (
            money(float(lost)),
            money(float(discount)),
            money(float(discount - lost)),
        )
        == (0.0, 25.83, 25.83)
    )
    index, _ = by_name["vit-dedicated"]
    (advice,) = [
        f for f in report["findings"]
        if f["resource"] == index and f["rule_id"] == "spot-for-training"
    ]  # fmt: skip
    assert (advice["saving_usd"], advice["saving_unit"]) == (25.83, "run")
