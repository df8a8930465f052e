"""The `aws:` section of `.gpu-audit.yaml`: its keys, types and defaults."""

from __future__ import annotations

from gpu_audit.core.frozen import record


@record
class AwsSettings:
    services: tuple[str, ...] = ("ec2", "sagemaker")  # what to enumerate in each region
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
    # SageMaker publishes GPUUtilization summed over an instance's GPUs (0-100 × GPUs).
    sagemaker_training_namespace: str = "/aws/sagemaker/TrainingJobs"
    sagemaker_endpoint_namespace: str = "/aws/sagemaker/Endpoints"
    connect_timeout: float = 5.0
    read_timeout: float = 20.0
    max_attempts: int = 5
    since: str | None = None  # finished runs from this date; None: 90 days back
