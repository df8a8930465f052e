"""AWS accounts to scan and the botocore sessions that reach them, all sharing one loader.

Accounts come from `--profile`, from `--role-arn` (fixed ARNs, or templates with `{account}` filled
from `--account` or from Organizations `ListAccounts`), from `--org-role`, or else from the default
credential chain. Every botocore session shares one data loader per process (the region check's
too), so service models and endpoint data are parsed once per run rather than once per account.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Literal
from urllib.request import getproxies

from gpu_audit import __version__
from gpu_audit.collectors.aws.clients import ClientMemo, freeze_config
from gpu_audit.collectors.aws.settings import AwsSettings
from gpu_audit.core.frozen import record

if TYPE_CHECKING:
    import botocore.session

# Global services (STS, Organizations, S3 GetBucketLocation) are asked in this region.
HOME_REGION = "us-east-1"
# botocore's adaptive mode: retries with backoff, and a client-side rate limiter that slows every
# call after a throttle (an organisation's scan shares each account's API rate). The tests that do
# not test the limiter set "standard" (the same retries, no limiter's sleeps).
RETRY_MODE: Literal["legacy", "standard", "adaptive"] = "adaptive"
_ARN_ACCOUNT = re.compile(r"^arn:[\w-]+:iam::(\d{12}):")
EventHook = tuple[str, Callable[..., Any]]
_UNUSED = {"AccessKeyId": "unused", "SecretAccessKey": "unused", "SessionToken": "unused"}
_LOADERS: dict[Any, Any] = {}  # botocore's data path → its loader (parsed models, endpoints)
_LOADERS_LOCK = threading.Lock()


def shared_loader(session: botocore.session.Session) -> Any:  # Any: botocore's objects are untyped
    """The process's botocore data loader for `session`'s data path, made once."""
    path = session.get_config_variable("data_path")
    with _LOADERS_LOCK:
        if path not in _LOADERS:
            _LOADERS[path] = session.get_component("data_loader")
        return _LOADERS[path]


@record
class Target:
    """One account as the user named it: a profile, a role ARN, or the default credentials."""

    label: str
    profile: str | None = None
    role_arn: str | None = None

    @property
    def account_hint(self) -> str | None:
        """The account id in the role ARN, None without a role."""
        found = _ARN_ACCOUNT.match(self.role_arn or "")
        return found.group(1) if found else None


class Assumed:
    """An account reached by AssumeRole: the base session's configuration, its own credentials.

    Not a botocore session of its own (5 ms each, and a client class cache of its own): its
    clients are made by the base session with these credentials passed explicitly."""

    def __init__(self, base: botocore.session.Session, credentials: dict[str, str]) -> None:
        from botocore.credentials import Credentials  # keeps botocore off start-up

        self.base = base
        self.credentials = Credentials(
            credentials["AccessKeyId"], credentials["SecretAccessKey"], credentials["SessionToken"]
        )

    def get_credentials(self) -> Any:  # Any: botocore's objects are untyped
        """The assumed role's credentials (botocore's session interface)."""
        return self.credentials

    def get_config_variable(self, name: str) -> Any:  # Any: botocore's objects are untyped
        """The base session's configuration value `name` (botocore's session interface)."""
        return self.base.get_config_variable(name)


class Sessions:
    """Creates botocore sessions and clients for every account; safe to call from worker threads.

    The base session's clients are made once and shared by the threads (botocore clients are
    thread-safe); see clients.py for what making a client costs."""

    def __init__(
        self, settings: AwsSettings, event_hooks: Sequence[EventHook] = (), memoize: bool = True
    ) -> None:
        import botocore.session  # keeps botocore off start-up
        from botocore.config import Config  # keeps botocore off start-up

        self._hooks = tuple(event_hooks)
        self._lock = threading.Lock()
        self._clients: dict[tuple[str, str], Any] = {}  # the base session's
        self._memo = ClientMemo() if memoize else None
        self.base = self._observed(botocore.session.Session())
        self.base.register_component("data_loader", shared_loader(self.base))
        if memoize:
            freeze_config(self.base)
        self.config = Config(
            # No proxy in the environment: botocore's own answer for every endpoint, found
            # once here rather than by reading the environment twice per client.
            proxies={} if memoize and not getproxies() else None,
            retries={"mode": RETRY_MODE, "total_max_attempts": settings.max_attempts},
            connect_timeout=settings.connect_timeout,
            read_timeout=settings.read_timeout,
            max_pool_connections=max(10, settings.concurrency),
            user_agent_extra=f"gpu-audit/{__version__}",
        )

    def warm(self, service: str) -> None:
        """Make `service`'s model and client class now, by a client made and dropped (with
        credentials of its own: the base session may have none to resolve)."""
        if self._memo is not None:
            with self._lock, self._memo.creating():
                self._create(Assumed(self.base, _UNUSED), service, HOME_REGION)

    def _observed(self, session: botocore.session.Session) -> botocore.session.Session:
        for event, handler in self._hooks:
            session.register(event, handler)
        if self._memo is not None:
            self._memo.attach(session)
        return session

    # Any: botocore's objects are untyped
    def derive(self, profile: str | None = None, credentials: dict[str, str] | None = None) -> Any:
        """A session for a profile (reusing the base loader), or for temporary credentials."""
        import botocore.session  # keeps botocore off start-up

        if credentials is not None:
            return Assumed(self.base, credentials)
        with self._lock:
            session = self._observed(botocore.session.Session(profile=profile))
            session.register_component("data_loader", self.base.get_component("data_loader"))
            return session

    # Any: botocore's objects are untyped
    def client(self, session: Any, service: str, region: str) -> Any:
        """A client of `session` for `service` in `region`. The base session's (STS for every
        AssumeRole, Organizations) are made once and shared; an account's are the caller's to
        keep for as long as it needs them, so a shard's memory follows the items in flight."""
        key = (service, region)
        if session is self.base and key in self._clients:  # made: no need to wait for the lock
            return self._clients[key]
        # botocore sessions are not thread-safe; clients are.
        with self._lock:
            client = self._clients.get(key) if session is self.base else None
            if client is None:
                if self._memo is None:
                    client = self._create(session, service, region)
                else:
                    with self._memo.creating():
                        client = self._create(session, service, region)
                if session is self.base:
                    self._clients[key] = client
            return client

    # Any: botocore's objects are untyped
    def _create(self, session: Any, service: str, region: str) -> Any:
        if isinstance(session, Assumed):
            frozen = session.credentials
            return self.base.create_client(
                service,
                region_name=region,
                config=self.config,
                aws_access_key_id=frozen.access_key,
                aws_secret_access_key=frozen.secret_key,
                aws_session_token=frozen.token,
            )
        return session.create_client(service, region_name=region, config=self.config)

    def has_credentials(self) -> bool:
        """True when the default chain finds base credentials (no call is made)."""
        return self.base.get_credentials() is not None


def targets(settings: AwsSettings, org_accounts: Callable[[], list[str]]) -> Iterator[Target]:
    """Every account target the settings name; `org_accounts` is called only when needed."""
    for profile in settings.profiles:
        yield Target(label=f"profile:{profile}", profile=profile)
    templates = [arn for arn in settings.role_arns if "{account}" in arn]
    if settings.organization_role:
        templates.append(f"arn:aws:iam::{{account}}:role/{settings.organization_role}")
    for arn in settings.role_arns:
        if "{account}" not in arn:
            yield Target(label=arn, role_arn=arn)
    if templates:
        ids = list(settings.accounts) or org_accounts()
        for template in templates:
            for account in ids:
                arn = template.replace("{account}", account)
                yield Target(label=arn, role_arn=arn)
    if not settings.profiles and not settings.role_arns and not settings.organization_role:
        yield Target(label="default credentials")


def organization_accounts(sessions: Sessions) -> list[str]:
    """Active account ids of the caller's AWS Organization (`organizations:ListAccounts`)."""
    client = sessions.client(sessions.base, "organizations", HOME_REGION)
    ids: list[str] = []
    for page in client.get_paginator("list_accounts").paginate():
        for account in page.get("Accounts", []):
            if account.get("Status", "ACTIVE") == "ACTIVE":
                ids.append(account["Id"])
    return ids
