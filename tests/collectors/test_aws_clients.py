"""Client creation for many accounts: the memoized path finds what botocore's plain path finds."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from gpu_audit.collectors.aws.clients import freeze_config
from gpu_audit.collectors.aws.collector import AwsCollector
from gpu_audit.collectors.aws.sessions import Sessions
from gpu_audit.collectors.aws.settings import AwsSettings
from gpu_audit.core.resource import Resource
from gpu_audit.core.results import CoverageGap
from gpu_audit.errors import CollectorError

Fleet = Any  # conftest.Fleet
TEMPLATE = "arn:aws:iam::{account}:role/audit"
ACCOUNTS = ("111111111111", "222222222222")
REGIONS = ("us-east-1", "eu-west-1")


def test_memoized_clients_find_what_plain_clients_find(aws_fleet: Fleet) -> None:
    for n, account in enumerate(ACCOUNTS):
        builder = aws_fleet.assume(TEMPLATE.format(account=account))
        builder.launch(REGIONS[n], "g5.xlarge", tags={"workload": "training"})
        builder.launch(REGIONS[1 - n], "p4d.24xlarge", spot=True)
    settings = AwsSettings(role_arns=(TEMPLATE,), accounts=ACCOUNTS, regions=REGIONS)
    found = []
    for memoize in (True, False):
        items = list(AwsCollector(settings, memoize_clients=memoize).collect())
        assert not [i for i in items if isinstance(i, CoverageGap)]
        found.append(
            sorted(
                (r.id, r.account, r.region, r.capacity) for r in items if isinstance(r, Resource)
            )
        )
    assert found[0] == found[1] and len(found[0]) == 4
    assert {account for _, account, _, _ in found[0]} == set(ACCOUNTS)


def test_one_client_class_per_service_and_the_base_clients_shared(aws_fleet: Fleet) -> None:
    memo = Sessions(AwsSettings())
    plain = Sessions(AwsSettings(), memoize=False)
    for sessions, shared in ((memo, True), (plain, False)):
        credentials = {"AccessKeyId": "ASIA1", "SecretAccessKey": "s", "SessionToken": "t"}
        one, two = (
            sessions.derive(credentials=credentials),
            sessions.derive(credentials=credentials),
        )
        sts = sessions.client(sessions.base, "sts", "us-east-1")
        assert sessions.client(sessions.base, "sts", "us-east-1") is sts  # the base's: shared
        first = sessions.client(one, "ec2", "us-east-1")
        assert sessions.client(one, "ec2", "us-east-1") is not first  # an account's: the caller's
        other = sessions.client(two, "ec2", "us-west-2")
        assert other is not first and other.meta.region_name == "us-west-2"
        assert (type(other) is type(first)) is shared
        assert other._request_signer._credentials.access_key == "ASIA1"


def test_an_endpoints_connections_outlive_an_accounts_clients(aws_fleet: Fleet) -> None:
    credentials = {"AccessKeyId": "ASIA1", "SecretAccessKey": "s", "SessionToken": "t"}
    for memoize in (True, False):
        sessions = Sessions(AwsSettings(), memoize=memoize)
        one, two = (sessions.derive(credentials=credentials) for _ in range(2))
        first = sessions.client(one, "ec2", "us-east-1")
        second = sessions.client(two, "ec2", "us-east-1")
        elsewhere = sessions.client(two, "ec2", "eu-west-1")
        pool = first._endpoint.http_session
        assert (second._endpoint.http_session is pool) is memoize
        same_url = elsewhere.meta.endpoint_url == first.meta.endpoint_url  # AWS_ENDPOINT_URL
        assert (elsewhere._endpoint.http_session is pool) is (memoize and same_url)
        assert [c.describe_regions()["Regions"] != [] for c in (first, second)] == [True, True]


def test_a_proxy_in_the_environment_is_still_botocores_to_apply(
    aws_fleet: Fleet, monkeypatch: Any
) -> None:
    assert Sessions(AwsSettings()).config.proxies == {}  # none set: botocore's answer, once
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    assert Sessions(AwsSettings()).config.proxies is None  # botocore reads it per endpoint


def test_the_configuration_is_resolved_once_to_what_botocore_resolves(
    aws_fleet: Fleet, monkeypatch: Any
) -> None:
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "7")
    monkeypatch.setenv("AWS_STS_REGIONAL_ENDPOINTS", "legacy")
    frozen = Sessions(AwsSettings()).base
    plain = Sessions(AwsSettings(), memoize=False).base
    names = list(plain.get_component("config_store")._mapping)
    assert len(names) > 30
    for name in names:
        assert frozen.get_config_variable(name) == plain.get_config_variable(name), name
    assert frozen.get_config_variable("max_attempts") == 7
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "3")  # the scan's configuration is read at its start
    assert frozen.get_config_variable("max_attempts") == 7
    monkeypatch.setenv("AWS_DEFAULTS_MODE", "standard")  # defaults that depend on the client
    assert not freeze_config(Sessions(AwsSettings(), memoize=False).base)


def test_a_scan_retries_in_adaptive_mode() -> None:
    """The shipped mode is botocore's adaptive one (a client-side rate limiter after throttles)."""
    settings = AwsSettings(max_attempts=4)
    assert Sessions(settings).config.retries == {"mode": "adaptive", "total_max_attempts": 4}


def test_the_aws_tests_retry_in_standard_mode(aws_fleet: Fleet) -> None:
    """The AWS fixture swaps in standard mode: the same retries, without the limiter's sleeps."""
    settings = AwsSettings(max_attempts=4)
    assert Sessions(settings).config.retries == {"mode": "standard", "total_max_attempts": 4}


def test_without_boto3_the_collector_says_what_to_install(monkeypatch: Any) -> None:
    monkeypatch.setitem(sys.modules, "boto3", None)  # looked up, not imported
    with pytest.raises(CollectorError, match=r"pip install 'gpu-audit\[aws\]'"):
        list(AwsCollector(AwsSettings()).collect())
