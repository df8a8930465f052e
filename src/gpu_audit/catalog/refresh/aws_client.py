"""boto3 clients for the price sources, counting every HTTP request (retries included)."""

from __future__ import annotations

import importlib
from typing import Any

from gpu_audit.errors import CollectorError

PRICING_REGION = "us-east-1"  # the Price List Query API's home; AWS_ENDPOINT_URL_PRICING overrides
MAX_ATTEMPTS = 5  # throttled answers (ThrottlingException, RequestLimitExceeded) are retried


class Counter:
    """HTTP requests sent, by service."""

    def __init__(self) -> None:
        self.sent: dict[str, int] = {}

    def watch(self, client: Any, service: str) -> Any:
        def count(**_: Any) -> None:
            self.sent[service] = self.sent.get(service, 0) + 1

        client.meta.events.register("before-send", count)
        return client


def client(service: str, region: str, counter: Counter) -> Any:
    """A boto3 client with standard retries; AWS_ENDPOINT_URL[_SERVICE] are honoured by boto3."""
    try:
        boto3 = importlib.import_module("boto3")
        config = importlib.import_module("botocore.config")
    except ImportError as exc:
        raise CollectorError("aws: install the aws extra: pip install 'gpu-audit[aws]'") from exc
    retries = {"mode": "standard", "max_attempts": MAX_ATTEMPTS}
    made = boto3.session.Session().client(
        service, region_name=region, config=config.Config(retries=retries)
    )
    return counter.watch(made, service)


def failure(exc: Exception, where: str) -> CollectorError:
    """One located line for a failed AWS call (never the credentials or the signed request)."""
    response = getattr(exc, "response", None)
    if isinstance(response, dict):
        error = response.get("Error", {})
        return CollectorError(f"{where}: {error.get('Code', 'error')}: {error.get('Message', '')}")
    return CollectorError(f"{where}: {type(exc).__name__}: {exc}")
