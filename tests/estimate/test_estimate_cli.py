"""`gpu-audit estimate` end to end: formats, exit codes, one-line errors, no cloud SDK imported."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpu_audit.cli.main import main
from gpu_audit.report import REPORTERS
from tests.conftest import FIXTURES

JOBS = sorted(str(p) for p in (FIXTURES / "estimate").iterdir())


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("fmt", ["table", "text", "json", "markdown"])
def test_job_files_in_every_format_exit_1_over_budget(fmt: str) -> None:
    code, out, _ = run("estimate", *JOBS, "--format", fmt)
    assert code == 1  # llm-finetune: $329.36 a run against a $300 budget
    assert "$329.36" in out or '"run_usd": 329.36' in out


def test_json_names_as_of_and_source_of_every_rate() -> None:
    _, out, _ = run("estimate", *JOBS, "--format", "json", "--hours", "3")
    jobs = {j["job"]: j for j in json.loads(out)["jobs"]}
    assert jobs["h100-sweep"]["on_demand"]["run_usd"] == 165.12  # 8 × 55.04/8 × 3 h
    for job in jobs.values():
        for rate in (job["on_demand"], job["spot"]):
            assert rate["as_of"] and rate["source"] and rate["instance_type"]


def test_option_table_for_a_gpu_request() -> None:
    code, out, _ = run("estimate", "--gpu", "A100-80GB:8", "--hours", "12", "--format", "json")
    assert code == 0
    rows = json.loads(out)["options"]
    types = {(r["instance_type"], r["capacity"]) for r in rows}
    for itype in ("p4de.24xlarge", "a2-ultragpu-8g", "Standard_ND96amsr_A100_v4"):
        assert {(itype, "on-demand"), (itype, "spot")} <= types


def test_instance_type_request_with_nodes_and_cloud() -> None:
    code, out, _ = run(
        "estimate", "--instance-type", "p4d.24xlarge", "--hours", "12", "--nodes", "2",
        "--cloud", "aws", "--max-usd", "200", "--format", "text",
    )  # fmt: skip
    assert code == 0
    assert "p4d.24xlarge us-east-1 spot: $10.19/h, run $122.24" in out  # 5.0933 × 2 × 12
    assert "OVER" in out and " ok" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "nothing to estimate"),
        (("--gpu", "A100:eight", "--hours", "1"), "whole number"),
        (("--gpu", "A100:8", "--instance-type", "p4d.24xlarge", "--hours", "1"), "not both"),
        (("--instance-type", "m5.large", "--hours", "1"), "not in the catalog"),
        (("--gpu", "A100:8", "--hours", "-1"), "positive"),
        # issue 38.12: a did-you-mean for instance types and GPU requests
        (("--instance-type", "p5.48xl", "--hours", "1"), "(did you mean 'p5.48xlarge'?)"),
        (("--instance-type", "p4d.24xlrage", "--hours", "1"), "(did you mean 'p4d.24xlarge'?)"),
        (("--gpu", "H100x8", "--hours", "1"), "unknown GPU 'H100x8' (did you mean 'H100:8'?)"),
        (("--gpu", "H100 × 8", "--hours", "1"), "(did you mean 'H100:8'?)"),
    ],
)
def test_bad_requests_are_one_line_errors(args: tuple[str, ...], message: str) -> None:
    code, _, err = run("estimate", *args)
    assert code == 2
    assert message in err and len(err.strip().splitlines()) == 1


def test_a_request_without_hours_prints_hourly_rates() -> None:
    code, out, err = run("estimate", "--gpu", "H100:8", "--format", "text")
    assert code == 0, err
    title, first, *_ = out.splitlines()
    assert "(hourly rates: give --hours to price a run)" in title and "cheapest hour first" in title
    assert "Other GPUs with at least the memory asked for are included" in title
    assert "/h (" in first and "run" not in first


def test_an_instance_type_comes_first_and_substitutes_say_so() -> None:
    code, out, _ = run(
        "estimate", "--instance-type", "g5.xlarge", "--hours", "10", "--format", "text"
    )
    assert code == 0
    lines = out.splitlines()[1:]
    assert "g5.xlarge first, then substitutes" in out.splitlines()[0]
    asked = [line for line in lines if line.startswith("g5.xlarge ")]
    assert asked and lines[: len(asked)] == asked  # every g5.xlarge row before any other
    others = [line for line in lines[len(asked) :] if " spot: " in line or " on-demand: " in line]
    assert others and all("(substitute)" in line.split(":")[0] for line in others)


def test_an_unreadable_file_exits_2_and_the_rest_is_estimated() -> None:
    code, out, err = run("estimate", "missing.yaml", JOBS[0], "--format", "text")
    assert code == 2
    assert "missing.yaml" in err and "llm-finetune" in out


PROBE = """
import atexit, json, sys
atexit.register(lambda: print("MODULES=" + json.dumps(sorted(sys.modules)), file=sys.stderr))
from gpu_audit.cli.main import main
sys.argv = ["gpu-audit", "estimate", "--format", "json", *sys.argv[1:]]
main()
"""


def test_estimate_imports_no_cloud_sdk() -> None:
    run_ = subprocess.run(
        [sys.executable, "-c", PROBE, *JOBS], capture_output=True, text=True, timeout=120
    )
    assert run_.returncode == 1, run_.stderr
    line = next(ln for ln in run_.stderr.splitlines() if ln.startswith("MODULES="))
    modules = json.loads(line[len("MODULES=") :])
    bad = ("boto3", "botocore", "google.cloud", "google.api_core", "grpc")
    assert not [m for m in modules if any(m == b or m.startswith(b + ".") for b in bad)]
    assert "gpu_audit.estimate.compute" in modules


def test_check_fails_the_pack_budget_rule_for_a_job_over_its_budget() -> None:
    over = str(FIXTURES / "estimate" / "finetune-over-budget.json")
    code, out, _ = run("check", over, "--format", "json")
    assert code == 1
    findings = [f for f in json.loads(out)["findings"] if f["rule_id"] == "run-within-budget"]
    assert len(findings) == 1
    assert "329.36" in findings[0]["actual"] and "300" in findings[0]["actual"]
    within = str(FIXTURES / "estimate" / "tuning-spot.json")  # no budget: out of scope
    _, out, _ = run("check", within, "--format", "json")
    assert not [f for f in json.loads(out)["findings"] if f["rule_id"] == "run-within-budget"]


def test_catalog_lookup_of_a_gpu_names_the_instance_its_prices_are_of() -> None:
    """Issue 12.6: the per-GPU row is p4d.24xlarge's price / 8, spot included."""
    code, out, _ = run("catalog", "lookup", "nvidia-tesla-a100")
    assert code == 0
    row = next(line for line in out.splitlines() if line.startswith("nvidia-tesla-a100"))
    assert "(p4d.24xlarge per GPU)" in row
    assert "$2.74" in row and "$0.6367" in row  # 21.957642 / 8 and 5.0933 / 8


def test_output_never_replaces_a_job_file(tmp_path: Path) -> None:
    job = tmp_path / "job.json"
    job.write_text((FIXTURES / "estimate" / "tuning-spot.json").read_text())
    before = job.read_text()
    code, _, err = run("estimate", str(job), "-o", str(job))
    assert code == 2 and "input of this run" in err and job.read_text() == before
    written = tmp_path / "estimate.md"
    code, _, _ = run("estimate", str(job), "-o", str(written))
    assert code == 0 and written.read_text().startswith("| job |")  # format from the extension


@pytest.mark.parametrize("fmt", list(REPORTERS))
def test_job_findings_state_per_run_savings_in_every_format(fmt: str) -> None:
    """(27.44705 - 5.8394) $/h × 12 h = $259.2918, less the expected lost work with no checkpoint
    interval (docs/spot.md): 12 × 0.00006849 (p4de us-east-1, `<5%`) × (12/2 + 5/60) × 5.8394 =
    $0.0292: $259.26 per run; never a monthly figure for a job."""
    over = str(FIXTURES / "estimate" / "finetune-over-budget.json")
    _, out, _ = run("check", over, "--format", fmt)
    assert "259.26" in out
    if fmt == "json":
        data = json.loads(out)
        [spot] = [f for f in data["findings"] if f["rule_id"] == "spot-for-training"]
        assert (spot["saving_usd"], spot["saving_unit"], spot["monthly_savings_usd"]) == (
            259.26,
            "run",
            None,
        )
        assert data["summary"]["monthly_savings_usd"] is None  # files run nothing: no month
        assert data["summary"]["run_savings_usd"] == 259.26
    elif fmt == "sarif":
        assert '"savingUnit": "run"' in out
    elif fmt == "csv":
        assert ",259.26,run," in out
    else:
        assert "per run" in out or "/run" in out
        assert "15,774" not in out  # the old per-month figure for a 12 h job


def test_an_error_line_never_shows_url_secrets() -> None:
    code, _, err = run("estimate", "https://user:pw@example.com/job.yaml?sig=abc")
    assert code == 2
    assert "pw@" not in err and "sig=abc" not in err


def test_b200_options_include_a4_and_h200_names_the_unpriced_azure_type() -> None:
    code, out, _ = run("estimate", "--gpu", "B200:8", "--hours", "10", "--format", "json")
    assert code == 0
    rows = {(r["instance_type"], r["region"], r["capacity"]): r for r in json.loads(out)["options"]}
    a4 = rows[("a4-highgpu-8g", "us-central1", "on-demand")]
    assert a4["run_usd"] == 1288.8  # 8 slices × 16.11 × 10 h
    assert rows[("a4-highgpu-8g", "us-central1", "spot")]["run_usd"] == 396.34  # 39.6336 × 10
    _, text, _ = run("estimate", "--gpu", "H200:8", "--hours", "1", "--format", "text")
    assert "Not priced by the catalog: Standard_ND96isr_H200_v5." in text


@pytest.mark.parametrize("fmt", ["table", "text", "json", "markdown"])
def test_a_budget_is_never_ok_for_a_run_with_no_end(fmt: str) -> None:
    """Issue 38.1: a budget and no runtime cap is `not evaluated`, as `check` leaves
    run-within-budget, and the budget gate fails with one line saying why."""
    no_cap = str(FIXTURES / "estimate" / "skypilot-no-cap.yaml")
    code, out, err = run("estimate", no_cap, "--format", fmt)
    assert code == 1
    assert "not evaluated" in out and " ok" not in out
    if fmt == "json":
        [job] = json.loads(out)["jobs"]
        assert (job["budget_state"], job["over_budget"]) == ("not evaluated", False)
    [line] = err.strip().splitlines()
    assert "skypilot-no-cap.yaml:" in line and "h100-sweep" in line
    assert "budget $1,000.00" in line and "no runtime cap" in line
    _, json_out, _ = run("check", no_cap, "--format", "json")
    skipped = [
        n for n in json.loads(json_out)["not_evaluated"] if n["rule_id"] == "run-within-budget"
    ]
    assert skipped  # the same verdict as check's
    code, out, err = run("estimate", no_cap, "--hours", "1", "--format", "text")
    assert code == 0 and "budget: $1,000.00 ok" in out and not err  # 8 × 6.88 × 1 h = $55.04


def test_max_usd_without_hours_marks_no_option_ok() -> None:
    code, out, err = run("estimate", "--gpu", "H100:8", "--max-usd", "300", "--format", "text")
    assert code == 0, err  # options are choices, not a gate: the footer warns
    rows = [line for line in out.splitlines() if "/h (" in line]
    assert rows and all(line.endswith(" not evaluated") for line in rows)
    assert "Budget $300.00 not evaluated: without --hours a run has no end" in out
    _, out, _ = run("estimate", "--gpu", "H100:8", "--max-usd", "300", "--hours", "1")
    assert " ok" in out and "not evaluated" not in out


def test_at_80_columns_the_budget_column_a_flag_asked_for_stays(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 38.4: --max-usd's column, and a declared budget's verdict, are never dropped."""
    monkeypatch.setenv("COLUMNS", "80")
    _, out, _ = run(
        "estimate", "--gpu", "A100-80GB:8", "--hours", "12", "--max-usd", "300", "--format", "table"
    )
    lines = out.splitlines()
    head = next(i for i, ln in enumerate(lines) if ln.startswith("instance type"))
    assert lines[head].split()[-1] == "budget"
    assert all(len(ln) <= 80 for ln in lines)
    rows = lines[head + 2 : head + 6]
    assert all(r.endswith((" ok", " OVER")) and "…" not in r.split()[0] for r in rows)
    _, out, _ = run("estimate", *JOBS, "--format", "table")
    table = out.split("\n\n")[0].splitlines()
    assert table[0].split()[-1] == "budget" and all(len(ln) <= 80 for ln in table)
    assert any(ln.endswith("$300.00 OVER") for ln in table)
    assert any(ln.endswith("$1,000.00 not evaluated") for ln in table)


def test_amounts_rounded_to_the_cent_keep_two_decimals() -> None:
    """Issue 38.12: a column of runs and budgets reads alike: `$1,000.00`, `$0.99`, never
    `$1,000` beside `$300.00` or a cent-rounded run as `$0.9900`."""
    code, out, _ = run("estimate", *JOBS, "--format", "text")
    assert code == 1
    assert "budget: $300.00 OVER" in out and "budget: $1,000.00 not evaluated" in out
    assert "spot: $0.56/h, one run $1.39" in out  # a rate and a run alike: to the cent
    assert "$0.9900" not in out
