"""The bill joined to the audit: billed resources no scan saw, what became of the last audit's
findings, and the billed rates as a price file that `estimate --prices` takes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from gpu_audit.cli.main import main
from tests.billing.layout_aws import CLUSTER_IDS
from tests.billing.quarter import Quarter, build_quarter

pytest.importorskip("duckdb")

P4D = "i-04d7a1b2c3d4e5f60"


@pytest.fixture(scope="module")
def quarter(tmp_path_factory: pytest.TempPathFactory) -> Quarter:
    return build_quarter(tmp_path_factory.mktemp("bill"))


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def _inventory(path: Path, resources: list[dict[str, object]]) -> str:
    path.write_text(yaml.safe_dump({"version": 1, "resources": resources}))
    return str(path)


def _instance(rid: str, itype: str, **extra: object) -> dict[str, object]:
    return {"provider": "aws", "id": rid, "account": "111122223333", "region": "us-east-1",
            "instance_type": itype, "state": "running", "capacity": "on-demand", **extra}  # fmt: skip


@pytest.fixture(scope="module")
def history(quarter: Quarter, tmp_path_factory: pytest.TempPathFactory) -> str:
    """Two scheduled scans: one in July saw the p4d only; the last, in August, saw the p4d
    (untagged) and one instance of the forgotten cluster, and a GCP VM the bill never names."""
    folder = tmp_path_factory.mktemp("history")
    db = str(folder / "audits.db")
    july = _inventory(folder / "july.yaml", [_instance(P4D, "p4d.24xlarge")])
    august = _inventory(
        folder / "august.yaml",
        [
            _instance(P4D, "p4d.24xlarge"),
            _instance(CLUSTER_IDS[0], "g5.12xlarge"),
            {"provider": "gcp", "id": "vm-not-billed", "account": "acme-ml-prod",
             "region": "us-central1", "instance_type": "a2-highgpu-1g", "state": "running"},
        ],
    )  # fmt: skip
    for inventory, now in ((july, "2026-07-10T00:00:00Z"), (august, "2026-08-10T00:00:00Z")):
        code, _, err = invoke("scan", "--inventory", inventory, "--history", db, "--now", now,
                              "--fail-on", "none", "-q")  # fmt: skip
        assert code == 0, err
    return db


@pytest.fixture(scope="module")
def joined(quarter: Quarter, history: str) -> dict[str, object]:
    code, out, err = invoke("billing", str(quarter.root / "aws"), str(quarter.root / "gcp"),
                            "--period", "2026-Q3", "--history", history, "--format", "json")  # fmt: skip
    assert code == 0, err
    return json.loads(out)["coverage"]


def test_billed_resources_no_scan_saw_are_named_as_a_coverage_gap(
    quarter: Quarter, joined: dict
) -> None:  # type: ignore[type-arg]
    unseen = {item["resource_id"] for item in joined["unseen"]}
    assert set(CLUSTER_IDS[1:]) <= unseen  # the cluster ran and stopped between the scans
    assert CLUSTER_IDS[0] not in unseen and P4D not in unseen
    assert not any(item.endswith(P4D) for item in unseen)  # an ARN and a bare id are one instance
    billed = {
        r.resource_id
        for r in quarter.in_period()
        if r.cloud in ("aws", "gcp") and r.kind == "gpu" and r.resource_id
    }
    assert unseen == {rid for rid in billed if not rid.endswith((P4D, CLUSTER_IDS[0]))}
    assert joined["matched"] == 2 and joined["audits"] == 2
    assert joined["unseen_usd"] > 0


def test_the_last_audits_findings_are_still_billing_stopped_or_not_in_the_bill(
    joined: dict,
) -> None:  # type: ignore[type-arg]
    fates = {(f["resource_id"], f["rule_id"]): f["status"] for f in joined["findings"]}
    assert fates[(P4D, "cost-allocation-tags")] == "still billing"
    assert fates[(CLUSTER_IDS[0], "cost-allocation-tags")] == "billing stopped"
    assert fates[("vm-not-billed", "cost-allocation-tags")] == "not in the bill"


def test_the_markdown_names_the_coverage_gap(quarter: Quarter, history: str) -> None:
    code, out, _ = invoke("billing", str(quarter.root / "aws"), "--period", "2026-Q3",
                          "--history", history, "--format", "markdown")  # fmt: skip
    assert code == 0
    assert "a coverage gap in the scheduled scan" in out and CLUSTER_IDS[1] in out


def test_a_missing_history_is_created_and_a_missing_folder_is_one_line(
    quarter: Quarter, tmp_path: Path
) -> None:
    """`billing --history` keeps what it read there (issue 45), so a new file is created;
    a history in a folder that does not exist is refused."""
    code, _, err = invoke("billing", str(quarter.root / "aws"), "--period", "2026-Q3",
                          "--history", str(tmp_path / "none" / "none.db"))  # fmt: skip
    assert code == 2 and "no such directory" in err and len(err.strip().splitlines()) == 1
    code, out, err = invoke("billing", str(quarter.root / "aws"), "--period", "2026-Q3",
                            "--history", str(tmp_path / "new.db"), "--format", "json")  # fmt: skip
    assert code == 0, err
    assert json.loads(out)["coverage"]["audits"] == 0 and (tmp_path / "new.db").exists()


def test_billed_rates_feed_estimate_through_prices(quarter: Quarter, tmp_path: Path) -> None:
    prices = tmp_path / "billed.json"
    code, _, err = invoke("billing", str(quarter.root / "aws"), "--period", "2026-Q3",
                          "--write-prices", str(prices), "--format", "json")  # fmt: skip
    assert code == 0, err
    body = json.loads(prices.read_text())
    rows = {(r["type"], r["region"], r["capacity"]): r for r in body["rows"]}
    row = rows[("p4d.24xlarge", "us-east-1", "on-demand")]
    assert row["source"].startswith("billing export 2026-Q3") and row["effective"] == "2026-07-01"
    standard = [r for r in quarter.in_period() if r.cloud == "aws" and r.kind == "gpu"
                and r.instance_type == "p4d.24xlarge" and r.capacity == "on-demand"]  # fmt: skip
    expected = sum(r.effective for r in standard) / sum(r.hours for r in standard)
    assert abs(row["usd_per_hour"] - float(expected)) < 0.0001
    assert ("sagemaker:ml.p4d.24xlarge", "us-east-1", "on-demand") in rows
    assert all(r["capacity"] in ("on-demand", "spot") for r in body["rows"])
    code, out, err = invoke("estimate", "--instance-type", "p4d.24xlarge", "--cloud", "aws",
                            "--hours", "10", "--prices", str(prices), "--format", "json")  # fmt: skip
    assert code == 0, err
    estimate = json.dumps(json.loads(out))
    assert (
        f"{row['usd_per_hour'] * 10:.2f}"[:-1] in estimate or str(row["usd_per_hour"]) in estimate
    )
    assert "billing export 2026-Q3" in estimate


def test_a_report_never_replaces_what_the_run_reads(
    quarter: Quarter, history: str, tmp_path: Path
) -> None:
    aws = quarter.root / "aws"
    manifest = next(aws.rglob("*-Manifest.json"))
    before = manifest.read_bytes()
    cases = [
        ["-o", str(manifest)],  # a file inside an export folder read as a whole
        ["--write-prices", str(aws / "rates.json")],
        ["--history", history, "--format", "json", "-o", history],  # .db names no format
        ["-o", str(tmp_path / "same.json"), "--write-prices", str(tmp_path / "same.json")],
    ]
    for extra in cases:
        code, _, err = invoke("billing", str(aws), "--period", "2026-Q3", *extra)
        assert code == 2 and len(err.strip().splitlines()) == 1, (extra, err)
        assert "cannot write report" in err or "name the same file" in err
    assert manifest.read_bytes() == before and not (aws / "rates.json").exists()
    assert not (tmp_path / "same.json").exists()
