"""AWS: every GPU instance in each (account × region), with capacity, tags, utilization, data.

The scan is read-only (Describe/List/Get calls, plus `sts:AssumeRole` for cross-account roles) and
runs (account × region) work items on a bounded thread pool. A work item that fails becomes a
`CoverageGap` carrying the AWS error code; the rest of the scan goes on. boto3 is imported only
when a scan starts, so `gpu-audit check` never pays for it.

Decisions worth knowing:
- Capacity comes from `InstanceLifecycle`: `spot` → spot, `capacity-block`/`scheduled` → reserved,
  absent → on-demand. It is read client-side (moto lacks the `instance-lifecycle` filter).
- Terminated and shutting-down instances are skipped; stopped ones are reported (policy decides).
- A data bucket whose region cannot be read leaves `data.regions` missing and says why in
  `source.note`; it is a missing field on one resource, not a hole in the scan, so it is no gap.
- A CloudWatch failure keeps the region's instances (utilization missing) and adds a gap.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from gpu_audit.collectors.aws.lookups import (
    BucketRegions,
    GpuLookup,
    InstanceTypes,
    bucket_name,
    bucket_uri,
)
from gpu_audit.collectors.aws.metrics import fetch_utilization
from gpu_audit.collectors.aws.sessions import (
    HOME_REGION,
    EventHook,
    Sessions,
    Target,
    organization_accounts,
    targets,
)
from gpu_audit.collectors.aws.settings import AwsSettings
from gpu_audit.collectors.interface import Collector, Progress, ProgressCallback
from gpu_audit.errors import CollectorError
from gpu_audit.model import (
    Capacity,
    CoverageGap,
    DataRef,
    Gpu,
    Kind,
    Resource,
    Scope,
    SourceRef,
    State,
    Utilization,
    Workload,
)

log = logging.getLogger(__name__)

PROVIDER = "aws"
_LIVE_STATES = ["pending", "running", "stopping", "stopped"]
_STATES = {
    "pending": State.PENDING,
    "running": State.RUNNING,
    "stopping": State.STOPPED,
    "stopped": State.STOPPED,
}
_CAPACITY = {
    None: Capacity.ON_DEMAND,
    "spot": Capacity.SPOT,
    "capacity-block": Capacity.RESERVED,
    "scheduled": Capacity.RESERVED,
}
_KEY_ID = re.compile(r"\b(?:AKIA|ASIA|AROA|AIDA)[A-Z0-9]{12,}\b")


@dataclass
class _Account:
    """An account that answered: its id, session, regions to scan and a lazily made S3 client."""

    target: Target
    account_id: str
    session: Any
    regions: list[str]
    _s3: Any = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def s3(self, sessions: Sessions) -> Any:
        with self._lock:
            if self._s3 is None:
                self._s3 = sessions.client(self.session, "s3", HOME_REGION)
            return self._s3


class AwsCollector(Collector[AwsSettings]):
    """Scans EC2 for GPU instances; see the module docstring for the mapping rules."""

    name = PROVIDER

    def __init__(
        self,
        settings: AwsSettings,
        progress: ProgressCallback | None = None,
        *,
        event_hooks: tuple[EventHook, ...] = (),
    ) -> None:
        super().__init__(settings, progress)
        # botocore event handlers registered on every session the scan creates (audit, tests).
        self.event_hooks = event_hooks
        self._accounts: set[str] = set()
        self._regions: set[str] = set()
        self._secrets: set[str] = set()

    def scope(self) -> Scope:
        return Scope(
            command="scan",
            providers=(PROVIDER,),
            accounts=tuple(sorted(self._accounts)),
            regions=tuple(sorted(self._regions)),
        )

    def collect(self) -> Iterator[Resource | CoverageGap]:
        try:
            import boto3  # noqa: F401  (the extra that brings botocore)
        except ImportError as exc:
            raise CollectorError(
                "aws: boto3 is not installed; install the aws extra: pip install 'gpu-audit[aws]'"
            ) from exc
        aws = self.settings
        sessions = Sessions(aws, self.event_hooks)
        # Role ARNs, Organizations and the default chain all start from the base credentials.
        needs_base = bool(aws.role_arns or aws.organization_role or not aws.profiles)
        if needs_base and not sessions.has_credentials():
            raise CollectorError(
                "aws: no credentials found; set AWS_PROFILE or AWS_ACCESS_KEY_ID, "
                "or pass --profile / --role-arn"
            )
        self.remember_secrets(sessions.base)
        org_gaps: list[CoverageGap] = []
        found = list(targets(aws, lambda: self._organization(sessions, org_gaps)))
        yield from org_gaps
        run = _Run(self, sessions, datetime.now(UTC))
        yield from run.execute(found)

    def _organization(self, sessions: Sessions, gaps: list[CoverageGap]) -> list[str]:
        try:
            return organization_accounts(sessions)
        except aws_errors() as exc:  # a hole in the scan, not a crash
            gaps.append(self.gap("organization", exc, None, None))
            return []

    def remember_secrets(self, session: Any) -> None:
        credentials = session.get_credentials()
        if credentials is None:
            return
        frozen = credentials.get_frozen_credentials()
        self._secrets.update(s for s in (frozen.access_key, frozen.secret_key, frozen.token) if s)

    def redact(self, text: str) -> str:
        """`text` with every known credential and anything shaped like an access key id removed."""
        for secret in sorted(self._secrets, key=len, reverse=True):
            text = text.replace(secret, "[redacted]")
        return _KEY_ID.sub("[redacted]", text)

    def gap(
        self, scope: str, exc: BaseException, account: str | None, region: str | None
    ) -> CoverageGap:
        return CoverageGap(
            provider=PROVIDER,
            scope=scope,
            error=error_code(exc),
            message=self.redact(str(exc) or type(exc).__name__),
            account=account,
            region=region,
        )


def aws_errors() -> tuple[type[Exception], ...]:
    """What botocore raises for a failed call (service errors, transport, credentials, config)."""
    from botocore.exceptions import BotoCoreError, ClientError

    return (ClientError, BotoCoreError)


def error_code(exc: BaseException) -> str:
    """The AWS error code of a ClientError, else the exception's class name."""
    response = getattr(exc, "response", None)
    if isinstance(response, dict):
        code = response.get("Error", {}).get("Code")
        if code:
            return str(code)
        status = response.get("ResponseMetadata", {}).get("HTTPStatusCode")
        if status:
            return f"HTTP{status}"
    return type(exc).__name__


class _Run:
    """One scan: opens accounts, then scans (account × region) items as they become known."""

    def __init__(self, owner: AwsCollector, sessions: Sessions, now: datetime) -> None:
        self.owner = owner
        self.aws = owner.settings
        self.sessions = sessions
        self.now = now
        self.types = InstanceTypes()
        self.buckets = BucketRegions()
        self.errors = aws_errors()

    def execute(self, found: list[Target]) -> Iterator[Resource | CoverageGap]:
        done = total = instances = 0
        pool = ThreadPoolExecutor(max(1, self.aws.concurrency), thread_name_prefix="gpu-audit-aws")
        pending: set[Future[Any]] = set()
        try:
            for target in found:
                pending.add(pool.submit(self._open, target))
            while pending:
                ready, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in ready:
                    pending.discard(future)
                    result = future.result()
                    if isinstance(result, CoverageGap):
                        yield result
                    elif isinstance(result, _Account):
                        for region in result.regions:
                            pending.add(pool.submit(self._scan, result, region))
                            total += 1
                    else:
                        done += 1
                        for item in result:
                            instances += isinstance(item, Resource)
                            yield item
                    if self.owner.progress is not None and total:
                        self.owner.progress(Progress(done, total, instances))
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    def _open(self, target: Target) -> _Account | CoverageGap:
        hint = target.account_hint
        try:
            if target.role_arn:
                sts = self.sessions.client(self.sessions.base, "sts", HOME_REGION)
                answer = sts.assume_role(RoleArn=target.role_arn, RoleSessionName="gpu-audit")
                session = self.sessions.derive(credentials=answer["Credentials"])
                self.owner.remember_secrets(session)
            elif target.profile:
                session = self.sessions.derive(profile=target.profile)
                self.owner.remember_secrets(session)
            else:
                session = self.sessions.base
            home = session.get_config_variable("region") or HOME_REGION
            account = hint or self._caller_account(session, home)
            regions = list(self.aws.regions) or self._enabled_regions(session, home)
        except self.errors as exc:  # auth, network, missing profile: this account is a gap
            return self.owner.gap("account", exc, hint, None)
        self.owner._accounts.add(account)
        self.owner._regions.update(regions)
        return _Account(target, account, session, sorted(regions))

    def _caller_account(self, session: Any, region: str) -> str:
        sts = self.sessions.client(session, "sts", region)
        return str(sts.get_caller_identity()["Account"])

    def _enabled_regions(self, session: Any, region: str) -> list[str]:
        ec2 = self.sessions.client(session, "ec2", region)
        return [r["RegionName"] for r in ec2.describe_regions()["Regions"]]

    def _scan(self, account: _Account, region: str) -> list[Resource | CoverageGap]:
        started = time.perf_counter()
        try:
            ec2 = self.sessions.client(account.session, "ec2", region)
            raw = self._instances(ec2)
            specs = self.types.resolve(ec2, {i["InstanceType"] for _, i in raw})
        except self.errors as exc:  # throttled after retries, denied, endpoint down
            return [self.owner.gap("account/region", exc, account.account_id, region)]
        gpu_instances = [(o, i) for o, i in raw if specs[i["InstanceType"]].gpu is not None]
        out: list[Resource | CoverageGap] = []
        usage: dict[str, Utilization] = {}
        if gpu_instances:
            try:
                cloudwatch = self.sessions.client(account.session, "cloudwatch", region)
                ids = [i["InstanceId"] for _, i in gpu_instances]
                usage = fetch_utilization(cloudwatch, ids, self.aws, self.now)
            except self.errors as exc:
                out.append(self.owner.gap("account/region", exc, account.account_id, region))
        for owner_id, instance in gpu_instances:
            lookup = specs[instance["InstanceType"]]
            out.append(self._resource(account, region, owner_id, instance, lookup, usage))
        log.debug(
            "aws %s/%s: %d GPU instances of %d in %.2fs",
            account.account_id,
            region,
            len(gpu_instances),
            len(raw),
            time.perf_counter() - started,
        )
        return out

    def _instances(self, ec2: Any) -> list[tuple[str, dict[str, Any]]]:
        paginator = ec2.get_paginator("describe_instances")
        pages = paginator.paginate(
            Filters=[{"Name": "instance-state-name", "Values": _LIVE_STATES}],
            PaginationConfig={"PageSize": 1000},
        )
        return [
            (reservation.get("OwnerId", ""), instance)
            for page in pages
            for reservation in page.get("Reservations", [])
            for instance in reservation.get("Instances", [])
        ]

    def _resource(
        self,
        account: _Account,
        region: str,
        owner_id: str,
        instance: dict[str, Any],
        lookup: GpuLookup,
        usage: dict[str, Utilization],
    ) -> Resource:
        tags = {t["Key"]: t.get("Value", "") for t in instance.get("Tags", []) if "Key" in t}
        notes = [lookup.note] if lookup.note else []
        data = self._data(account, tags.get(self.aws.data_bucket_tag), notes)
        launched = instance.get("LaunchTime")
        state = (instance.get("State") or {}).get("Name")
        return Resource(
            kind=Kind.INSTANCE,
            provider=PROVIDER,
            id=instance["InstanceId"],
            name=tags.get("Name"),
            account=owner_id or account.account_id,
            region=region,
            zone=(instance.get("Placement") or {}).get("AvailabilityZone"),
            instance_type=instance["InstanceType"],
            state=_STATES.get(state or ""),
            capacity=_CAPACITY.get(instance.get("InstanceLifecycle"), Capacity.UNKNOWN),
            gpu=lookup.gpu or Gpu(),
            tags=tags,
            workload=workload_of(tags.get(self.aws.workload_tag)),
            launched_at=launched.astimezone(UTC) if isinstance(launched, datetime) else None,
            utilization=usage.get(instance["InstanceId"], Utilization()),
            data=data,
            source=SourceRef(note="; ".join(notes) or None),
        )

    def _data(self, account: _Account, tag: str | None, notes: list[str]) -> DataRef:
        references = [part.strip() for part in (tag or "").split(",") if part.strip()]
        if not references:
            return DataRef()
        regions: set[str] = set()
        failed = []
        for reference in references:
            bucket = bucket_name(reference)
            where = self.buckets.locate(account.s3(self.sessions), account.account_id, bucket)
            if where.region is None:
                failed.append(f"{bucket} ({where.error})")
            else:
                regions.add(where.region)
        if failed:
            notes.append("data-bucket region unknown: " + ", ".join(failed))
        uris = tuple(bucket_uri(r) for r in references)
        return DataRef(uris=uris, regions=None if failed else tuple(sorted(regions)))


def workload_of(value: str | None) -> Workload:
    """The workload named by a tag value; unknown when absent or unrecognised."""
    try:
        return Workload((value or "").strip().lower())
    except ValueError:
        return Workload.UNKNOWN
