"""The GCP collector's small parts: import cost guard, endpoints, bucket labels and locations."""

from __future__ import annotations

import subprocess
import sys

import pytest

from gpu_audit.collectors.gcp.connect import endpoint
from gpu_audit.collectors.gcp.rest import (
    DUAL_REGIONS,
    MULTI_REGIONS,
    bucket_refs,
    location_regions,
)


def _loaded_after(statement: str) -> set[str]:
    code = f"import sys\n{statement}\nprint('\\n'.join(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    return set(out.stdout.split())


def test_importing_the_gcp_collector_does_not_import_google_libraries() -> None:
    loaded = _loaded_after("import gpu_audit.collectors.gcp.collector")
    assert "google.cloud.compute_v1" not in loaded
    assert not {m for m in loaded if m == "google" or m.startswith("google.")}


def test_the_cli_does_not_import_the_gcp_client() -> None:
    loaded = _loaded_after("import gpu_audit.cli")
    assert "google.cloud.compute_v1" not in loaded
    assert "gpu_audit.collectors.gcp.collector" not in loaded


@pytest.mark.parametrize(
    ("url", "anonymous"),
    [
        ("http://127.0.0.1:8089", True),
        ("http://localhost:8089/", True),
        ("http://[::1]:8089", True),
        ("127.0.0.1:8089", True),
        ("https://compute.googleapis.com", False),
        ("http://10.0.0.5:8089", False),
        ("http://127.0.0.1.example.com", False),
    ],
)
def test_only_a_loopback_override_is_anonymous(
    monkeypatch: pytest.MonkeyPatch, url: str, anonymous: bool
) -> None:
    monkeypatch.setenv("GPU_AUDIT_GCE_ENDPOINT", url)
    found = endpoint("GPU_AUDIT_GCE_ENDPOINT")
    assert found.url == url.rstrip("/")
    assert found.anonymous is anonymous


def test_no_override_means_the_default_endpoint_with_credentials(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("GPU_AUDIT_GCE_ENDPOINT", raising=False)
    found = endpoint("GPU_AUDIT_GCE_ENDPOINT")
    assert (found.url, found.anonymous) == (None, False)


@pytest.mark.parametrize(
    ("label", "refs"),
    [
        ("ml-datasets", [("gs://ml-datasets", "ml-datasets")]),
        ("gs://ml-datasets/imagenet/train", [("gs://ml-datasets/imagenet/train", "ml-datasets")]),
        ("a, gs://b/x ,c", [("gs://a", "a"), ("gs://b/x", "b"), ("gs://c", "c")]),
        ("", []),
        (" , ", []),
    ],
)
def test_bucket_label_values(label: str, refs: list[tuple[str, str]]) -> None:
    assert bucket_refs(label) == refs


@pytest.mark.parametrize(
    ("bucket", "regions"),
    [
        ({"location": "US-CENTRAL1", "locationType": "region"}, ("us-central1",)),
        ({"location": "NAM4", "locationType": "dual-region"}, ("us-central1", "us-east1")),
        ({"location": "EUR4", "locationType": "dual-region"}, ("europe-north1", "europe-west4")),
        (
            {"location": "ASIA1", "locationType": "dual-region"},
            ("asia-northeast1", "asia-northeast2"),
        ),
        (
            {
                "location": "EU",
                "locationType": "dual-region",
                "customPlacementConfig": {"dataLocations": ["EUROPE-WEST1", "EUROPE-WEST4"]},
            },
            ("europe-west1", "europe-west4"),
        ),
    ],
)
def test_bucket_locations_as_regions(bucket: dict[str, object], regions: tuple[str, ...]) -> None:
    assert location_regions(bucket) == regions


@pytest.mark.parametrize("multi", ["US", "EU", "ASIA"])
def test_multi_regions_contain_their_member_regions(multi: str) -> None:
    regions = location_regions({"location": multi, "locationType": "multi-region"})
    assert regions == MULTI_REGIONS[multi]
    prefix = {"US": "us-", "EU": "europe-", "ASIA": "asia-"}[multi]
    assert all(r.startswith(prefix) for r in regions)
    assert len(set(regions)) == len(regions)


def test_the_eu_multi_region_leaves_out_non_eu_regions() -> None:
    assert "europe-west2" not in MULTI_REGIONS["EU"]  # London
    assert "europe-west6" not in MULTI_REGIONS["EU"]  # Zürich


def test_every_dual_region_is_two_regions_in_one_geography() -> None:
    for name, pair in DUAL_REGIONS.items():
        assert len(pair) == 2, name
        assert pair[0].split("-")[0] == pair[1].split("-")[0], name


def test_a_bare_host_override_means_https_for_rest_calls(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPU_AUDIT_GCS_ENDPOINT", "storage.internal:8443")
    assert endpoint("GPU_AUDIT_GCS_ENDPOINT").base("x") == "https://storage.internal:8443"
    monkeypatch.setenv("GPU_AUDIT_GCS_ENDPOINT", "http://127.0.0.1:9000/")
    assert endpoint("GPU_AUDIT_GCS_ENDPOINT").base("x") == "http://127.0.0.1:9000"
    monkeypatch.delenv("GPU_AUDIT_GCS_ENDPOINT")
    assert endpoint("GPU_AUDIT_GCS_ENDPOINT").base("https://storage.googleapis.com") == (
        "https://storage.googleapis.com"
    )
