"""A scan that read nothing says so, once; no test-only setting in a user message; a
kubeconfig pointing nowhere is one clear line (issue 26 item 9)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.collectors.test_cloud_errors import GCP_ENVS, aws_env, closed_port, scan


@pytest.mark.parametrize("fmt", ["table", "text"])
def test_no_credentials_says_nothing_was_scanned_once(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, fmt: str
) -> None:
    aws_env(monkeypatch, tmp_path, None)
    code, out, err = scan("--provider", "aws", "--region", "us-east-1", "--format", fmt)
    assert code == 3
    assert "No open findings" not in out
    assert (
        out.rstrip().splitlines()[-1]
        == "nothing was scanned: no provider could be read (1 coverage gap)"
    )
    assert (out + err).count("no credentials found") == 1


def test_gcp_without_credentials_names_no_test_only_setting(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for env in (*GCP_ENVS, "GOOGLE_APPLICATION_CREDENTIALS"):
        monkeypatch.delenv(env, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))  # no gcloud ADC file
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path / "gcloud"))
    monkeypatch.setenv("GCE_METADATA_HOST", f"127.0.0.1:{closed_port()}")
    monkeypatch.setenv("GCE_METADATA_IP", f"127.0.0.1:{closed_port()}")
    code, out, err = scan("--provider", "gcp", "--project", "p1", "--format", "json")
    assert code == 3
    (gap,) = json.loads(out)["coverage_gaps"]
    assert gap["error"] == "NoCredentials"
    assert "gcloud auth application-default login" in gap["message"]
    assert "GPU_AUDIT_" not in gap["message"] + err and "loopback" not in gap["message"]


def test_a_kubeconfig_pointing_nowhere_is_one_clear_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    port = closed_port()
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: x\n"
        f"clusters: [{{name: c, cluster: {{server: 'https://127.0.0.1:{port}'}}}}]\n"
        "contexts: [{name: x, context: {cluster: c, user: u}}]\n"
        "users: [{name: u, user: {token: abc}}]\n"
    )
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
    code, out, err = scan("--provider", "kubernetes", "--format", "json")
    assert code == 3
    (gap,) = json.loads(out)["coverage_gaps"]
    assert gap["error"] == "Unreachable"
    assert gap["message"].startswith(
        f"cannot connect to https://127.0.0.1:{port}: Connection refused"
    )
    assert "MaxRetryError" not in err + out and "HTTPSConnectionPool" not in err + out
    assert len(err.strip().splitlines()) == 1


def test_a_job_file_given_as_an_inventory_says_to_use_check() -> None:
    """Issue 38.10: one line naming `check`, not the inventory's key errors."""
    from click.testing import CliRunner
    from tests.conftest import FIXTURES

    from gpu_audit.cli.main import main

    job = str(FIXTURES / "estimate" / "skypilot-no-cap.yaml")
    result = CliRunner().invoke(main, ["scan", "--inventory", job, "-q"])
    assert result.exit_code == 2
    [line] = [ln for ln in result.stderr.splitlines() if ln.startswith("gpu-audit: error:")]
    assert line.endswith(f"{job}: a skypilot job config, not an inventory: judge it with "
                         f"`gpu-audit check {job}`")  # fmt: skip
