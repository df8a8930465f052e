"""The live providers, by name: the CLI, the settings loader and the reports find them here."""

from __future__ import annotations

from gpu_audit.collectors.aws.provider import PROVIDER as AWS
from gpu_audit.collectors.azure.provider import PROVIDER as AZURE
from gpu_audit.collectors.gcp.provider import PROVIDER as GCP
from gpu_audit.collectors.kubernetes.provider import PROVIDER as KUBERNETES
from gpu_audit.collectors.provider import Provider

PROVIDERS: dict[str, Provider] = {"aws": AWS, "gcp": GCP, "kubernetes": KUBERNETES, "azure": AZURE}
