"""No silent fallback: unknown regions, unknown rules in ignore comments, output extensions no
format writes, where a report went, and a check of nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpu_audit.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "fixtures" / "inventory" / "demo.yaml"


def _run(*args: object) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, [str(a) for a in args])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize(
    ("name", "region", "hint"),
    [
        ("p4d.24xlarge", "mars-1", "the catalog prices it in "),
        ("p4d.24xlarge", "us-eest-1", "did you mean 'us-east-1'"),
        ("a2-highgpu-1g", "europe-wset4", "did you mean 'europe-west4'"),
        ("H100", "mars-1", "not a region of aws or gcp or azure"),
    ],
)
def test_lookup_refuses_an_unknown_region(name: str, region: str, hint: str) -> None:
    code, out, err = _run("catalog", "lookup", name, "--region", region)
    assert code == 2 and out == ""
    assert err.startswith(f"gpu-audit: error: --region: '{region}' is not a region of ")
    assert hint in err and err.count("\n") == 1


@pytest.mark.parametrize(
    ("name", "region"), [("p4d.24xlarge", "eu-north-1"), ("Standard_NC24ads_A100_v4", "eastus2")]
)
def test_a_real_region_the_catalog_does_not_price_is_priced_at_the_reference(
    name: str, region: str
) -> None:
    code, out, _ = _run("catalog", "lookup", name, "--region", region)
    assert code == 0 and "(reference)" in out


def test_an_ignore_comment_naming_an_unknown_rule_warns_located(tmp_path: Path) -> None:
    job = tmp_path / "sky.yaml"
    job.write_text(
        "name: train\nresources:\n  accelerators: H100:8  # gpu-audit: ignore[gpu-clas-cap] ok\n"
        "  use_spot: false\nrun: python train.py\n"
    )
    code, _, err = _run("check", job, "--format", "text", "--fail-on", "none")
    assert code == 0
    assert (
        f"gpu-audit: warning: {job}:3: ignore comment names unknown rule 'gpu-clas-cap' "
        "(did you mean 'gpu-class-cap'?); it suppresses nothing"
    ) in err
    job.write_text(job.read_text().replace("gpu-clas-cap", "gpu-class-cap"))
    assert "warning" not in _run("check", job, "--format", "text", "--fail-on", "none")[2]


def test_an_extension_no_format_writes_is_refused_before_the_scan(tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    code, stdout, err = _run("scan", "--inventory", DEMO, "-o", out)
    assert code == 2 and not out.exists() and stdout == ""
    assert err.startswith(f"gpu-audit: error: {out}: no format writes '.html' files")


@pytest.mark.parametrize("name", ["report.out", "scan.log", "r.table", "r.text", "r.htm"])
def test_with_a_format_given_any_file_name_is_the_users(tmp_path: Path, name: str) -> None:
    """Issue 38.5: `--format json -o report.out` writes JSON there."""
    out = tmp_path / name
    code, _, err = _run(
        "scan", "--inventory", DEMO, "--format", "json", "-o", out, "--fail-on", "none"
    )
    assert code == 0 and json.loads(out.read_text())["version"] == 3, err
    code, _, err = _run("scan", "--inventory", DEMO, "--report", f"csv={out}", "--fail-on", "none")
    assert code == 0 and out.read_text().startswith("rule_id,"), err


def test_an_extension_that_names_another_format_is_refused_and_every_file_is_said(
    tmp_path: Path,
) -> None:
    out = tmp_path / "r.json"
    code, stdout, err = _run("scan", "--inventory", DEMO, "--format", "markdown", "-o", out,
                             "--fail-on", "none")  # fmt: skip
    assert code == 2 and stdout == "" and not out.exists()
    assert err == (f"gpu-audit: error: {out}: the '.json' extension names the json format, not "
                   "markdown: give --format json, or a name that says markdown\n")  # fmt: skip
    code, _, err = _run("scan", "--inventory", DEMO, "--format", "markdown", "-o", tmp_path / "r.md",
                        "--fail-on", "none")  # fmt: skip
    assert f"gpu-audit: wrote the markdown report to {tmp_path / 'r.md'}\n" in err
    code, _, err = _run("scan", "--inventory", DEMO, "-o", tmp_path / "r.md", "-q",
                        "--fail-on", "none")  # fmt: skip
    assert code == 0 and err == ""
    code, _, err = _run("scan", "--inventory", DEMO, "-o", tmp_path / "r.txt", "--format", "table",
                        "--fail-on", "none")  # fmt: skip
    assert "warning" not in err  # a table is text


def test_check_with_no_files_says_so(tmp_path: Path) -> None:
    code, _, err = _run("check")
    assert code == 0 and "gpu-audit: check: no files given: nothing was checked" in err
    code, _, err = _run("check", tmp_path)
    assert "no job file found in the paths given: nothing was checked" in err


def test_estimate_output_is_checked_and_said(tmp_path: Path) -> None:
    code, _, err = _run("estimate", "--gpu", "A100:8", "-o", tmp_path / "e.html")
    assert code == 2 and "no format writes '.html' files" in err
    assert not (tmp_path / "e.html").exists()
    code, _, err = _run("estimate", "--gpu", "A100:8", "-o", tmp_path / "e.md")
    assert code == 0 and f"gpu-audit: wrote the markdown estimate to {tmp_path / 'e.md'}" in err
