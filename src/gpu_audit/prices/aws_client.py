"""boto3 clients for the price sources, counting every HTTP request (retries included)."""

from __future__ import annotations

import importlib
from typing import Any

from gpu_audit.errors import CollectorError

MAX_ATTEMPTS = 5  # throttled answers (ThrottlingException, RequestLimitExceeded) are retried


class Counter:
    """HTTP requests sent, by service; one boto3 session and one client per (service, region)
    for the whole refresh (a session loads each service model once: ~1 s a client otherwise)."""

    def __init__(self) -> None:
        self.sent: dict[str, int] = {}
        self.session: Any = None
        self.clients: dict[tuple[str, str], Any] = {}

    def watch(self, client: Any, service: str) -> Any:  # Any: botocore's objects are untyped
        """The client, every HTTP request it sends (retries included) counted under `service`."""

        def count(**_: Any) -> None:
            self.sent[service] = self.sent.get(service, 0) + 1

        client.meta.events.register("before-send", count)
        return client


# Any: botocore's objects are untyped
def client(service: str, region: str, counter: Counter) -> Any:
    """A boto3 client with standard retries; AWS_ENDPOINT_URL[_SERVICE] are honoured by boto3."""
    try:
        boto3 = importlib.import_module("boto3")
        config = importlib.import_module("botocore.config")
    except ImportError as exc:
        raise CollectorError("aws: install the aws extra: pip install 'gpu-audit[aws]'") from exc
    if (service, region) in counter.clients:
        return counter.clients[(service, region)]
    if counter.session is None:
        counter.session = boto3.session.Session()
    retries = {"mode": "standard", "max_attempts": MAX_ATTEMPTS}
    made = counter.session.client(
        service, region_name=region, config=config.Config(retries=retries)
    )
    counter.clients[(service, region)] = counter.watch(made, service)
    return made


def failure(exc: Exception, where: str) -> CollectorError:
    """One located line for a failed AWS call (never the credentials or the signed request)."""
    if type(exc).__name__ == "NoCredentialsError":  # no call was made: no API or region to name
        return CollectorError(
            "aws: no credentials found; set AWS_PROFILE or AWS_ACCESS_KEY_ID (the refresh calls "
            "pricing:GetProducts and ec2:DescribeSpotPriceHistory)"
        )
    response = getattr(exc, "response", None)
    if isinstance(response, dict):
        error = response.get("Error", {})
        return CollectorError(f"{where}: {error.get('Code', 'error')}: {error.get('Message', '')}")
    return CollectorError(f"{where}: {type(exc).__name__}: {exc}")
