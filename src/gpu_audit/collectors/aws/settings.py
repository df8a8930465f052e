"""The `aws:` section of `.gpu-audit.yaml`: its keys, types and defaults."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class AwsSettings:
    profiles: tuple[str, ...] = ()
    role_arns: tuple[str, ...] = ()  # ARNs, or a template with an {account} placeholder
    accounts: tuple[str, ...] = ()  # fills {account} in role_arns
    organization_role: str | None = None  # role name assumed in every Organizations account
    regions: tuple[str, ...] = ()  # empty: every enabled region (DescribeRegions)
    concurrency: int = 8
    workload_tag: str = "workload"
    data_bucket_tag: str = "data-bucket"
    metric_namespace: str = "CWAgent"
    metric_name: str = "nvidia_smi_utilization_gpu"
    metric_dimension: str = "InstanceId"
    window_hours: float = 24.0
    connect_timeout: float = 5.0
    read_timeout: float = 20.0
    max_attempts: int = 5
