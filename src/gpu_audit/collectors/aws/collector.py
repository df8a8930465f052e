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

import importlib.util
import logging
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from gpu_audit.collectors.aws.prepare import Preparation
from gpu_audit.collectors.aws.scan import Run, aws_errors, error_code
from gpu_audit.collectors.aws.sessions import (
    EventHook,
    Sessions,
    organization_accounts,
    targets,
)
from gpu_audit.collectors.aws.settings import AwsSettings
from gpu_audit.collectors.aws.universe import target_items
from gpu_audit.collectors.interface import (
    Collector,
    Progress,
    ProgressCallback,
    ProviderUnavailable,
)
from gpu_audit.core.redact import redact_urls
from gpu_audit.core.resource import Resource
from gpu_audit.core.results import CoverageGap, Scope
from gpu_audit.core.runs import Sweep
from gpu_audit.errors import CollectorError

log = logging.getLogger(__name__)

PROVIDER = "aws"
_KEY_ID = re.compile(r"\b(?:AKIA|ASIA|AROA|AIDA)[A-Z0-9]{12,}\b")


class AwsCollector(Collector[AwsSettings]):
    """Scans EC2 for GPU instances; see the module docstring for the mapping rules."""

    name = PROVIDER

    def __init__(
        self,
        settings: AwsSettings,
        progress: ProgressCallback | None = None,
        *,
        event_hooks: tuple[EventHook, ...] = (),
        memoize_clients: bool = True,
    ) -> None:
        super().__init__(settings, progress)
        # botocore event handlers registered on every session the scan creates (audit, tests).
        self.event_hooks = event_hooks
        self.memoize_clients = memoize_clients  # False: botocore's plain path (clients.py)
        self._accounts: set[str] = set()
        self._regions: set[str] = set()
        self._secrets: set[str] = set()
        self._universe: tuple[str, ...] = ()

    def scope(self) -> Scope:
        return Scope(
            command="scan",
            providers=(PROVIDER,),
            accounts=tuple(sorted(self._accounts)),
            regions=tuple(sorted(self._regions)),
        )

    def collect(self) -> Iterator[Resource | CoverageGap | Sweep]:
        """Every GPU resource, sweep and coverage gap of the accounts and regions in scope;
        CollectorError without boto3, ProviderUnavailable without credentials."""
        # The extra that brings botocore; looked up, not imported (15 ms the scan does not use).
        if importlib.util.find_spec("boto3") is None:
            raise CollectorError(
                "aws: boto3 is not installed; install the aws extra: pip install 'gpu-audit[aws]'"
            )
        aws = self.settings
        self.tick(Progress(0, 0, 0, "reading credentials"))
        preparation = Preparation()
        hooks = (*self.event_hooks, preparation.hook)
        sessions = Sessions(aws, hooks, memoize=self.memoize_clients)
        # Role ARNs, Organizations and the default chain all start from the base credentials.
        needs_base = bool(aws.role_arns or aws.organization_role or not aws.profiles)
        if needs_base and not sessions.has_credentials():
            raise ProviderUnavailable(
                "NoCredentials",
                "aws: no credentials found; set AWS_PROFILE or AWS_ACCESS_KEY_ID, "
                "or pass --profile / --role-arn",
            )
        self.remember_secrets(sessions.base)
        # Models parsed while the first calls (ListAccounts, AssumeRole) are answered.
        roles = bool(aws.role_arns or aws.organization_role)
        preparation.start(sessions, (*aws.services, "cloudwatch"), sts=roles)
        try:
            yield from self._run(sessions)
        finally:
            preparation.finish()

    def _run(self, sessions: Sessions) -> Iterator[Resource | CoverageGap | Sweep]:
        aws = self.settings
        org_gaps: list[CoverageGap] = []
        if aws.organization_role:
            self.tick(Progress(0, 0, 0, "listing Organizations accounts"))
        found = list(targets(aws, lambda: self._organization(sessions, org_gaps)))
        yield from org_gaps
        items = {t: target_items(t, aws.regions) for t in found}
        self._universe = tuple(sorted({key for keys in items.values() for key in keys}))
        mine = [t for t in found if any(self.holds(key) for key in items[t])]
        run = Run(self, sessions, datetime.now(UTC))
        yield from run.execute(mine)

    def work_items(self) -> tuple[str, ...]:
        return self._universe

    def tick(self, progress: Progress) -> None:
        """Report progress to the caller's callback, if any."""
        if self.progress is not None:
            self.progress(progress)

    def _organization(self, sessions: Sessions, gaps: list[CoverageGap]) -> list[str]:
        try:
            return organization_accounts(sessions)
        except aws_errors() as exc:  # a hole in the scan, not a crash
            gaps.append(self.gap("organization", exc, None, None))
            return []

    def opened(self, account: str, regions: list[str]) -> None:
        """A run opened `account` and will scan `regions` there: the scan's scope."""
        self._accounts.add(account)
        self._regions.update(regions)

    def remember_secrets(self, session: Any) -> None:
        """Remember the session's access key, secret and token so that redact() keeps them out of
        every message."""
        credentials = session.get_credentials()
        if credentials is None:
            return
        frozen = credentials.get_frozen_credentials()
        self._secrets.update(s for s in (frozen.access_key, frozen.secret_key, frozen.token) if s)

    def redact(self, text: str) -> str:
        """`text` without known credentials, access key ids, URL userinfo or query strings."""
        for secret in sorted(self._secrets, key=len, reverse=True):
            text = text.replace(secret, "[redacted]")
        return redact_urls(_KEY_ID.sub("[redacted]", text))

    def gap(
        self, scope: str, exc: BaseException, account: str | None, region: str | None
    ) -> CoverageGap:
        """A coverage gap for a failed call in `scope` (its error code, the message's first line
        redacted)."""
        text = str(exc) or type(exc).__name__
        if type(exc).__name__ == "ResponseParserError":  # its first line; then the raw body
            text = text.split("\n", 1)[0].rstrip(": ")
        return CoverageGap(
            provider=PROVIDER,
            scope=scope,
            error=error_code(exc),
            message=self.redact(text),
            account=account,
            region=region,
        )
