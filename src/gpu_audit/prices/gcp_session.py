"""The Billing Catalog over google-auth's AuthorizedSession: ADC or an API key; anonymous only
on a loopback endpoint; throttled answers retried; every request counted."""

from __future__ import annotations

import importlib
import os
import time
from typing import Any

from gpu_audit.core.endpoint import endpoint
from gpu_audit.errors import CollectorError

ATTEMPTS = 5
TIMEOUT = 60.0
SCOPES = ["https://www.googleapis.com/auth/cloud-billing.readonly"]


class BillingSession:
    def __init__(self, endpoint_env: str, key_env: str, default: str) -> None:
        where = endpoint(endpoint_env)
        self.base = where.base(default)
        self.key = os.environ.get(key_env, "").strip()
        self.sent = 0
        try:
            transport = importlib.import_module("google.auth.transport.requests")
            credentials = importlib.import_module("google.auth.credentials")
        except ImportError as exc:
            raise CollectorError(
                "gcp: install the gcp extra: pip install 'gpu-audit[gcp]'"
            ) from exc
        anonymous = where.anonymous or self.key  # an API key authenticates the request itself
        made = credentials.AnonymousCredentials() if anonymous else _default()
        self.session = transport.AuthorizedSession(made)

    def get(self, path: str) -> Any:  # Any: google-auth's objects, untyped here
        """The JSON answer at `path` (the API key in a header, never the URL); 429 and 503 retried
        with back-off; CollectorError on any other failure."""
        url = f"{self.base}{path}"
        headers = {"X-Goog-Api-Key": self.key} if self.key else {}  # never in a URL or a log
        for attempt in range(ATTEMPTS):
            self.sent += 1
            try:
                answer = self.session.get(url, headers=headers, timeout=TIMEOUT)
            except Exception as exc:  # requests' and google-auth's transport errors
                raise CollectorError(
                    f"gcp: billing catalog: cannot reach {self.base}: {type(exc).__name__}"
                ) from exc
            if answer.status_code in (429, 503) and attempt + 1 < ATTEMPTS:
                time.sleep(min(30.0, float(answer.headers.get("Retry-After") or 2**attempt)))
                continue
            if answer.status_code != 200:
                where = f"{self.base}{path.split('?')[0]}"
                raise CollectorError(
                    f"gcp: billing catalog: HTTP {answer.status_code} from {where}"
                )
            try:
                return answer.json()
            except ValueError as exc:
                raise CollectorError(f"gcp: billing catalog: not JSON from {self.base}") from exc
        raise CollectorError(f"gcp: billing catalog: still throttled after {ATTEMPTS} attempts")


def _default() -> Any:  # Any: google-auth's objects, untyped here
    import google.auth  # keeps google off start-up
    from google.auth.exceptions import DefaultCredentialsError  # keeps google off start-up

    try:
        credentials, _ = google.auth.default(scopes=SCOPES)
    except DefaultCredentialsError as exc:
        raise CollectorError(
            f"gcp: billing catalog: no Application Default Credentials and no {API_KEY_HINT}"
        ) from exc
    return credentials


API_KEY_HINT = "GPU_AUDIT_GCP_API_KEY (an API key is enough: the catalog is public list prices)"
