"""`catalog refresh --provider gcp` against a Cloud Billing Catalog-shaped loopback server,
through google-auth's AuthorizedSession (anonymous on loopback only)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
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
    assert len(calls) == 1 + 4  # one throttled, then 12 SKUs in pages of 3
    assert f"{len(calls)} requests" in done.output
