"""`catalog refresh --provider gcp` against a Cloud Billing Catalog-shaped loopback server,
through google-auth's AuthorizedSession (anonymous on loopback only)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from tests.catalog.price_data import VERTEX, VERTEX_N1
from tests.catalog.price_server import FakePrices

from gpu_audit.cli import main


def test_gcp_refresh_composes_gpu_core_and_ram_skus(
    price_server: FakePrices, tmp_path: Path
) -> None:
    price_server.throttle = {"gcp": 1}
    out = tmp_path / "prices.json"
    args = ["catalog", "refresh", "--provider", "gcp", "--region", "us-central1", "-o", str(out)]
    done = CliRunner().invoke(main, args)
    assert done.exit_code == 0, done.output
    rows = {(r["type"], r["capacity"]): r for r in json.loads(out.read_text())["rows"]}
    one = rows[("a2-highgpu-1g", "on-demand")]
    # 1 x 2.8 + 12 vCPU x 0.031611 + 85 GiB x 0.004237: never the commitment or DWS rate
    assert one["usd_per_hour"] == pytest.approx(2.8 + 12 * 0.031611 + 85 * 0.004237, abs=1e-6)
    assert one["effective"] == "2026-11-18" and "Cloud Billing Catalog" in one["source"]
    spot = rows[("a2-highgpu-8g", "spot")]
    assert spot["usd_per_hour"] == pytest.approx(8 * 1.1 + 96 * 0.0125 + 680 * 0.0017, abs=1e-6)
    assert rows[("gpu:T4", "on-demand")]["usd_per_hour"] == 0.33  # not the mislabelled 0.35
    assert ("gpu:T4", "spot") not in rows
    assert rows[("n1-standard-8", "on-demand")]["usd_per_hour"] == pytest.approx(
        8 * 0.031611 + 30 * 0.004237, abs=1e-6
    )
    assert not any(name.startswith(("a3-", "g2-")) for name, _ in rows)  # no SKUs: bundled stays
    calls = [q for api, q in price_server.requests if api == "gcp"]
    compute = [q for q in calls if q["path"] == "/v1/services/6F81-5844-456A/skus"]
    vertex = [q for q in calls if q["path"] == "/v1/services/C7E2-9256-1C43/skus"]
    assert len(compute) == 1 + 4  # one throttled, then 12 SKUs in pages of 3
    assert len(vertex) == 6  # the Vertex AI service's 17 SKUs in pages of 3
    assert len(calls) == 11 and f"{len(calls)} requests" in done.output


def _refresh(out: Path, *regions: str) -> str:
    args = ["catalog", "refresh", "--provider", "gcp", "-o", str(out)]
    for region in regions:
        args += ["--region", region]
    done = CliRunner().invoke(main, args)
    assert done.exit_code == 0, done.output
    return done.output


def test_vertex_training_prices_come_from_the_vertex_service(
    price_server: FakePrices, tmp_path: Path
) -> None:
    price_server.throttle = {"gcp": 2}
    out = tmp_path / "prices.json"
    _refresh(out, "us-central1", "europe-west4")
    rows = {(r["type"], r["region"], r["capacity"]): r for r in json.loads(out.read_text())["rows"]}
    a3 = rows[("vertex:a3-highgpu-8g", "us-central1", "on-demand")]
    # 8 x the training H100 SKU + 208 x A3 core + 1872 GiB x A3 RAM: never the prediction,
    # management-fee, commitment, term, Preemptible-billed or H100 Mega SKU
    expected = 8 * VERTEX["h100"] + 208 * VERTEX["a3_core"] + 1872 * VERTEX["a3_ram"]
    assert a3["usd_per_hour"] == pytest.approx(expected, abs=1e-6)
    assert a3["effective"] == "2026-11-18" and a3["provider"] == "gcp"
    assert "services/C7E2-9256-1C43/skus" in a3["source"]
    assert "Vertex AI: Training/Pipelines on NVIDIA H100 80GB" in a3["source"]
    one = rows[("vertex:a3-highgpu-1g", "us-central1", "on-demand")]
    assert one["usd_per_hour"] == pytest.approx(
        VERTEX["h100"] + 26 * VERTEX["a3_core"] + 234 * VERTEX["a3_ram"], abs=1e-6
    )
    host = rows[("vertex:n1-standard-8", "us-central1", "on-demand")]
    assert host["usd_per_hour"] == pytest.approx(8 * VERTEX_N1[0] + 30 * VERTEX_N1[1], abs=1e-6)
    vertex = {key for key in rows if key[0].startswith("vertex:")}
    assert all(capacity == "on-demand" for _, _, capacity in vertex)  # Vertex lists no spot SKU
    # europe-west4's A3 core is priced twice, differently: refused, the bundled price stays
    assert not any(region == "europe-west4" for _, region, _ in vertex)
    # families whose Vertex wording is not established (A2, G2, attached GPUs) are not read
    assert not any(
        item.startswith(("vertex:a2-", "vertex:g2-", "vertex:gpu:")) for item, _, _ in vertex
    )
    assert ("vertex:a3-megagpu-8g", "us-central1", "on-demand") not in rows


def _fleet(tmp_path: Path) -> Path:
    def job(name: str, capacity: str, workload: str = "training") -> dict[str, str]:
        return {
            "kind": "job",
            "provider": "gcp",
            "service": "vertex",
            "id": f"projects/p/locations/us-central1/customJobs/{name}",
            "region": "us-central1",
            "instance_type": "a3-highgpu-8g",
            "state": "running",
            "capacity": capacity,
            "workload": workload,
        }

    resources = [job("od", "on-demand"), job("spot", "spot")]
    resources.append({**job("gce", "on-demand"), "service": "gce", "id": "vm-a3"})
    path = tmp_path / "fleet.yaml"
    body = {"version": 1, "captured_at": "2026-11-25T12:00:00Z", "resources": resources}
    path.write_text(yaml.safe_dump(body))
    return path


def test_vertex_prices_reach_a_scanned_vertex_job(price_server: FakePrices, tmp_path: Path) -> None:
    out = tmp_path / "prices.json"
    _refresh(out, "us-central1")
    report = tmp_path / "report.json"
    args = ["scan", "--inventory", str(_fleet(tmp_path)), "--fail-on", "none", "-o", str(report)]
    done = CliRunner().invoke(main, [*args, "--prices", str(out)])
    assert done.exit_code == 0, done.output
    found = {
        r["id"].rpartition("/")[2]: r["price"] for r in json.loads(report.read_text())["resources"]
    }
    expected = round(8 * VERTEX["h100"] + 208 * VERTEX["a3_core"] + 1872 * VERTEX["a3_ram"], 5)
    on_demand = found["od"]
    assert on_demand["hourly_usd"] == pytest.approx(expected, abs=1e-5)
    assert "C7E2-9256-1C43" in on_demand["source"] and on_demand["as_of"] == "2026-11-18"
    # spot on Vertex is not in the Vertex service: the bundled spot price stays, and says so
    spot = found["spot"]
    assert (
        spot["hourly_usd"] == 40.70511 and spot["on_demand_hourly_usd"] == on_demand["hourly_usd"]
    )
    assert "C7E2-9256-1C43" in spot["source"] and "x 1.15" in spot["source"]
    assert spot["as_of"] == "2026-11-18"  # the older of the file's and the bundled date
    # a Compute Engine VM of the same type is not priced on the Vertex card
    assert "C7E2-9256-1C43" not in found["vm-a3"]["source"]
    bare = CliRunner().invoke(main, args)
    assert bare.exit_code == 0, bare.output
    bundled = {
        r["id"].rpartition("/")[2]: r["price"] for r in json.loads(report.read_text())["resources"]
    }
    assert bundled["od"]["hourly_usd"] == 101.7635  # the bundled Compute Engine x 1.15 row again


def test_a_refused_vertex_service_leaves_the_file_untouched(
    price_server: FakePrices, tmp_path: Path
) -> None:
    out = tmp_path / "prices.json"
    _refresh(out, "us-central1")
    before = out.read_bytes()
    price_server.fail = {"vertex"}  # Compute Engine answers, then the Vertex AI service 403s
    args = ["catalog", "refresh", "--provider", "gcp", "--region", "us-central1", "-o", str(out)]
    done = CliRunner().invoke(main, args)
    assert done.exit_code == 2
    assert done.output.strip().splitlines() == [
        "gpu-audit: error: gcp: billing catalog: HTTP 403 from "
        f"{price_server.base}/v1/services/C7E2-9256-1C43/skus"
    ]
    assert out.read_bytes() == before
