"""Cloud failures a user meets: secrets in URLs, missing credentials, silent endpoints, bad regions.

Every test drives the real CLI and the real clients against loopback: a closed port, a server
that accepts and never answers, or a token endpoint that refuses.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from tests.conftest import FIXTURES

from gpu_audit.cli.main import main

DEMO = str(FIXTURES / "inventory" / "demo.yaml")
GCP_ENVS = (
    "GPU_AUDIT_GCE_ENDPOINT",
    "GPU_AUDIT_GCP_MONITORING_ENDPOINT",
    "GPU_AUDIT_GCS_ENDPOINT",
    "GPU_AUDIT_VERTEX_ENDPOINT",
)


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def silent_server() -> Iterator[str]:
    """Accepts every connection and never answers (a black-holing proxy or firewall)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    held: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                held.append(listener.accept()[0])
            except OSError:
                return

    threading.Thread(target=accept, daemon=True).start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    listener.close()
    for connection in held:
        connection.close()


def aws_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, endpoint: str | None) -> None:
    empty = tmp_path / "aws-empty"
    empty.write_text("")
    for name in ("AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_ROLE_ARN", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(empty))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(empty))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    if endpoint is None:
        monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
        monkeypatch.delenv("AWS_ACCESS_KEY_ID", raising=False)
        monkeypatch.delenv("AWS_SECRET_ACCESS_KEY", raising=False)
    else:
        monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAIOSFODNN7EXAMPLE")
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")


def gcp_env(monkeypatch: pytest.MonkeyPatch, credentials: Path) -> None:
    for env in GCP_ENVS:
        monkeypatch.delenv(env, raising=False)
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(credentials))
    # Nothing may leave the machine: any request not to loopback goes to a closed proxy.
    monkeypatch.setenv("HTTPS_PROXY", f"http://127.0.0.1:{closed_port()}")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")


def settings_file(tmp_path: Path, text: str) -> str:
    path = tmp_path / "settings.yaml"
    path.write_text(text)
    return str(path)


def scan(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["scan", *args])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def test_endpoint_userinfo_and_query_never_reach_stderr_or_reports(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    url = f"http://user:hunter2@127.0.0.1:{closed_port()}/?X-Amz-Signature=s3cr3t"
    aws_env(monkeypatch, tmp_path, url)
    config = settings_file(tmp_path, "aws:\n  max_attempts: 1\n")
    report = tmp_path / "report.json"
    args = ["--provider", "aws", "--region", "us-east-1", "--config", config]
    code, out, err = scan(*args, "--report", f"json={report}", "--format", "text")
    assert code == 3
    text = out + err + report.read_text()
    assert "hunter2" not in text and "user:" not in text and "s3cr3t" not in text
    assert "http://[redacted]@127.0.0.1" in out  # the endpoint is still named, once: in the report


def test_missing_aws_credentials_is_a_gap_and_the_inventory_is_still_judged(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    aws_env(monkeypatch, tmp_path, None)
    code, out, err = scan("--inventory", DEMO, "--provider", "aws", "--format", "json")
    assert code == 3
    report = json.loads(out)
    assert report["findings"], "the inventory was judged"
    (gap,) = report["coverage_gaps"]
    assert (gap["provider"], gap["scope"], gap["error"]) == ("aws", "provider", "NoCredentials")
    assert "gpu-audit: incomplete: aws provider: NoCredentials: no credentials found" in err


def test_a_silent_aws_endpoint_is_bounded_by_timeout_and_names_the_work_item(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, silent_server: str
) -> None:
    aws_env(monkeypatch, tmp_path, silent_server)
    config = settings_file(tmp_path, "aws:\n  max_attempts: 2\n  connect_timeout: 1\n")
    started = time.monotonic()
    code, _, err = scan(
        "--provider", "aws", "--region", "us-east-1", "--config", config, "--timeout", "0.5", "-q"
    )
    # botocore's own read timeout is 60 s an attempt: ending well before two of them shows ours
    # applied (the message below names it); no tight bound, as a loaded machine is slow to start
    assert time.monotonic() - started < 60
    assert code == 3
    assert "aws account: ReadTimeoutError: default credentials: Read timeout" in err


def test_gcp_credentials_file_missing_or_unreadable_is_named_with_the_cause(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    gcp_env(monkeypatch, tmp_path / "absent.json")
    code, _, err = scan("--provider", "gcp", "--project", "p", "-q")
    assert code == 3
    assert f"GOOGLE_APPLICATION_CREDENTIALS={tmp_path}/absent.json: cannot read it: " in err
    assert "No such file or directory" in err
    gcp_env(monkeypatch, tmp_path)  # a directory: exists, cannot be read as a file
    code, _, err = scan("--provider", "gcp", "--project", "p", "-q")
    assert code == 3 and "cannot read it: Is a directory" in err


def test_gcp_user_credentials_without_network_are_a_gap_not_a_traceback(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    credentials = tmp_path / "adc.json"
    token_uri = f"http://127.0.0.1:{closed_port()}/token"
    credentials.write_text(
        json.dumps(
            {
                "type": "authorized_user",
                "client_id": "id.apps.googleusercontent.com",
                "client_secret": "secret",
                "refresh_token": "refresh",
                "token_uri": token_uri,
            }
        )
    )
    gcp_env(monkeypatch, credentials)
    code, _, err = scan("--provider", "gcp", "--project", "ml-prod", "--inventory", DEMO, "-q")
    assert code == 3
    assert "gpu-audit: incomplete: gcp project ml-prod: TransportError: " in err
    assert "Traceback" not in err


def test_region_names_are_checked_per_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    code, _, err = scan("--provider", "aws", "--region", "us-east1")
    assert code == 2
    assert "--region: 'us-east1' is not an AWS region (did you mean 'us-east-1'?)" in err
    code, _, err = scan("--provider", "gcp", "--project", "p", "--region", "us-east1")
    assert code == 2
    assert (
        "--region applies to --provider aws or --provider azure, which this scan does not read"
        in err
    )


def test_progress_shows_on_a_terminal_from_the_first_call(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, silent_server: str
) -> None:
    aws_env(monkeypatch, tmp_path, silent_server)
    config = settings_file(tmp_path, "aws:\n  max_attempts: 1\n")
    primary, secondary = os.openpty()
    args = ["scan", "--provider", "aws", "--region", "us-east-1", "--config", config]
    with subprocess.Popen(
        [sys.executable, "-m", "gpu_audit", *args, "--timeout", "10", "-q"],
        stdout=subprocess.DEVNULL,
        stderr=secondary,
    ) as process:
        os.close(secondary)
        first = os.read(primary, 4096).decode()
        # the silent call holds the scan for the whole timeout: a line read now came first
        still_running = process.poll() is None
        process.kill()  # what the timeout would end is not this test's (~9 s of the suite)
        process.wait(timeout=120)
    os.close(primary)
    assert "[aws] 0/0 work items, 0 GPU instances; " in first
    assert still_running, "the first line came only when the scan ended"


def test_an_error_line_never_shows_url_secrets() -> None:
    code, _, err = scan("--inventory", "https://user:pw@example.com/inv.json?sig=abc")
    assert code == 2
    assert "pw@" not in err and "sig=abc" not in err
    assert "https://[redacted]@example.com/inv.json?[redacted]" in err


def _bare_env(tmp_path: Path) -> dict[str, str]:
    """No cloud credential anywhere: an empty home, no cloud variables, no CLI on PATH."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {
        "PATH": os.path.dirname(sys.executable),
        "HOME": str(home),
        "AWS_EC2_METADATA_DISABLED": "true",
        "AWS_CONFIG_FILE": str(home / "none"),
        "AWS_SHARED_CREDENTIALS_FILE": str(home / "none"),
    }
    if "PYTHONPATH" in os.environ:  # the code under test, wherever the run put it
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return env


def test_azure_with_no_credential_says_one_line_with_its_whole_hint(tmp_path: Path) -> None:
    """Issue 38.8: the SDK's credential chain (thirteen lines) stays off stderr."""
    done = subprocess.run(
        [sys.executable, "-m", "gpu_audit", "scan", "--provider", "azure", "--format", "text"],
        capture_output=True, text=True, timeout=120, env=_bare_env(tmp_path), cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 3, done.stderr
    said = [ln for ln in (done.stdout + done.stderr).splitlines() if ln.strip()]
    gap = [ln for ln in said if "NoCredentials" in ln]
    assert len(gap) == 1 and gap[0].endswith("AZURE_TENANT_ID and AZURE_CLIENT_SECRET")
    assert "Attempted credentials" not in done.stderr and "EnvironmentCredential" not in done.stderr
    assert len(done.stderr.strip().splitlines()) <= 1
    table = subprocess.run(
        [sys.executable, "-m", "gpu_audit", "scan", "--provider", "azure", "--format", "table"],
        capture_output=True, text=True, timeout=120, env=_bare_env(tmp_path), cwd=tmp_path,
    )  # fmt: skip
    [line] = [ln for ln in table.stdout.splitlines() if "NoCredentials" in ln]
    assert line.endswith("AZURE_CLIENT_SECRET")  # the hint whole, not clipped


def test_catalog_refresh_with_no_aws_credentials_says_one_line(tmp_path: Path) -> None:
    """Issue 38.8: not botocore's text, nor a region nobody asked for."""
    done = subprocess.run(
        [sys.executable, "-m", "gpu_audit", "catalog", "refresh", "--provider", "aws",
         "-o", str(tmp_path / "prices.json")],
        capture_output=True, text=True, timeout=120, env=_bare_env(tmp_path), cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("gpu-audit: error: aws: no credentials found; set AWS_PROFILE")
    assert "NoCredentialsError" not in line and "eu-central-1" not in line
    assert not (tmp_path / "prices.json").exists()
