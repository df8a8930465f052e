"""Run-wide caches for the AWS collector: instance type → GPU, and S3 bucket → region."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable
from typing import Any

from gpu_audit.catalog import canonical_gpu, instance_spec
from gpu_audit.core.frozen import record
from gpu_audit.core.resource import Gpu

# Families whose every size carries GPUs; used only when neither the catalog nor
# DescribeInstanceTypes knows a type, so such an instance is still reported (GPU spec missing).
_GPU_FAMILY = re.compile(r"^(p\d+[a-z]*(-[a-z0-9]+)?|g\d+[a-z]*|gr\d+[a-z]*)\.")
_DESCRIBE_BATCH = 100  # DescribeInstanceTypes accepts up to 100 names a call


def _client_error_code(exc: Exception) -> str | None:
    response = getattr(exc, "response", None)
    if isinstance(response, dict):
        return str(response.get("Error", {}).get("Code") or "") or None
    return None


@record
class GpuLookup:
    gpu: Gpu | None  # None: not a GPU instance type
    note: str | None = None


def gpu_from_info(info: dict[str, Any]) -> Gpu | None:
    """A `Gpu` from DescribeInstanceTypes' `GpuInfo`; None when the type lists no GPUs."""
    gpus = info.get("Gpus") or []
    # A fractional GPU (g6f: a 1/8 L4) reports Count 0 and LogicalGpuCount 1; it is GPU capacity.
    count = sum(int(g.get("Count") or 0) for g in gpus) or sum(
        int(g.get("LogicalGpuCount") or 0) for g in gpus
    )
    if not gpus or count == 0:
        return None
    first = gpus[0]
    name = str(first.get("Name") or "")
    mib = (first.get("MemoryInfo") or {}).get("SizeInMiB")
    gib = round(mib / 1024, 2) if mib else None
    # "A100" with 80 GiB is the A100-80GB class; try the memory-qualified spelling first.
    model = (canonical_gpu(f"{name}-{round(gib)}gb") if gib else None) or canonical_gpu(name)
    return Gpu(model=model or name or None, count=count, memory_gib=gib)


class InstanceTypes:
    """Instance type → GPU: the catalog, else `DescribeInstanceTypes` (once per type per run)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._known: dict[str, GpuLookup] = {}

    def resolve(self, ec2: Any, types: Iterable[str]) -> dict[str, GpuLookup]:
        """The GPU of each instance type: the catalog's, else a cached or batched
        DescribeInstanceTypes answer (thread-safe)."""
        wanted = sorted(set(types))
        answer: dict[str, GpuLookup] = {}
        missing: list[str] = []
        for name in wanted:
            spec = instance_spec(name)
            if spec is not None:
                answer[name] = GpuLookup(Gpu(spec.gpu_model, spec.gpu_count, spec.gpu_memory_gib))
                continue
            with self._lock:
                cached = self._known.get(name)
            if cached is not None:
                answer[name] = cached
            else:
                missing.append(name)
        for start in range(0, len(missing), _DESCRIBE_BATCH):
            found = self.describe(ec2, missing[start : start + _DESCRIBE_BATCH])
            with self._lock:
                self._known.update(found)
            answer.update(found)
        return answer

    def describe(self, ec2: Any, names: list[str]) -> dict[str, GpuLookup]:
        """Asks `DescribeInstanceTypes` about `names`; a failure degrades to the family rule."""
        from botocore.exceptions import BotoCoreError, ClientError  # keeps botocore off start-up

        try:
            pages = ec2.get_paginator("describe_instance_types").paginate(InstanceTypes=names)
            infos = {t["InstanceType"]: t for page in pages for t in page["InstanceTypes"]}
        except ClientError as exc:
            code = _client_error_code(exc) or "ClientError"
            if code.startswith("InvalidInstanceType") and len(names) > 1:
                # One unknown name fails the whole call: ask for each type alone.
                found: dict[str, GpuLookup] = {}
                for name in names:
                    found.update(self.describe(ec2, [name]))
                return found
            return {name: _by_family(name, f"DescribeInstanceTypes: {code}") for name in names}
        except BotoCoreError as exc:
            note = f"DescribeInstanceTypes: {type(exc).__name__}"
            return {name: _by_family(name, note) for name in names}
        found = {}
        for name in names:
            info = infos.get(name)
            if info is None:
                found[name] = _by_family(name, "DescribeInstanceTypes: unknown type")
            else:
                found[name] = GpuLookup(gpu_from_info(info.get("GpuInfo") or {}))
        return found


def _by_family(name: str, why: str) -> GpuLookup:
    if _GPU_FAMILY.match(name):
        return GpuLookup(Gpu(), note=f"GPU spec unknown for {name} ({why})")
    return GpuLookup(None)


@record
class BucketRegion:
    region: str | None
    error: str | None = None


def bucket_name(reference: str) -> str:
    """`s3://bucket/prefix` or `bucket` → `bucket`."""
    text = reference.strip()
    if text.lower().startswith("s3://"):
        text = text[5:]
    return text.split("/", 1)[0]


def bucket_uri(reference: str) -> str:
    """An S3 reference as an `s3://` URI (a bare bucket name gets the scheme)."""
    text = reference.strip()
    return text if text.lower().startswith("s3://") else f"s3://{text}"


class BucketRegions:
    """Bucket → region via S3 `GetBucketLocation`, cached per run (per account for failures)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._regions: dict[str, str] = {}
        self._failures: dict[tuple[str, str], str] = {}

    def locate(self, s3: Any, account: str, bucket: str) -> BucketRegion:
        """The bucket's region from GetBucketLocation (no constraint is us-east-1, `EU` eu-west-1),
        or the error code of a failed call; each answer cached for the run."""
        from botocore.exceptions import BotoCoreError, ClientError  # keeps botocore off start-up

        with self._lock:
            if bucket in self._regions:
                return BucketRegion(self._regions[bucket])
            if (account, bucket) in self._failures:
                return BucketRegion(None, self._failures[(account, bucket)])
        try:
            constraint = s3.get_bucket_location(Bucket=bucket).get("LocationConstraint")
        except ClientError as exc:
            error = _client_error_code(exc) or "ClientError"
        except BotoCoreError as exc:
            error = type(exc).__name__
        else:
            # No constraint is us-east-1; "EU" is the legacy name of eu-west-1.
            region = {None: "us-east-1", "": "us-east-1", "EU": "eu-west-1"}.get(
                constraint, constraint
            )
            with self._lock:
                self._regions[bucket] = str(region)
            return BucketRegion(str(region))
        with self._lock:
            self._failures[(account, bucket)] = error
        return BucketRegion(None, error)
