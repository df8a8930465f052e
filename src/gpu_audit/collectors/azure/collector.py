"""Azure collector: GPU VMs, scale sets and Azure ML compute across subscriptions, read-only.

Inventory comes from Resource Graph by default (`graph.py`), or from ARM per subscription with
`source: arm` (`arm.py`); both give rows in ARM's REST shape, read by one mapping
(`mapping.py`). Azure ML computes are listed per workspace through ARM either way. The Azure
SDKs are imported inside the calls, never by the CLI.

Utilization stays missing: Azure's platform metrics have no GPU metric for VMs (the provider's
hint says what to install).
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from gpu_audit.collectors.azure import arm as arm_source
from gpu_audit.collectors.azure.connect import Arm
from gpu_audit.collectors.azure.errors import credential_failure, error_name, gap, one_line
from gpu_audit.collectors.azure.graph import graph_rows
from gpu_audit.collectors.azure.mapping import (
    SCALE_SET,
    VM,
    WORKSPACE,
    arm_id,
    compute_resource,
    read_row,
    scale_set_resources,
    subscription_of,
    vm_resource,
)
from gpu_audit.collectors.azure.reservations import subscription_reservations
from gpu_audit.collectors.azure.settings import AzureSettings
from gpu_audit.collectors.interface import (
    Collector,
    Progress,
    ProgressCallback,
    ProviderUnavailable,
)
from gpu_audit.core.resource import Resource
from gpu_audit.core.results import CoverageGap, Scope

Rows = list[dict[str, Any]]


class AzureCollector(Collector[AzureSettings]):
    """Subscriptions named (or all readable ones), one inventory pass, then workspaces' computes."""

    name = "azure"

    def __init__(self, settings: AzureSettings, progress: ProgressCallback | None = None) -> None:
        super().__init__(settings, progress)
        self._subscriptions: tuple[str, ...] = tuple(settings.subscriptions)
        self._regions: set[str] = set()

    def scope(self) -> Scope:
        return Scope(
            command="scan",
            providers=(self.name,),
            accounts=self._subscriptions,
            regions=tuple(sorted(self._regions)),
        )

    def collect(self) -> Iterator[Resource | CoverageGap]:
        from azure.core.exceptions import AzureError  # keeps azure off start-up

        arm = Arm.connect(self.settings)
        try:
            yield from self._collect(arm)
        except AzureError as exc:
            if not credential_failure(exc):
                raise
            # The SDK's message lists every credential of its chain over a dozen lines; a table
            # clips a gap's message at 120 characters: ours says it whole, as AWS's does.
            raise ProviderUnavailable(
                "NoCredentials",
                "azure: no credential found; run `az login`, or set AZURE_CLIENT_ID, "
                "AZURE_TENANT_ID and AZURE_CLIENT_SECRET",
            ) from exc

    def _collect(self, arm: Arm) -> Iterator[Resource | CoverageGap]:
        named = tuple(dict.fromkeys(s.strip() for s in self.settings.subscriptions if s.strip()))
        self._tick(Progress(0, 0, 0, "listing subscriptions"))
        subscriptions = named or self._readable(arm)
        self._subscriptions = subscriptions
        self._tick(Progress(0, len(subscriptions), 0, "listing resources"))
        if self.settings.source == "arm":
            rows, gaps = self._arm_rows(arm, subscriptions)
        else:
            rows, gaps = graph_rows(arm, subscriptions)
        yield from gaps
        found = 0
        workspaces = []
        for row in rows:
            kind = str(row.get("type") or "").lower() if isinstance(row, dict) else ""
            if kind == WORKSPACE:
                workspaces.append(row)
                continue
            for resource in self._resources(kind, row):
                found += isinstance(resource, Resource)
                yield resource
        self._tick(Progress(len(subscriptions), len(subscriptions), found, "reading computes"))
        yield from self._computes(arm, workspaces)
        unread = {g.account for g in gaps}  # a subscription the inventory could not read: one gap
        yield from self._reservations(arm, [s for s in subscriptions if s not in unread])

    def _readable(self, arm: Arm) -> tuple[str, ...]:
        from azure.core.exceptions import AzureError  # keeps azure off start-up

        try:
            return tuple(arm_source.subscriptions(arm))
        except AzureError as exc:
            if credential_failure(exc):
                raise
            raise ProviderUnavailable(
                error_name(exc), f"azure: cannot list subscriptions: {one_line(exc)}"
            ) from exc

    def _resources(self, kind: str, row: Any) -> list[Resource] | list[CoverageGap]:
        read = {VM: vm_resource, SCALE_SET: scale_set_resources}.get(kind)
        if read is None and isinstance(row, dict):
            return []  # another type: the query asked for these three
        found = read_row(read or vm_resource, row, self.settings.workload_tag)
        if isinstance(found, CoverageGap):
            return [found]
        return [r for r in found if self._wanted(r)]

    def _wanted(self, resource: Resource) -> bool:
        regions = {r.lower() for r in self.settings.regions}
        if regions and (resource.region or "") not in regions:
            return False
        if resource.region:
            self._regions.add(resource.region)
        return True

    def _arm_rows(self, arm: Arm, subscriptions: tuple[str, ...]) -> tuple[Rows, list[CoverageGap]]:
        from azure.core.exceptions import AzureError  # keeps azure off start-up

        def read(subscription: str) -> Rows | CoverageGap:
            try:
                return arm_source.subscription_rows(arm, subscription)
            except AzureError as exc:
                if credential_failure(exc):
                    raise
                return gap(subscription, exc)

        rows: Rows = []
        gaps: list[CoverageGap] = []
        with ThreadPoolExecutor(
            max(1, min(self.settings.concurrency, len(subscriptions) or 1))
        ) as pool:
            for done, answer in enumerate(pool.map(read, subscriptions), start=1):
                if isinstance(answer, CoverageGap):
                    gaps.append(answer)
                else:
                    rows.extend(answer)
                self._tick(Progress(done, len(subscriptions), 0))
        return rows, gaps

    def _computes(self, arm: Arm, workspaces: Rows) -> Iterator[Resource | CoverageGap]:
        from azure.core.exceptions import AzureError  # keeps azure off start-up

        def read(workspace: dict[str, Any]) -> list[Resource | CoverageGap] | CoverageGap:
            wid = arm_id(workspace)
            subscription = subscription_of(wid)
            try:
                rows = arm_source.compute_rows(arm, wid, subscription)
            except AzureError as exc:
                if credential_failure(exc):
                    raise
                return gap(subscription, exc, f"workspace {wid.rsplit('/', 1)[-1]}")
            found: list[Resource | CoverageGap] = []
            for row in rows:
                read = read_row(compute_resource, row, self.settings.workload_tag)
                found.extend([read] if isinstance(read, CoverageGap) else read)
            return [r for r in found if isinstance(r, CoverageGap) or self._wanted(r)]

        if not workspaces:
            return
        with ThreadPoolExecutor(max(1, min(self.settings.concurrency, len(workspaces)))) as pool:
            for answer in pool.map(read, workspaces):
                if isinstance(answer, CoverageGap):
                    yield answer
                else:
                    yield from answer

    def _reservations(self, arm: Arm, subscriptions: list[str]) -> Iterator[Resource | CoverageGap]:
        """Each subscription's GPU capacity reservations; one that cannot be read is a gap."""
        from azure.core.exceptions import AzureError  # keeps azure off start-up

        def read(subscription: str) -> list[Resource] | CoverageGap:
            try:
                return subscription_reservations(arm, subscription)
            except AzureError as exc:
                if credential_failure(exc):
                    raise
                return gap(subscription, exc, "capacity reservations")

        if not subscriptions:
            return
        with ThreadPoolExecutor(max(1, min(self.settings.concurrency, len(subscriptions)))) as pool:
            for answer in pool.map(read, subscriptions):
                if isinstance(answer, CoverageGap):
                    yield answer
                else:
                    yield from (r for r in answer if self._wanted(r))

    def _tick(self, progress: Progress) -> None:
        if self.progress is not None:
            self.progress(progress)
