"""The command line end to end: exit codes 0/1/2/3, one-line errors, outputs, extras."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpu_audit.cli.main import main
from tests.conftest import FIXTURES

DEMO = str(FIXTURES / "inventory" / "demo.yaml")
DEMO_POLICY = str(FIXTURES / "inventory" / "demo-policy.yaml")


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def test_demo_scan_exits_1_on_high_findings_and_0_with_fail_on_none() -> None:
    code, out, _ = run("scan", "--inventory", DEMO, "--policy", DEMO_POLICY, "--format", "table")
    assert code == 1
    assert "HIGH" in out and "findings" in out.splitlines()[-1]
    code, out, _ = run("scan", "--inventory", DEMO, "--policy", DEMO_POLICY)  # not a TTY: text
    assert code == 1
    first = out.splitlines()[0]
    assert first.startswith("aws/111122223333/us-east-1/") and ": high " in first
    code, _, _ = run("scan", "--inventory", DEMO, "--policy", DEMO_POLICY, "--fail-on", "none")
    assert code == 0


def test_demo_json_is_judged_as_of_capture_time() -> None:
    code, out, _ = run(
        "scan",
        "--inventory",
        DEMO,
        "--policy",
        DEMO_POLICY,
        "--format",
        "json",
        "--fail-on",
        "critical",
    )
    assert code == 0
    report = json.loads(out)
    assert report["generated_at"] == "2026-11-20T06:00:00Z"
    assert report["summary"]["resources"] == 50
    assert report["summary"]["findings"] == sum(report["summary"]["by_severity"].values())
    assert report["summary"]["waived"] >= 3
    states = {w["state"] for w in report["waivers"]}
    assert states == {"active", "expiring", "expired"}
    assert any(n["missing"] == "utilization.gpu_p95" for n in report["not_evaluated"])


def test_quiet_prints_the_summary_line_only() -> None:
    code, out, _ = run("scan", "--inventory", DEMO, "-q", "--fail-on", "none")
    assert code == 0
    assert len(out.strip().splitlines()) == 1 and "GPU spend $" in out


def test_several_reports_from_one_scan(tmp_path: Path) -> None:
    out_json, out_table = tmp_path / "r.json", tmp_path / "r.txt"
    code, stdout, _ = run(
        "scan",
        "--inventory",
        DEMO,
        "--fail-on",
        "none",
        "--report",
        f"json={out_json}",
        "--output",
        str(out_table),
    )
    assert code == 0 and stdout == ""
    assert json.loads(out_json.read_text())["version"] == 3
    assert "findings" in out_table.read_text()  # text: --output with no --format, not a TTY
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json", "r.txt"]  # no temp files left


@pytest.mark.parametrize(
    ("policy", "message"),
    [
        (
            "version: 1\nrules:\n  - {id: r, severity: high, require: {capacity: {gtee: 1}}}\n",
            "p.yaml:3: rule 'r': gtee: unknown operator 'gtee'",
        ),
        (
            "version: 1\nrules:\n  - {id: r, severity: hihg, require: {capacity: spot}}\n",
            "p.yaml:3: rule 'r': severity: 'hihg' is not one of",
        ),
        (
            "version: 1\nrules:\n  - {id: r, severity: high, require: {gpu.model: {at-most: X100}}}\n",
            "p.yaml:3: rule 'r': at-most: unknown GPU class 'X100'",
        ),
        (
            "version: 1\nrules:\n  - {id: r, severity: high, require: {capacty: spot}}\n",
            "p.yaml:3: rule 'r': capacty: unknown field 'capacty'",
        ),
    ],
)
def test_bad_policy_exits_2_with_one_located_line(
    tmp_path: Path, policy: str, message: str
) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(policy)
    code, out, err = run("scan", "--inventory", DEMO, "--policy", str(path))
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1
    assert message in err and "Traceback" not in err
    code, _, err = run("policies", "validate", str(path))
    assert code == 2 and message in err


def test_coverage_gap_exits_3_even_with_findings(tmp_path: Path) -> None:
    inventory = tmp_path / "partial.yaml"
    inventory.write_text(
        "captured_at: 2026-11-20T00:00:00Z\n"
        "resources:\n"
        "  - {provider: aws, id: i-1, instance_type: p4d.24xlarge, state: running,\n"
        "     capacity: on-demand, workload: training, region: us-east-1}\n"
        "coverage_gaps:\n"
        "  - {provider: aws, scope: 111122223333/eu-west-1, error: AccessDenied, message: denied}\n"
    )
    code, out, err = run("scan", "--inventory", str(inventory))
    assert code == 3
    assert "incomplete: AccessDenied" in out  # the text report says it; stderr does not again
    assert "AccessDenied" not in err
    code, out, err = run("scan", "--inventory", str(inventory), "--format", "json")
    assert "incomplete: aws 111122223333/eu-west-1: AccessDenied" in err  # JSON: stderr says it


def test_bad_inventory_is_located(tmp_path: Path) -> None:
    inventory = tmp_path / "inv.yaml"
    inventory.write_text("resources:\n  - provider: aws\n    id: i-1\n    capacity: spotty\n")
    code, _, err = run("scan", "--inventory", str(inventory))
    assert code == 2
    assert f"{inventory}:4: resource 'i-1': capacity: 'spotty' is not one of" in err


def test_nothing_to_scan_is_a_usage_error() -> None:
    code, _, err = run("scan")
    assert code == 2 and "nothing to scan" in err


def test_catalog_lookup_and_policies_list() -> None:
    code, out, _ = run("catalog", "lookup", "ml.p4d.24xlarge", "nvidia-h100-80gb")
    assert code == 0 and "A100-40GB" in out and "H100" in out
    code, _, err = run("catalog", "lookup", "x9.mystery")
    assert code == 2 and "x9.mystery: not in the catalog" in err
    code, out, _ = run("policies", "list")
    assert code == 0 and "idle-gpu" in out and "spot-for-training" in out


def test_missing_provider_extra_says_what_to_install() -> None:
    script = (
        "import sys; sys.modules['boto3'] = None\n"
        "from gpu_audit.cli.main import main\n"
        "main(['scan', '--provider', 'aws', '--region', 'us-east-1'])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 2
    assert "pip install 'gpu-audit[aws]'" in done.stderr
    assert "Traceback" not in done.stderr


def test_console_script_version() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "gpu_audit", "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0 and done.stdout.startswith("gpu-audit, version ")


def test_account_without_a_role_template_is_a_usage_error() -> None:
    code, _, err = run(
        "scan", "--provider", "aws", "--region", "us-east-1", "--account", "123456789012"
    )
    assert code == 2
    assert "--account fills the {account} placeholder of a --role-arn template" in err


def test_config_typos_are_located_with_a_suggestion(tmp_path: Path) -> None:
    config = tmp_path / ".gpu-audit.yaml"
    config.write_text("aws:\n  regoins: [us-east-1]\n")
    code, _, err = run("scan", "--inventory", DEMO, "--config", str(config))
    assert code == 2
    assert f"{config}:2: config: aws.regoins: unknown key (did you mean 'regions'?)" in err


def test_a_flag_of_a_provider_not_scanned_is_refused() -> None:
    code, _, err = run("scan", "--inventory", DEMO, "--provider", "aws", "--project", "research")
    assert code == 2
    assert "--project applies to --provider gcp, which this scan does not read" in err


def test_scan_help_lists_every_provider_flag_once() -> None:
    code, out, _ = run("scan", "--help")
    assert code == 0
    for flag in ("--region", "--profile", "--role-arn", "--org-role", "--project", "--window"):
        assert out.count(f"  {flag} ") + out.count(f"  {flag}\n") == 1, flag


def test_an_incomplete_scan_says_so_before_no_open_findings(tmp_path: Path) -> None:
    inventory = tmp_path / "partial.yaml"
    inventory.write_text(
        "captured_at: 2026-11-20T00:00:00Z\n"
        "resources: []\n"
        "coverage_gaps:\n"
        "  - {provider: gcp, scope: project ml-prod, error: PermissionDenied, message: denied}\n"
    )
    for fmt in ("text", "table"):
        code, out, _ = run("scan", "--inventory", str(inventory), "--format", fmt)
        assert code == 3
        first = out.splitlines()[0]
        assert first.startswith("INCOMPLETE SCAN: 1 coverage gap (gcp: 1);"), first
        if "No open findings" in out:
            assert out.index("INCOMPLETE") < out.index("No open findings")


@pytest.mark.parametrize(
    ("name", "starts"),
    [("audit.md", "# "), ("audit.json", "{"), ("audit.sarif", "{"), ("audit.csv", "rule_id")],
)
def test_the_output_extension_chooses_the_format(tmp_path: Path, name: str, starts: str) -> None:
    out = tmp_path / name
    code, _, _ = run("scan", "--inventory", DEMO, "-o", str(out), "--fail-on", "none")
    assert code == 0
    text = out.read_text()
    assert text.startswith(starts), text[:80]
    if name.endswith(".sarif"):
        assert json.loads(text)["version"] == "2.1.0"
    elif name.endswith(".json"):
        assert "findings" in json.loads(text)


def test_an_explicit_format_and_an_extension_that_names_another_are_refused(tmp_path: Path) -> None:
    """Issue 38.5: the refusal stays only where the extension names a different format."""
    out = tmp_path / "audit.md"
    code, _, err = run(
        "scan", "--inventory", DEMO, "-o", str(out), "--format", "json", "--fail-on", "none"
    )
    assert code == 2 and not out.exists() and "names the markdown format, not json" in err
    out = tmp_path / "audit.out"
    run("scan", "--inventory", DEMO, "-o", str(out), "--format", "json", "--fail-on", "none")
    assert json.loads(out.read_text())["findings"]


@pytest.mark.parametrize("group", [[], ["policies"], ["catalog"], ["history"]])
def test_help_lists_commands_without_truncating_them(group: list[str]) -> None:
    code, out, _ = run(*group, "--help")
    assert code == 0
    listing = out.split("Commands:", 1)[1]
    assert "..." not in listing, listing
