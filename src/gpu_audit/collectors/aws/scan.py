"""AWS work items: open each account, then scan each (account × region) on a bounded pool."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import field, replace
from datetime import UTC, datetime
from queue import SimpleQueue
from typing import TYPE_CHECKING, Any, Protocol

from gpu_audit.collectors.aws.lookups import (
    BucketRegions,
    GpuLookup,
    InstanceTypes,
    bucket_name,
    bucket_uri,
)
from gpu_audit.collectors.aws.metrics import fetch_utilization, instance_series
from gpu_audit.collectors.aws.reservations import read_reservations
from gpu_audit.collectors.aws.sagemaker import LISTS, read_list
from gpu_audit.collectors.aws.sagemaker_map import Found, SageMakerMapper
from gpu_audit.collectors.aws.sagemaker_runs import finished_runs
from gpu_audit.collectors.aws.sessions import HOME_REGION, Sessions, Target
from gpu_audit.collectors.aws.universe import item_key
from gpu_audit.collectors.interface import Progress
from gpu_audit.collectors.options import period_start
from gpu_audit.core.frozen import record
from gpu_audit.core.resource import (
    Capacity,
    DataRef,
    Gpu,
    Kind,
    Reservation,
    Resource,
    SourceRef,
    State,
    Utilization,
    Workload,
)
from gpu_audit.core.results import CoverageGap
from gpu_audit.core.runs import Sweep

if TYPE_CHECKING:
    from gpu_audit.collectors.aws.settings import AwsSettings

log = logging.getLogger(__name__)

PROVIDER = "aws"
RUNS = "runs"  # the region's finished training jobs and sweeps in the period (`--since`)
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
_RESERVATIONS = "ec2-reservations"  # DescribeCapacityReservations: a part of its own


@record(frozen=False)
class Account:
    """An account that answered: its id, session, regions to scan and a lazily made S3 client."""

    target: Target
    account_id: str
    session: Any
    regions: list[str]
    _s3: Any = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def s3(self, sessions: Sessions) -> Any:  # Any: botocore's objects are untyped
        """The run's one S3 client (made on first use, thread-safe) for bucket locations."""
        with self._lock:
            if self._s3 is None:
                self._s3 = sessions.client(self.session, "s3", HOME_REGION)
            return self._s3


@record(frozen=False)
class Item:
    """One (account × region) in flight: its independent calls (EC2 and each SageMaker list) run
    as pool tasks of their own; `parts` holds each one's answer or error, in report order."""

    account: Account
    region: str
    mapper: SageMakerMapper
    parts: dict[str, list[Found] | BaseException]
    waiting: int
    sweeps: list[Sweep] = field(default_factory=list)  # finished runs in the period
    started: float = field(default_factory=time.perf_counter)
    _sagemaker: Any = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def sagemaker(self, sessions: Sessions) -> Any:  # Any: botocore's objects are untyped
        """The item's one SageMaker client, shared by its lists (a client per list costs CPU)."""
        with self._lock:
            if self._sagemaker is None:
                self._sagemaker = sessions.client(self.account.session, "sagemaker", self.region)
            return self._sagemaker


def aws_errors() -> tuple[type[Exception], ...]:
    """What botocore raises for a failed call (service errors, transport, credentials, config,
    and an answer that is not the API's XML or JSON: an endpoint that lacks the call, such as
    moto's for DescribeCapacityReservations, answers an HTML 500)."""
    from botocore.exceptions import BotoCoreError, ClientError  # keeps botocore off start-up
    from botocore.parsers import ResponseParserError  # keeps botocore off start-up

    return (ClientError, BotoCoreError, ResponseParserError)


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


class RunHooks(Protocol):
    """What a run asks of whoever owns it (the collector): the settings, progress, the secrets
    to keep out of messages, coverage gaps, the accounts and regions it opened, and whether a
    work item is this shard's."""

    @property
    def settings(self) -> AwsSettings: ...

    def tick(self, progress: Progress) -> None: ...

    def remember_secrets(self, session: Any) -> None: ...

    def gap(
        self, scope: str, exc: BaseException, account: str | None, region: str | None
    ) -> CoverageGap: ...

    def opened(self, account: str, regions: list[str]) -> None: ...

    def holds(self, key: str) -> bool: ...


class Run:
    """One scan: opens accounts, then scans (account × region) items as they become known."""

    def __init__(self, owner: RunHooks, sessions: Sessions, now: datetime) -> None:
        self.owner = owner
        self.aws = owner.settings
        self.sessions = sessions
        self.now = now
        self.types = InstanceTypes()
        self.buckets = BucketRegions()
        self.errors = aws_errors()
        self.since = period_start(self.aws.since, now)

    def execute(self, found: list[Target]) -> Iterator[Resource | CoverageGap | Sweep]:
        """Run the found targets on the pool: open each account, then scan its regions as they
        become known, yielding resources, sweeps and gaps as calls finish."""
        done = total = instances = 0
        opening = len(found)
        pool = ThreadPoolExecutor(max(1, self.aws.concurrency), thread_name_prefix="gpu-audit-aws")
        # Futures report here as they finish: `wait()` on every pending future per answer would
        # cost O(pending) each, and an org scan has hundreds of calls pending.
        finished: SimpleQueue[Future[Any]] = SimpleQueue()
        outstanding = 0

        def submit(call: Callable[..., Any], *args: Any) -> None:
            nonlocal outstanding
            pool.submit(call, *args).add_done_callback(finished.put)
            outstanding += 1

        try:
            for target in found:
                submit(self._open, target)
            self.owner.tick(Progress(0, 0, 0, f"opening {_accounts(opening)}"))
            while outstanding:
                result = finished.get().result()
                outstanding -= 1
                if isinstance(result, CoverageGap):
                    opening -= result.scope == "account"
                    yield result
                elif isinstance(result, Account):
                    opening -= 1
                    for region in result.regions:
                        if self._held(result.target, region):
                            self._start(submit, result, region)
                            total += 1
                elif isinstance(result, Item):
                    result.waiting -= 1
                    if result.waiting == 0:
                        submit(self._finish, result)
                    continue
                else:
                    done += 1
                    for item in result:
                        instances += isinstance(item, Resource)
                        yield item
                phase = f"opening {_accounts(opening)}" if opening else ""
                self.owner.tick(Progress(done, total, instances, phase))
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    def _held(self, target: Target, region: str) -> bool:
        """A configured region is its own work item; discovered ones belong to the account's."""
        return not self.aws.regions or self.owner.holds(item_key(target, region))

    def _open(self, target: Target) -> Account | CoverageGap:
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
            gap = self.owner.gap("account", exc, hint, None)
            return gap if hint else replace(gap, message=f"{target.label}: {gap.message}")
        self.owner.opened(account, regions)
        return Account(target, account, session, sorted(regions))

    def _caller_account(self, session: Any, region: str) -> str:
        sts = self.sessions.client(session, "sts", region)
        return str(sts.get_caller_identity()["Account"])

    def _enabled_regions(self, session: Any, region: str) -> list[str]:
        ec2 = self.sessions.client(session, "ec2", region)
        return [r["RegionName"] for r in ec2.describe_regions()["Regions"]]

    def _start(self, submit: Callable[..., None], account: Account, region: str) -> None:
        """Submit an item's independent calls; the last to answer hands the item to `_finish`."""
        ec2 = ["ec2", _RESERVATIONS] if "ec2" in self.aws.services else []
        names = ec2 + ([*LISTS, RUNS] if "sagemaker" in self.aws.services else [])
        mapper = SageMakerMapper(
            self.aws,
            account.account_id,
            region,
            lambda uris, notes: self._data(account, ",".join(uris), notes),
        )
        item = Item(account, region, mapper, {}, len(names))
        if not names:
            submit(self._finish, item)
        for name in names:
            submit(self._part, item, name)

    def _part(self, item: Item, name: str) -> Item:
        try:
            if name == "ec2":
                item.parts[name] = self._ec2(item.account, item.region)
            elif name == _RESERVATIONS:
                item.parts[name] = self._reservations(item.account, item.region)
            elif name == RUNS:
                client = item.sagemaker(self.sessions)
                account = item.account.account_id
                item.sweeps = list(finished_runs(client, account, item.region, self.since))
                item.parts[name] = []
            else:
                item.parts[name] = read_list(name, item.sagemaker(self.sessions), item.mapper)
        except self.errors as exc:  # throttled after retries, denied, endpoint down
            item.parts[name] = exc
        return item

    def _finish(self, item: Item) -> list[Resource | CoverageGap | Sweep]:
        """The item's gaps and resources, in the order a sequential scan gives them: EC2's gap,
        the first failing SageMaker list's (one gap, merged with EC2's when the same error),
        CloudWatch's, then the resources found, with their utilization."""
        account, region = item.account, item.region
        out: list[Resource | CoverageGap | Sweep] = []
        found: list[Found] = []
        failed: BaseException | None = None
        parts = ("ec2", _RESERVATIONS, *LISTS, RUNS)
        for name, part in ((n, item.parts[n]) for n in parts if n in item.parts):
            if not isinstance(part, BaseException):
                found += part
            elif name == "ec2":
                out.append(self.owner.gap("account/region", part, account.account_id, region))
            elif name == _RESERVATIONS:  # the instances stand; the reservations are the gap
                gap = self.owner.gap("account/region", part, account.account_id, region)
                self._merge(out, gap, "capacity reservations")
            elif failed is None:
                failed = part
        if failed is not None:  # EC2's finding stays; the same failure is one gap
            gap = self.owner.gap("account/region", failed, account.account_id, region)
            self._merge(out, gap, "sagemaker")
        usage: dict[str, Utilization] = {}
        series = [s for item_found in found for s in item_found.series]
        if series:
            try:
                cloudwatch = self.sessions.client(account.session, "cloudwatch", region)
                usage = fetch_utilization(cloudwatch, series, self.aws.window_hours, self.now)
            except self.errors as exc:
                out.append(self.owner.gap("account/region", exc, account.account_id, region))
        for each in found:
            measured = usage.get(each.resource.id)
            out.append(replace(each.resource, utilization=measured) if measured else each.resource)
        out.extend(item.sweeps)
        log.debug(
            "aws %s/%s: %d GPU resources in %.2fs",
            account.account_id,
            region,
            len(found),
            time.perf_counter() - item.started,
        )
        return out

    @staticmethod
    def _merge(out: list[Resource | CoverageGap | Sweep], gap: CoverageGap, part: str) -> None:
        """A part's failure: one gap with an earlier one of the same error, else its own."""
        same = [g for g in out if isinstance(g, CoverageGap) and g.error == gap.error]
        if same:
            merged = f"{same[0].message}; {part}: {gap.message}"
            out[out.index(same[0])] = replace(same[0], message=merged)
        else:
            out.append(replace(gap, message=f"{part}: {gap.message}"))

    def _ec2(self, account: Account, region: str) -> list[Found]:
        ec2 = self.sessions.client(account.session, "ec2", region)
        raw = self._instances(ec2)
        specs = self.types.resolve(ec2, {i["InstanceType"] for _, i in raw})
        found = []
        for owner_id, instance in raw:
            lookup = specs[instance["InstanceType"]]
            if lookup.gpu is None:
                continue
            resource = self._resource(account, region, owner_id, instance, lookup)
            found.append(Found(resource, tuple(instance_series([resource.id], self.aws))))
        return found

    def _reservations(self, account: Account, region: str) -> list[Found]:
        ec2 = self.sessions.client(account.session, "ec2", region)
        found = read_reservations(ec2, self.types, account.account_id, region)
        return [Found(resource) for resource in found]

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
        account: Account,
        region: str,
        owner_id: str,
        instance: dict[str, Any],
        lookup: GpuLookup,
    ) -> Resource:
        tags = {t["Key"]: t.get("Value", "") for t in instance.get("Tags", []) if "Key" in t}
        notes = [lookup.note] if lookup.note else []
        data = self._data(account, tags.get(self.aws.data_bucket_tag), notes)
        launched = instance.get("LaunchTime")
        state = (instance.get("State") or {}).get("Name")
        capacity = _CAPACITY.get(instance.get("InstanceLifecycle"), Capacity.UNKNOWN)
        # An instance on a reservation or Capacity Block runs on capacity already paid for.
        reserved = instance.get("CapacityReservationId")
        if reserved and capacity is Capacity.ON_DEMAND:
            capacity = Capacity.RESERVED
        return Resource(
            kind=Kind.INSTANCE,
            provider=PROVIDER,
            service="ec2",
            id=instance["InstanceId"],
            name=tags.get("Name"),
            account=owner_id or account.account_id,
            region=region,
            zone=(instance.get("Placement") or {}).get("AvailabilityZone"),
            instance_type=instance["InstanceType"],
            state=_STATES.get(state or ""),
            capacity=capacity,
            gpu=lookup.gpu or Gpu(),
            tags=tags,
            workload=workload_of(tags.get(self.aws.workload_tag)),
            launched_at=launched.astimezone(UTC) if isinstance(launched, datetime) else None,
            data=data,
            reservation=Reservation(id=reserved or None, platform=instance.get("PlatformDetails")),
            source=SourceRef(note="; ".join(notes) or None),
        )

    def _data(self, account: Account, tag: str | None, notes: list[str]) -> DataRef:
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


def _accounts(count: int) -> str:
    return f"{count} account" + ("" if count == 1 else "s")
