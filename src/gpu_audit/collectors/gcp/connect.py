"""Where the GCP APIs are reached and with which credentials (loopback overrides for tests)."""

from __future__ import annotations

import importlib
import os
from typing import Any

from gpu_audit.collectors.gcp.rest import BucketLocations
from gpu_audit.collectors.gcp.settings import GcpSettings
from gpu_audit.collectors.interface import ProviderUnavailable
from gpu_audit.core.endpoint import Endpoint, endpoint
from gpu_audit.core.frozen import record
from gpu_audit.errors import CollectorError

GCE_ENDPOINT_ENV = "GPU_AUDIT_GCE_ENDPOINT"
MONITORING_ENDPOINT_ENV = "GPU_AUDIT_GCP_MONITORING_ENDPOINT"
GCS_ENDPOINT_ENV = "GPU_AUDIT_GCS_ENDPOINT"
VERTEX_ENDPOINT_ENV = "GPU_AUDIT_VERTEX_ENDPOINT"
DEFAULT_MONITORING = "https://monitoring.googleapis.com"
DEFAULT_GCS = "https://storage.googleapis.com"
EXTRA_HINT = "install the gcp extra: pip install 'gpu-audit[gcp]'"
SCOPES = (
    "https://www.googleapis.com/auth/compute.readonly",
    "https://www.googleapis.com/auth/monitoring.read",
    "https://www.googleapis.com/auth/devstorage.read_only",
    "https://www.googleapis.com/auth/cloud-platform.read-only",  # Vertex AI
)
PAGE_SIZE = 500  # aggregatedList's maximum maxResults


@record
class Apis:
    """Endpoints, credentials and the imported client module, shared by every project's scan."""

    compute_v1: Any
    gce: Endpoint
    monitoring: Endpoint
    gcs: Endpoint
    vertex: Endpoint
    credentials: Any  # ADC, or None when every endpoint is a loopback override
    buckets: BucketLocations

    @classmethod
    def connect(cls, settings: GcpSettings) -> Apis:
        """The endpoints in use (env overrides, loopback ones anonymous) and the default credentials
        where any is not loopback; CollectorError without the gcp extra."""
        try:
            compute_v1 = importlib.import_module("google.cloud.compute_v1")
        except ImportError as exc:
            raise CollectorError(f"gcp: {EXTRA_HINT}") from exc
        gce, monitoring, gcs = (
            endpoint(GCE_ENDPOINT_ENV),
            endpoint(MONITORING_ENDPOINT_ENV),
            endpoint(GCS_ENDPOINT_ENV),
        )
        vertex = endpoint(VERTEX_ENDPOINT_ENV)
        used = [monitoring, gcs]
        used += [gce] if "gce" in settings.services else []
        used += [vertex] if "vertex" in settings.services else []
        credentials = None
        if not all(api.anonymous for api in used):
            credentials = _default_credentials()
        buckets = BucketLocations(gcs.base(DEFAULT_GCS), settings.timeout)
        return cls(compute_v1, gce, monitoring, gcs, vertex, credentials, buckets)

    def credentials_for(self, api: Endpoint) -> Any:  # Any: google-cloud's objects, untyped here
        """Anonymous credentials for a loopback endpoint, else the default credentials."""
        if api.anonymous:
            from google.auth.credentials import AnonymousCredentials  # keeps google off start-up

            return AnonymousCredentials()
        return self.credentials


def _default_credentials() -> Any:  # Any: google-cloud's objects, untyped here
    """Application Default Credentials, or ProviderUnavailable naming the file and the cause."""
    import google.auth  # keeps google off start-up
    from google.auth.exceptions import DefaultCredentialsError  # keeps google off start-up

    named = os.environ.get("GOOGLE_APPLICATION_CREDENTIALS", "").strip()
    if named:
        try:
            with open(named, "rb") as handle:
                handle.read(1)
        except OSError as exc:
            raise ProviderUnavailable(
                "NoCredentials",
                f"gcp: GOOGLE_APPLICATION_CREDENTIALS={named}: cannot read it: "
                f"{exc.strerror or type(exc).__name__}",
            ) from exc
    try:
        credentials, _ = google.auth.default(scopes=list(SCOPES))
    except DefaultCredentialsError as exc:
        cause = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        where = f"GOOGLE_APPLICATION_CREDENTIALS={named}: " if named else ""
        raise ProviderUnavailable(
            "NoCredentials",
            f"gcp: no Application Default Credentials{': ' + where + cause[:300] if named else ''};"
            " run `gcloud auth application-default login` or set GOOGLE_APPLICATION_CREDENTIALS",
        ) from exc
    return credentials
