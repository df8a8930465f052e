"""Realistic Compute Engine, Monitoring and Storage payloads for the GCP collector tests.

Shapes follow the documented REST resources: `compute#instance` (as aggregatedList returns it),
`TimeSeries` of `agent.googleapis.com/gpu/utilization` (Ops Agent, one series per GPU), and
`storage#bucket`. Timestamps are RFC 3339 with the offsets GCE really uses.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from gcp_server import API, FakeGcp

PROD = "ml-train-prod"
RESEARCH = "ml-research"
FLAKY = "ml-flaky"
FORBIDDEN = "ml-forbidden"
GONE = "ml-gone"

METRIC = "agent.googleapis.com/gpu/utilization"


def instance(
    project: str,
    zone: str,
    name: str,
    machine_type: str,
    *,
    id: str,
    status: str = "RUNNING",
    accelerators: tuple[tuple[str, int], ...] = (),
    scheduling: dict[str, Any] | None = None,
    labels: dict[str, str] | None = None,
    created: str = "2025-01-10T08:30:12.345-08:00",
    started: str | None = "2025-06-01T02:00:00.000-07:00",
) -> dict[str, Any]:
    zone_url = f"{API}/projects/{project}/zones/{zone}"
    region = zone.rsplit("-", 1)[0]
    body: dict[str, Any] = {
        "kind": "compute#instance",
        "id": id,
        "creationTimestamp": created,
        "name": name,
        "tags": {"fingerprint": "42WmSpB8rSM="},
        "machineType": f"{zone_url}/machineTypes/{machine_type}",
        "status": status,
        "zone": zone_url,
        "canIpForward": False,
        "networkInterfaces": [
            {
                "kind": "compute#networkInterface",
                "network": f"{API}/projects/{project}/global/networks/default",
                "subnetwork": f"{API}/projects/{project}/regions/{region}/subnetworks/default",
                "networkIP": "10.128.0.7",
                "name": "nic0",
                "fingerprint": "ZmbrTQn7Llo=",
                "stackType": "IPV4_ONLY",
            }
        ],
        "disks": [
            {
                "kind": "compute#attachedDisk",
                "type": "PERSISTENT",
                "mode": "READ_WRITE",
                "source": f"{zone_url}/disks/{name}",
                "deviceName": "persistent-disk-0",
                "index": 0,
                "boot": True,
                "autoDelete": True,
                "interface": "SCSI",
                "diskSizeGb": "200",
                "architecture": "X86_64",
            }
        ],
        "metadata": {"kind": "compute#metadata", "fingerprint": "tGr9L9X0p6U="},
        "serviceAccounts": [
            {
                "email": "123456789012-compute@developer.gserviceaccount.com",
                "scopes": ["https://www.googleapis.com/auth/cloud-platform"],
            }
        ],
        "selfLink": f"{zone_url}/instances/{name}",
        "scheduling": scheduling
        or {
            "onHostMaintenance": "TERMINATE",
            "automaticRestart": True,
            "preemptible": False,
            "provisioningModel": "STANDARD",
        },
        "cpuPlatform": "Intel Cascade Lake",
        "labelFingerprint": "c6ImqnDXz5s=",
        "startRestricted": False,
        "deletionProtection": False,
        "fingerprint": "dY8ZqtBnVjE=",
    }
    if labels:
        body["labels"] = labels
    if accelerators:
        body["guestAccelerators"] = [
            {"acceleratorType": f"{zone_url}/acceleratorTypes/{kind}", "acceleratorCount": count}
            for kind, count in accelerators
        ]
    if started:
        body["lastStartTimestamp"] = started
    if status in ("TERMINATED", "SUSPENDED"):
        body["lastStopTimestamp"] = "2025-06-03T18:45:00.000-07:00"
    return body


SPOT = {
    "onHostMaintenance": "TERMINATE",
    "automaticRestart": False,
    "preemptible": False,
    "provisioningModel": "SPOT",
    "instanceTerminationAction": "STOP",
}
LEGACY_PREEMPTIBLE = {
    "onHostMaintenance": "TERMINATE",
    "automaticRestart": False,
    "preemptible": True,
}
RESERVED = {
    "onHostMaintenance": "TERMINATE",
    "automaticRestart": True,
    "preemptible": False,
    "provisioningModel": "RESERVATION_BOUND",
}


def prod_instances() -> list[dict[str, Any]]:
    p = PROD
    return [
        instance(p, "us-central1-a", "serve-t4-1", "n1-standard-8", id="1001000000000000001",
                 accelerators=(("nvidia-tesla-t4", 1),),
                 labels={"workload": "inference", "team": "search", "data-bucket": "ml-datasets-us"}),
        instance(p, "us-central1-a", "train-a2-spot", "a2-highgpu-1g", id="1001000000000000002",
                 accelerators=(("nvidia-tesla-a100", 1),), scheduling=SPOT,
                 labels={"workload": "training", "team": "nlp", "data-bucket": "ckpt-eu"}),
        # GCE usually lists built-in GPUs in guestAccelerators too; these two omit them, so the
        # machine type's GPUs come from the catalog.
        instance(p, "us-central1-a", "train-a3-reserved", "a3-highgpu-8g", id="1001000000000000003",
                 scheduling=RESERVED, started=None,
                 labels={"workload": "Training", "data-bucket": "corpus-nam4"}),
        instance(p, "europe-west4-a", "notebook-g2", "g2-standard-4", id="1001000000000000004",
                 status="TERMINATED", scheduling=LEGACY_PREEMPTIBLE,
                 labels={"workload": "notebook", "owner": "ada"}),
        instance(p, "us-central1-b", "web-e2", "e2-medium", id="1001000000000000005"),
        instance(p, "us-east1-b", "eval-a2-ultra", "a2-ultragpu-1g", id="1001000000000000006",
                 status="STAGING", accelerators=(("nvidia-a100-80gb", 1),),
                 labels={"data-bucket": "eval-dual"}),
        instance(p, "us-central1-b", "serve-l4-locked", "g2-standard-8", id="1001000000000000007",
                 status="SUSPENDED", accelerators=(("nvidia-l4", 1),),
                 labels={"workload": "batch-scoring", "data-bucket": "locked-bucket"}),
    ]  # fmt: skip


def research_instances() -> list[dict[str, Any]]:
    p = RESEARCH
    return [
        instance(p, "europe-west4-b", "v100-sweep", "n1-highmem-16", id="2002000000000000001",
                 accelerators=(("nvidia-tesla-v100", 2),), scheduling=SPOT,
                 labels={"workload": "training", "data-bucket": "research-data"}),
        instance(p, "europe-west4-b", "h100-mega", "a3-megagpu-8g", id="2002000000000000002",
                 accelerators=(("nvidia-h100-mega-80gb", 8),)),
    ]  # fmt: skip


def flaky_instances() -> list[dict[str, Any]]:
    return [
        instance(FLAKY, "asia-northeast1-a", "t4-ocr", "n1-standard-4", id="3003000000000000001",
                 accelerators=(("nvidia-tesla-t4", 1),), labels={"data-bucket": "asia-archive"}),
    ]  # fmt: skip


def gpu_series(
    project: str, zone: str, instance_id: str, values: list[float], gpu: int = 0
) -> dict[str, Any]:
    """One Ops Agent GPU series, aligned to 5-minute means (newest point first, as the API orders)."""
    end = datetime.now(UTC).replace(microsecond=0)
    points = []
    for step, value in enumerate(values):
        stamp = (end - timedelta(minutes=5 * step)).strftime("%Y-%m-%dT%H:%M:%SZ")
        points.append({"interval": {"startTime": stamp, "endTime": stamp},
                       "value": {"doubleValue": value}})  # fmt: skip
    return {
        "metric": {
            "labels": {
                "gpu_number": str(gpu),
                "model": "NVIDIA",
                "uuid": f"GPU-{instance_id[-4:]}-{gpu}",
            },
            "type": METRIC,
        },
        "resource": {
            "type": "gce_instance",
            "labels": {"project_id": project, "instance_id": instance_id, "zone": zone},
        },
        "metricKind": "GAUGE",
        "valueType": "DOUBLE",
        "points": points,
    }


T4_VALUES = [10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 100.0]
A2_VALUES = [95.0, 97.5, 99.0, 96.5]
A3_IDLE = [2.0] * 6
A3_SPIKE = [2.0, 2.0, 2.0, 2.0, 2.0, 50.0]


def prod_series() -> list[dict[str, Any]]:
    a3 = [
        gpu_series(
            PROD, "us-central1-a", "1001000000000000003", A3_SPIKE if gpu == 0 else A3_IDLE, gpu
        )
        for gpu in range(8)
    ]
    return [
        gpu_series(PROD, "us-central1-a", "1001000000000000001", T4_VALUES),
        gpu_series(PROD, "us-central1-a", "1001000000000000002", A2_VALUES),
        *a3,
    ]


def bucket(name: str, location: str, location_type: str, **extra: Any) -> dict[str, Any]:
    return {
        "kind": "storage#bucket",
        "selfLink": f"https://www.googleapis.com/storage/v1/b/{name}",
        "id": name,
        "name": name,
        "projectNumber": "123456789012",
        "metageneration": "3",
        "location": location,
        "storageClass": "STANDARD",
        "etag": "CAM=",
        "timeCreated": "2024-02-01T10:00:00.000Z",
        "updated": "2024-02-01T10:00:00.000Z",
        "locationType": location_type,
        "rpo": "DEFAULT",
        "iamConfiguration": {"uniformBucketLevelAccess": {"enabled": True}},
        **extra,
    }


def buckets() -> dict[str, dict[str, Any]]:
    return {
        "ml-datasets-us": bucket("ml-datasets-us", "US", "multi-region"),
        "ckpt-eu": bucket("ckpt-eu", "EU", "multi-region"),
        "corpus-nam4": bucket("corpus-nam4", "NAM4", "dual-region"),
        "eval-dual": bucket(
            "eval-dual", "US", "dual-region",
            customPlacementConfig={"dataLocations": ["US-EAST1", "US-WEST1"]},
        ),
        "research-data": bucket("research-data", "EUROPE-WEST4", "region"),
        "asia-archive": bucket("asia-archive", "ASIA", "multi-region"),
    }  # fmt: skip


def scenario() -> FakeGcp:
    """Three readable projects (one answers 503 once), one forbidden, one that does not exist."""
    return FakeGcp(
        instances={
            PROD: prod_instances(),
            RESEARCH: research_instances(),
            FLAKY: flaky_instances(),
            FORBIDDEN: [],
        },
        series={PROD: prod_series()},
        buckets=buckets(),
        forbidden={FORBIDDEN},
        missing={GONE},
        unavailable={FLAKY: 1},
        forbidden_buckets={"locked-bucket"},
    )
