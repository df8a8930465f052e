"""AWS as the CLI and settings loader see it, declared without importing boto3."""

from __future__ import annotations

from dataclasses import replace

from gpu_audit.collectors.aws.settings import AwsSettings
from gpu_audit.collectors.options import (
    CONCURRENCY,
    REGION,
    SINCE,
    TIMEOUT,
    WINDOW,
    check_patience,
    check_since,
)
from gpu_audit.collectors.provider import Option, Provider
from gpu_audit.core.yamlguard import printable
from gpu_audit.errors import ConfigError

_METRICS = (
    "install the CloudWatch agent with its `nvidia_gpu` metrics (namespace `CWAgent`, "
    "`nvidia_smi_utilization_gpu`, dimension `InstanceId`) in the AMI or launch template; "
    "SageMaker notebook instances publish no GPU metric"
)


SERVICES = ("ec2", "sagemaker")


def _values(aws: AwsSettings) -> None:
    unknown = [s for s in aws.services if s not in SERVICES]
    if unknown or not aws.services:
        raise ConfigError(
            f"aws.services: '{printable(unknown[0], 80) if unknown else ''}' is not a service; "
            f"choose among {', '.join(SERVICES)}"
        )
    check_patience("aws", aws, ("connect_timeout", "read_timeout"))
    check_since("aws", aws)


def _check(aws: AwsSettings) -> None:
    # keeps collectors.aws.regions off --help
    from gpu_audit.collectors.aws.regions import check_regions

    check_regions(aws.regions)
    if aws.accounts and not any("{account}" in arn for arn in aws.role_arns):
        raise ConfigError(
            "--account fills the {account} placeholder of a --role-arn template "
            "(for example arn:aws:iam::{account}:role/gpu-audit-reader); none was given"
        )


PROVIDER = Provider(
    name="aws",
    settings=AwsSettings,
    options=(
        REGION,
        Option("--profile", "profiles", "AWS profile (repeatable).", multiple=True),
        Option(
            "--role-arn",
            "role_arns",
            "Role to assume (repeatable; may contain {account}).",
            multiple=True,
        ),
        Option("--account", "accounts", "Account id filling {account}.", multiple=True),
        Option("--org-role", "organization_role", "Role name assumed in every AWS account."),
        Option(
            "--service",
            "services",
            "Service to scan (repeatable; default: every service of the provider).",
            multiple=True,
            choices=SERVICES,
        ),
        CONCURRENCY,
        WINDOW,
        replace(TIMEOUT, setting="read_timeout"),
        SINCE,
    ),
    factory="gpu_audit.collectors.aws.collector:AwsCollector",
    requires="boto3",
    extra="aws",
    hints={
        "utilization.gpu_p95": _METRICS,
        "utilization.gpu_avg": _METRICS,
        "utilization.window_hours": _METRICS,
        "data.regions": "set the `data-bucket` tag to the S3 bucket the instance reads, "
        "and allow `s3:GetBucketLocation` on it",
    },
    permissions_heading="## AWS",
    check=_check,
    values=_values,
)
