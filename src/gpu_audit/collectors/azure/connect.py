"""Where ARM and Resource Graph are reached, with which credential, and how calls are retried.

`GPU_AUDIT_AZURE_ENDPOINT` points every client at another ARM endpoint (a sovereign cloud, or a
test server). On loopback only, requests go without authentication: the SDK refuses a bearer
token over plain http, and a local server has no Entra ID behind it. Elsewhere the credential is
azure-identity's `DefaultAzureCredential` (environment, workload identity, managed identity,
Azure CLI).
"""

from __future__ import annotations

import os
from typing import Any, NoReturn

from gpu_audit.collectors.azure.settings import AzureSettings
from gpu_audit.collectors.interface import ProviderUnavailable
from gpu_audit.core.endpoint import is_loopback
from gpu_audit.core.frozen import record

ENDPOINT_ENV = "GPU_AUDIT_AZURE_ENDPOINT"
DEFAULT_ENDPOINT = "https://management.azure.com"


class _NoToken:
    """The credential of a loopback endpoint: never asked, since no auth policy runs."""

    def get_token(self, *scopes: str, **kwargs: Any) -> NoReturn:
        """Never a token: raises ProviderUnavailable (a loopback endpoint runs no auth policy)."""
        raise ProviderUnavailable("NoCredentials", "azure: no token on a loopback endpoint")


def _bounded_retry(settings: AzureSettings) -> Any:  # Any: the Azure SDK's objects, untyped here
    """azure-core's retry policy (429 and 5xx, honouring Retry-After), bounded by --timeout.

    The stock policy sleeps whatever Retry-After says; a wait longer than one call's timeout is
    not taken: the 429 is reported (the subscription becomes a coverage gap) instead.
    """
    from azure.core.pipeline.policies import RetryPolicy  # keeps azure off start-up

    budget = settings.timeout

    class BoundedRetry(RetryPolicy):
        def is_retry(self, retry_settings: Any, response: Any) -> bool:
            wait = self.get_retry_after(response)
            if wait is not None and wait > budget:
                return False
            return bool(super().is_retry(retry_settings, response))

    return BoundedRetry(
        retry_total=settings.max_attempts - 1,
        retry_backoff_factor=0.2,
        retry_backoff_max=min(2.0, budget),
        timeout=budget * settings.max_attempts,  # the whole call, retries and waits included
    )


@record
class Arm:
    """Client factories sharing one endpoint, credential and retry policy."""

    url: str
    anonymous: bool
    credential: Any
    settings: AzureSettings

    @classmethod
    def connect(cls, settings: AzureSettings) -> Arm:
        """ARM at GPU_AUDIT_AZURE_ENDPOINT (else management.azure.com): a loopback one without a
        credential, any other with the default credential chain."""
        url = os.environ.get(ENDPOINT_ENV, "").strip().rstrip("/") or DEFAULT_ENDPOINT
        if is_loopback(url):
            return cls(url, True, _NoToken(), settings)
        return cls(url, False, _default_credential(), settings)

    def _options(self) -> dict[str, Any]:
        options: dict[str, Any] = {
            "base_url": self.url,
            "retry_policy": _bounded_retry(self.settings),
            "connection_timeout": self.settings.timeout,
            "read_timeout": self.settings.timeout,
        }
        if self.anonymous:
            from azure.core.pipeline.policies import SansIOHTTPPolicy  # keeps azure off start-up

            options["authentication_policy"] = SansIOHTTPPolicy()
        else:
            options["credential_scopes"] = [f"{self.url}/.default"]
        return options

    def graph(self) -> Any:  # Any: the Azure SDK's objects, untyped here
        """A Resource Graph client on this endpoint."""
        from azure.mgmt.resourcegraph import ResourceGraphClient  # keeps azure off start-up

        return ResourceGraphClient(self.credential, **self._options())

    def compute(self, subscription: str) -> Any:  # Any: the Azure SDK's objects, untyped here
        """A Compute client for `subscription` on this endpoint."""
        from azure.mgmt.compute import ComputeManagementClient  # keeps azure off start-up

        return ComputeManagementClient(self.credential, subscription, **self._options())

    def machine_learning(self, subscription: str) -> Any:  # Any: the Azure SDK's client, untyped
        """An Azure ML (Machine Learning Services) client for `subscription` on this endpoint."""
        # keeps azure off start-up
        from azure.mgmt.machinelearningservices import MachineLearningServicesMgmtClient

        return MachineLearningServicesMgmtClient(self.credential, subscription, **self._options())

    def subscriptions(self) -> Any:  # Any: the Azure SDK's objects, untyped here
        """A Subscriptions client on this endpoint (lists what the credential can read)."""
        from azure.mgmt.resource.subscriptions import SubscriptionClient  # keeps azure off start-up

        return SubscriptionClient(self.credential, **self._options())


def _default_credential() -> Any:  # Any: the Azure SDK's objects, untyped here
    try:
        from azure.identity import DefaultAzureCredential  # the [azure] extra, maybe absent
    except ImportError as exc:
        raise ProviderUnavailable(
            "NoCredentials", "azure: install the extra: pip install 'gpu-audit[azure]'"
        ) from exc
    # azure-identity logs each credential of the chain it tried as a warning: with no logging
    # configured, Python's last-resort handler printed them all to stderr before our one line.
    # A handler of its own keeps them off stderr; a program that configures logging still sees them.
    import logging

    quiet = logging.getLogger("azure.identity")
    if not quiet.handlers:
        quiet.addHandler(logging.NullHandler())
    # Interactive browser login stays off: a scan runs unattended.
    return DefaultAzureCredential(exclude_interactive_browser_credential=True)
