"""GCP collector: Compute Engine GPU VMs and Vertex AI GPU capacity per project.

Read-only: `instances.aggregatedList` (compute), `timeSeries.list` (monitoring),
`buckets.get` (storage) and Vertex AI's list calls (see `vertex.py`).
google-cloud-compute takes ~2 s to import, so every google import happens inside `collect`.

A resource's `id` is the instance's relative resource name, `projects/P/zones/Z/instances/NAME`:
stable, unique, and the same whichever endpoint served it (a selfLink embeds the API host).
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from gpu_audit.collectors.gcp.connect import (
    DEFAULT_MONITORING,
    PAGE_SIZE,
    Apis,
    Endpoint,
)
from gpu_audit.collectors.gcp.instances import (
    STATES,
    capacity_of,
    gpu_of,
    has_gpus,
    last_segment,
    launched_at,
    workload_of,
)
from gpu_audit.collectors.gcp.reservations import (
    affinity_of,
    future_resource,
    reservation_resource,
    reserved_by,
)
from gpu_audit.collectors.gcp.rest import (
    TRANSIENT_STATUSES,
    RestError,
    bucket_refs,
    fetch_utilization,
)
from gpu_audit.collectors.gcp.settings import GcpSettings
from gpu_audit.collectors.gcp.universe import discover_projects, item_key
from gpu_audit.collectors.gcp.vertex import VertexScan
from gpu_audit.collectors.interface import Collector, Progress, ProgressCallback
from gpu_audit.core.resource import (
    Capacity,
    DataRef,
    Kind,
    Reservation,
    Resource,
    SourceRef,
    Utilization,
)
from gpu_audit.core.results import CoverageGap, Scope
from gpu_audit.core.runs import Sweep


class GcpCollector(Collector[GcpSettings]):
    """Compute Engine instances with GPUs, one project per work item on a bounded thread pool."""

    name = "gcp"

    def __init__(self, settings: GcpSettings, progress: ProgressCallback | None = None) -> None:
        super().__init__(settings, progress)
        self._regions: set[str] = set()
        self._projects: tuple[str, ...] = ()
        self._universe: tuple[str, ...] = ()

    def work_items(self) -> tuple[str, ...]:
        return self._universe

    def scope(self) -> Scope:
        return Scope(
            command="scan",
            providers=(self.name,),
            accounts=self._projects,
            regions=tuple(sorted(self._regions)),
        )

    def collect(self) -> Iterator[Resource | CoverageGap | Sweep]:
        """Every GPU resource, sweep and coverage gap of the projects in scope (listed from the
        credential when none is set), project by project on a bounded pool."""
        self.tick(Progress(0, len(set(self.settings.projects)), 0, "reading credentials"))
        apis = Apis.connect(self.settings)
        listed = tuple(dict.fromkeys(self.settings.projects))
        if not listed:
            self.tick(Progress(0, 0, 0, "listing projects"))
            listed = discover_projects(self.settings, apis)
        self._universe = tuple(sorted(item_key(p) for p in listed))
        projects = tuple(p for p in listed if self.holds(item_key(p)))
        self._projects = projects
        if not projects:
            return
        self.tick(Progress(0, len(projects), 0, "listing instances"))
        now = datetime.now(UTC)
        found = 0
        workers = max(1, min(self.settings.concurrency, len(projects)))
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="gcp") as pool:
            scans = [_ProjectScan(self.settings, apis, project, now) for project in projects]
            futures = [pool.submit(scan.run) for scan in scans]
            for done, future in enumerate(as_completed(futures), start=1):
                for item in future.result():
                    if isinstance(item, Resource):
                        found += 1
                        if item.region:
                            self._regions.add(item.region)
                    yield item
                self.tick(Progress(done, len(projects), found))

    def tick(self, progress: Progress) -> None:
        """Report progress to the caller's callback, if any."""
        if self.progress is not None:
            self.progress(progress)


class _RetryBudget:
    """Retry predicate: transient failures only, at most `attempts - 1` retries per listing."""

    def __init__(self, attempts: int) -> None:
        import requests  # keeps requests off start-up
        from google.api_core import exceptions  # keeps google off start-up

        self.left = max(attempts - 1, 0)
        self.transient = (
            exceptions.TooManyRequests,
            exceptions.InternalServerError,
            exceptions.BadGateway,
            exceptions.ServiceUnavailable,
            exceptions.GatewayTimeout,
            requests.exceptions.ConnectionError,
            requests.exceptions.Timeout,
        )

    def __call__(self, exc: Exception) -> bool:
        if not isinstance(exc, self.transient) or self.left <= 0:
            return False
        self.left -= 1
        return True


class _ProjectScan:
    """One project: list instances, then utilization and bucket locations for the GPU ones."""

    def __init__(self, settings: GcpSettings, apis: Apis, project: str, now: datetime) -> None:
        self.gcp = settings
        self.apis = apis
        self.project = project
        self.now = now

    def run(self) -> list[Resource | CoverageGap | Sweep]:
        """One project's Compute Engine instances and reservations and its Vertex AI capacity, as
        the services setting asks; a failed token refresh is a coverage gap."""
        from google.auth.exceptions import GoogleAuthError  # keeps google off start-up

        found: list[Resource | CoverageGap | Sweep] = []
        try:
            if "gce" in self.gcp.services:
                found += self._read()
                for item in self._reservations():
                    _add(found, item)
            if "vertex" in self.gcp.services:
                found += VertexScan(
                    self.gcp, self.apis, self.project, self._session, self.now
                ).run()
        except GoogleAuthError as exc:  # token refresh failed: no network, revoked credentials
            found.append(self._gap(type(exc).__name__, _one_line(str(exc))))
        return found

    def _read(self) -> list[Resource | CoverageGap]:
        import requests  # keeps requests off start-up
        from google.api_core import exceptions  # keeps google off start-up

        try:
            instances, gaps = self._list_instances()
        except (exceptions.GoogleAPICallError, exceptions.RetryError) as exc:
            return [self._gap(_api_error_name(exc), _api_error_message(exc))]
        except requests.exceptions.RequestException as exc:
            return [self._gap(type(exc).__name__, _one_line(str(exc)))]
        gpu_instances = [i for i in instances if has_gpus(i)]
        if not gpu_instances:
            return list(gaps)
        with self._session(self.apis.monitoring) as monitoring:
            notes: list[str] = []
            utilization = self._utilization(monitoring, notes)
        with self._session(self.apis.gcs) as storage:
            resources = [
                self._resource(i, utilization, storage, list(notes)) for i in gpu_instances
            ]
        return [*resources, *gaps]

    def _gap(self, error: str, message: str, zone: str | None = None) -> CoverageGap:
        scope = f"project {self.project}" + (f" zone {zone}" if zone else "")
        region = zone.rsplit("-", 1)[0] if zone else None
        return CoverageGap(
            provider="gcp",
            scope=scope,
            error=error,
            message=message,
            account=self.project,
            region=region,
        )

    def _list_instances(self) -> tuple[list[Any], list[CoverageGap]]:
        compute_v1 = self.apis.compute_v1
        return self._aggregated(
            compute_v1.InstancesClient, compute_v1.AggregatedListInstancesRequest, "instances"
        )

    def _aggregated(
        self, client_class: Any, request_class: Any, items: str
    ) -> tuple[list[Any], list[CoverageGap]]:
        """Every page of one `aggregatedList` (instances, reservations): its items, and a gap
        per zone it says is unreachable."""
        from google.api_core.client_options import ClientOptions  # keeps google off start-up
        from google.api_core.retry import Retry  # keeps google off start-up

        gce = self.apis.gce
        # The library default retries 503s for up to 600 s; this bounds attempts and total time.
        retry = Retry(
            predicate=_RetryBudget(self.gcp.max_attempts),
            initial=0.2,
            maximum=2.0,
            multiplier=2.0,
            timeout=self.gcp.timeout * max(self.gcp.max_attempts, 1),
        )
        request = request_class(project=self.project, max_results=PAGE_SIZE)
        found: list[Any] = []
        unreachable: dict[str, str] = {}  # zone → message; repeated on every page
        # An api_endpoint with a scheme keeps it (`http://` for a local fake); the REST transport
        # applies its url_scheme ("https") only to a bare host.
        with client_class(
            transport="rest",
            client_options=ClientOptions(api_endpoint=gce.url) if gce.url else None,
            credentials=self.apis.credentials_for(gce),
        ) as client:
            pager = client.aggregated_list(request=request, retry=retry, timeout=self.gcp.timeout)
            # A zone recurs on several pages: accumulate; `dict(pager)` keeps only its last page.
            for scope, scoped in pager:
                found.extend(getattr(scoped, items))
                code = scoped.warning.code if "warning" in scoped else ""
                if code == "UNREACHABLE":
                    unreachable[scope.rsplit("/", 1)[-1]] = _one_line(scoped.warning.message)
        gaps = [self._gap("UNREACHABLE", text, zone=zone) for zone, text in unreachable.items()]
        return found, gaps

    def _reservations(self) -> list[Resource | CoverageGap]:
        """Reservations with GPUs, then future ones not yet begun; a failed list is a gap."""
        import requests  # keeps requests off start-up
        from google.api_core import exceptions  # keeps google off start-up

        compute_v1 = self.apis.compute_v1
        lists = (
            (
                compute_v1.ReservationsClient,
                compute_v1.AggregatedListReservationsRequest,
                "reservations",
            ),
            (
                compute_v1.FutureReservationsClient,
                compute_v1.AggregatedListFutureReservationsRequest,
                "future_reservations",
            ),
        )
        out: list[Resource | CoverageGap] = []
        for client_class, request_class, items in lists:
            try:
                found, gaps = self._aggregated(client_class, request_class, items)
            except (exceptions.GoogleAPICallError, exceptions.RetryError) as exc:
                message = f"{items.replace('_', ' ')}: {_api_error_message(exc)}"
                out.append(self._gap(_api_error_name(exc), message))
                continue
            except requests.exceptions.RequestException as exc:
                message = f"{items.replace('_', ' ')}: {_one_line(str(exc))}"
                out.append(self._gap(type(exc).__name__, message))
                continue
            for raw in found:
                if items == "reservations":
                    resource = reservation_resource(self.project, raw)
                else:
                    resource = future_resource(self.project, raw, self.now)
                if resource is not None:
                    out.append(resource)
            out.extend(gaps)
        return out

    def _session(self, api: Endpoint) -> Any:  # Any: google-cloud's objects, untyped here
        """An AuthorizedSession for Monitoring or Storage, retrying transient errors a few times."""
        from google.auth.transport.requests import AuthorizedSession  # keeps google off start-up
        from requests.adapters import HTTPAdapter  # keeps requests off start-up
        from urllib3.util.retry import Retry  # keeps urllib3 off start-up

        session = AuthorizedSession(self.apis.credentials_for(api))
        retries = Retry(
            total=max(self.gcp.max_attempts - 1, 0),
            backoff_factor=0.2,
            status_forcelist=TRANSIENT_STATUSES,
            allowed_methods=frozenset({"GET"}),
            raise_on_status=False,
        )
        adapter = HTTPAdapter(max_retries=retries)
        session.mount("http://", adapter)
        session.mount("https://", adapter)
        return session

    def _utilization(self, session: Any, notes: list[str]) -> dict[str, Utilization]:
        base = self.apis.monitoring.base(DEFAULT_MONITORING)
        try:
            return fetch_utilization(
                session,
                base,
                self.project,
                self.gcp.metric_type,
                self.gcp.window_hours,
                self.now,
                self.gcp.timeout,
            )
        except RestError as exc:
            notes.append(f"utilization unavailable: monitoring timeSeries.list: {exc}")
            return {}

    def _resource(
        self, instance: Any, utilization: dict[str, Utilization], session: Any, notes: list[str]
    ) -> Resource:
        zone = last_segment(instance.zone)
        region = zone.rsplit("-", 1)[0] if zone else None
        machine_type = last_segment(instance.machine_type) or None
        labels = {str(k): str(v) for k, v in instance.labels.items()}
        reserved = reserved_by(self.project, zone, instance)
        capacity = capacity_of(instance)
        if reserved and capacity is Capacity.ON_DEMAND:  # it names the reservation it runs on
            capacity = Capacity.RESERVED
        return Resource(
            kind=Kind.INSTANCE,
            provider="gcp",
            service="gce",
            id=f"projects/{self.project}/zones/{zone}/instances/{instance.name}",
            name=instance.name,
            account=self.project,
            region=region,
            zone=zone or None,
            instance_type=machine_type,
            state=STATES.get(instance.status),
            capacity=capacity,
            gpu=gpu_of(instance, machine_type),
            tags=labels,
            workload=workload_of(labels.get(self.gcp.workload_label)),
            launched_at=launched_at(instance),
            utilization=utilization.get(str(instance.id), Utilization()),
            data=self._data(labels.get(self.gcp.data_bucket_label), session, notes),
            reservation=Reservation(id=reserved, match=None if reserved else affinity_of(instance)),
            source=SourceRef(note="; ".join(notes)) if notes else SourceRef(),
        )

    def _data(self, label: str | None, session: Any, notes: list[str]) -> DataRef:
        refs = bucket_refs(label) if label else []
        if not refs:
            return DataRef()
        buckets = self.apis.buckets
        regions: list[str] = []
        failed = False
        for _, name in refs:
            try:
                regions.extend(buckets.regions(session, name))
            except RestError as exc:
                notes.append(f"bucket {name}: location unknown: {exc}")
                failed = True
        uris = tuple(uri for uri, _ in refs)
        # One unreadable bucket leaves regions missing: a partial list would misjudge co-location.
        return DataRef(uris=uris, regions=None if failed else tuple(dict.fromkeys(regions)))


def _add(found: list[Resource | CoverageGap | Sweep], item: Resource | CoverageGap) -> None:
    """A reservations gap the instances' list already has (the same error for the project: an
    endpoint down, a project gone) joins it, so one failure is one gap."""
    if isinstance(item, CoverageGap):
        for index, gap in enumerate(found):
            if isinstance(gap, CoverageGap) and (gap.scope, gap.error) == (item.scope, item.error):
                found[index] = replace(gap, message=f"{gap.message}; {item.message}")
                return
    found.append(item)


def _api_error_name(exc: Exception) -> str:
    code = getattr(exc, "code", None)
    name = type(exc).__name__
    if name == "RetryError" and getattr(exc, "cause", None) is not None:
        return f"RetryError ({type(exc.cause).__name__})"  # type: ignore[attr-defined]
    return f"{name} ({int(code)})" if isinstance(code, int) else name


def _api_error_message(exc: Exception) -> str:
    message = getattr(exc, "message", None) or str(exc)
    return _one_line(str(message))


def _one_line(text: str) -> str:
    return text.strip().splitlines()[0][:300] if text.strip() else "no detail"
