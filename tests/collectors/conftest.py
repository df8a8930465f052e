"""AWS collector fixtures: one moto server on loopback for the session, reset before each test,
a fleet builder that talks to it through boto3, and a fault-injecting proxy in front of it."""

from __future__ import annotations

import http.client
import json
import re
import threading
import urllib.request
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

ACCESS_KEY = "AKIAGPUAUDITTEST0001"
SECRET_KEY = "gpu-audit-test-secret-never-printed"
SESSION_TOKEN = "gpu-audit-test-session-token-never-printed"
AMI = "ami-12345678"
_SCOPE = re.compile(r"Credential=[^/]+/\d{8}/([^/]+)/([^/]+)/")


class Fleet:
    """Builds EC2 instances, CloudWatch datapoints and S3 buckets on the moto server."""

    def __init__(self, credentials: dict[str, str] | None = None) -> None:
        import boto3

        self.session = boto3.Session(**(credentials or {}))

    def client(self, service: str, region: str) -> Any:
        return self.session.client(service, region_name=region)

    def launch(
        self,
        region: str,
        instance_type: str,
        *,
        count: int = 1,
        spot: bool = False,
        tags: dict[str, str] | None = None,
        stopped: bool = False,
    ) -> list[str]:
        ec2 = self.client("ec2", region)
        extra: dict[str, Any] = {}
        if spot:
            extra["InstanceMarketOptions"] = {"MarketType": "spot"}
        if tags:
            pairs = [{"Key": k, "Value": v} for k, v in tags.items()]
            extra["TagSpecifications"] = [{"ResourceType": "instance", "Tags": pairs}]
        answer = ec2.run_instances(
            ImageId=AMI, MinCount=count, MaxCount=count, InstanceType=instance_type, **extra
        )
        ids = [i["InstanceId"] for i in answer["Instances"]]
        if stopped:
            ec2.stop_instances(InstanceIds=ids)
        return ids

    def utilization(self, region: str, instance_id: str, values: Sequence[float]) -> None:
        """One datapoint per hour, the latest an hour ago, on the CloudWatch agent's metric."""
        now = datetime.now(UTC)
        data = [
            {
                "MetricName": "nvidia_smi_utilization_gpu",
                "Dimensions": [{"Name": "InstanceId", "Value": instance_id}],
                "Timestamp": now - timedelta(hours=hour + 1, minutes=5),
                "Value": float(value),
                "Unit": "Percent",
            }
            for hour, value in enumerate(values)
        ]
        cloudwatch = self.client("cloudwatch", region)
        for start in range(0, len(data), 1000):
            cloudwatch.put_metric_data(Namespace="CWAgent", MetricData=data[start : start + 1000])

    def bucket(self, name: str, region: str) -> None:
        s3 = self.client("s3", "us-east-1")
        if region == "us-east-1":
            s3.create_bucket(Bucket=name)
        else:
            s3.create_bucket(Bucket=name, CreateBucketConfiguration={"LocationConstraint": region})

    def assume(self, role_arn: str) -> Fleet:
        """A fleet builder in the account of `role_arn` (moto keys assumed credentials by it)."""
        sts = self.client("sts", "us-east-1")
        answer = sts.assume_role(RoleArn=role_arn, RoleSessionName="fleet-builder")["Credentials"]
        return Fleet(
            {
                "aws_access_key_id": answer["AccessKeyId"],
                "aws_secret_access_key": answer["SecretAccessKey"],
                "aws_session_token": answer["SessionToken"],
            }
        )


def _isolate(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, endpoint: str) -> None:
    for name in (
        "AWS_PROFILE",
        "AWS_DEFAULT_PROFILE",
        "AWS_ROLE_ARN",
        "AWS_WEB_IDENTITY_TOKEN_FILE",
    ):
        monkeypatch.delenv(name, raising=False)
    empty = tmp_path / "aws-config"
    empty.write_text("")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(empty))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(empty))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
    monkeypatch.setenv("AWS_SESSION_TOKEN", SESSION_TOKEN)


def _epoch(value: datetime | None) -> float | None:
    return None if value is None else value.replace(tzinfo=UTC).timestamp()


def _trials_of_tuning_job(self: Any) -> str:
    """SageMaker `ListTrainingJobsForHyperParameterTuningJob`, which moto lacks: the backend's
    training jobs whose `tuning_job_arn` names the tuning job (set by a test), in the API's
    shape, MaxResults a page with NextToken."""
    params = json.loads(self.body)
    backend = self.sagemaker_backend
    tuning = backend.hyper_parameter_tuning_jobs[params["HyperParameterTuningJobName"]]
    jobs = sorted(
        (
            j
            for j in backend.training_jobs.values()
            if getattr(j, "tuning_job_arn", "") == tuning.arn
        ),
        key=lambda j: j.training_job_name,
    )
    start = int(params.get("NextToken") or 0)
    size = int(params.get("MaxResults") or 10)
    body: dict[str, Any] = {
        "TrainingJobSummaries": [
            {
                "TrainingJobName": j.training_job_name,
                "TrainingJobArn": j.arn,
                "TuningJobName": tuning.hyper_parameter_tuning_job_name,
                "CreationTime": _epoch(j.creation_time),
                "TrainingStartTime": _epoch(j.training_start_time),
                "TrainingEndTime": _epoch(j.training_end_time),
                "TrainingJobStatus": j.training_job_status,
                "TunedHyperParameters": {},
            }
            for j in jobs[start : start + size]
        ]
    }
    if start + size < len(jobs):
        body["NextToken"] = str(start + size)
    return json.dumps(body)


@pytest.fixture
def aws_fleet(moto_url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Fleet:
    """An empty moto account reached through AWS_ENDPOINT_URL with fake static credentials;
    the server answers `ListTrainingJobsForHyperParameterTuningJob` too (moto lacks it)."""
    from moto.sagemaker.responses import SageMakerResponse

    monkeypatch.setattr(
        SageMakerResponse,
        "list_training_jobs_for_hyper_parameter_tuning_job",
        _trials_of_tuning_job,
        raising=False,
    )
    _reset_moto(moto_url)
    _isolate(monkeypatch, tmp_path, moto_url)
    # The same retries, without the adaptive limiter's sleeps after a throttle (about 35 s in
    # the two throttle tests); tests/collectors/test_aws_clients.py holds the shipped mode.
    monkeypatch.setattr("gpu_audit.collectors.aws.sessions.RETRY_MODE", "standard")
    return Fleet()


def _reset_moto(moto_url: str) -> None:
    """An empty moto account, as `POST /moto-api/reset` leaves it, in a fraction of its time.

    moto's reset builds every backend a test touched anew (EC2's default VPC, subnets and images
    per account and region: 13 s after a scan of every region) and then drops them all; the
    next request builds what it needs again. The session's server runs in this process, so its
    backends are dropped here without being built first (a backend whose reset also clears state
    kept outside it, S3's bucket index and Batch's jobs, is reset as moto would). The proxy in front (ec2_capacity.py)
    empties its own store on the reset request, still sent to it, which moto then answers.
    """
    from moto.core import base_backend
    from moto.core.model_instances import reset_model_data

    plain = base_backend.BaseBackend.reset
    with base_backend.backend_lock:
        for backends in base_backend.BackendDict._instances:
            for _, _, backend in backends.iter_backends():
                if type(backend).reset is not plain:  # S3, Batch: state outside the backend
                    backend.reset()
            backends.clear()
        base_backend.BackendDict._instances.clear()
    reset_model_data()
    request = urllib.request.Request(f"{moto_url}/moto-api/reset", method="POST")
    with urllib.request.urlopen(request, timeout=120) as answer:  # nothing left to build
        assert answer.status == 200


class FaultyProxy:
    """Forwards to moto, but answers every request signed for a failing region with an error.

    The region is read from the SigV4 credential scope of the Authorization header, so the
    collector's real HTTP stack, retries included, sees the failure exactly as from AWS.
    """

    def __init__(self, upstream: str) -> None:
        self.upstream = urlsplit(upstream)
        self.failing: dict[str, tuple[int, str]] = {}  # region → (status, error code)
        self.services: set[str] = set()  # only these signing names fail (empty: every service)
        self.operations: set[str] = set()  # only these JSON targets fail (empty: every operation)
        self.refused = 0
        self.limit: int | None = None  # refuse only this many matching requests, then relay
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _relay(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                scope = _SCOPE.search(self.headers.get("Authorization", ""))
                if (
                    scope
                    and scope.group(1) in proxy.failing
                    and (not proxy.services or scope.group(2) in proxy.services)
                    and (
                        not proxy.operations
                        or self.headers.get("X-Amz-Target", "").split(".")[-1] in proxy.operations
                    )
                    and (proxy.limit is None or proxy.refused < proxy.limit)
                ):
                    proxy.refused += 1
                    status, code = proxy.failing[scope.group(1)]
                    # Echo the caller's access key id, as some AWS errors do, to prove redaction.
                    key = re.search(r"Credential=([^/]+)/", self.headers["Authorization"])
                    message = f"Rate exceeded for {key.group(1) if key else '?'}"
                    kind = self.headers.get("Content-Type", "")
                    self._answer(status, _error_body(scope.group(2), kind, code, message), kind)
                    return
                upstream = http.client.HTTPConnection(
                    proxy.upstream.hostname or "127.0.0.1", proxy.upstream.port, timeout=60
                )
                upstream.request(self.command, self.path, body=body, headers=dict(self.headers))
                answer = upstream.getresponse()
                payload = answer.read()
                self.send_response(answer.status)
                for name, value in answer.getheaders():
                    if name.lower() not in ("content-length", "transfer-encoding", "connection"):
                        self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
                upstream.close()

            def _answer(self, status: int, body: bytes, kind: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind if "json" in kind else "text/xml")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = do_PUT = do_HEAD = do_DELETE = _relay

        return Handler


def _error_body(service: str, kind: str, code: str, message: str) -> bytes:
    """An error in the protocol the request used: JSON (CloudWatch today), EC2 or query XML."""
    if "json" in kind:
        return json.dumps({"__type": code, "message": message}).encode()
    if service == "ec2":
        xml = (
            f"<Response><Errors><Error><Code>{code}</Code><Message>{message}</Message></Error>"
            "</Errors><RequestID>gpu-audit-test</RequestID></Response>"
        )
    else:
        xml = (
            f"<ErrorResponse><Error><Type>Sender</Type><Code>{code}</Code>"
            f"<Message>{message}</Message></Error><RequestId>gpu-audit-test</RequestId>"
            "</ErrorResponse>"
        )
    return xml.encode()


@pytest.fixture
def faulty_proxy(
    aws_fleet: Fleet, moto_url: str, monkeypatch: pytest.MonkeyPatch
) -> Iterator[FaultyProxy]:
    """A proxy in front of moto; the collector under test reaches AWS only through it."""
    proxy = FaultyProxy(moto_url)
    yield proxy
    proxy.close()
