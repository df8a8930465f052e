"""`scan --shard K/N` and `merge` on a moto organisation of member accounts reached by AssumeRole."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from gpu_audit.cli import main
from gpu_audit.collectors.workitems import shard_of

Fleet = Any  # conftest.Fleet
REGIONS = ("eu-west-1", "us-east-1", "us-west-2", "ap-northeast-1")
NOW = "2026-11-25T12:00:00Z"
MEMBERS = 11  # with the management account, a dozen accounts × 4 regions = 48 work items


def organisation(fleet: Fleet) -> list[str]:
    """A management account and MEMBERS member accounts, GPU instances in a few (account, region)."""
    org = fleet.client("organizations", "us-east-1")
    org.create_organization(FeatureSet="ALL")
    members = []
    for n in range(MEMBERS):
        status = org.create_account(AccountName=f"team-{n}", Email=f"team-{n}@example.com")
        members.append(status["CreateAccountStatus"]["AccountId"])
    for n, account in enumerate(members[:8]):
        builder = fleet.assume(f"arn:aws:iam::{account}:role/audit")
        region = REGIONS[n % len(REGIONS)]
        builder.launch(region, "p4d.24xlarge", tags={"workload": "training"})
        builder.launch(REGIONS[(n + 1) % 4], "g5.xlarge", spot=True, tags={"workload": "inference"})
    fleet.launch("us-east-1", "g6.xlarge", tags={"team": "platform"})  # the management account
    return members


def scan(tmp: Path, name: str, *extra: str, env: dict[str, str] | None = None) -> Path:
    out = tmp / name
    args = ["scan", "--provider", "aws", "--org-role", "audit", "--service", "ec2"]
    args += [arg for region in REGIONS for arg in ("--region", region)]
    args += ["--now", NOW, "--fail-on", "none", "-o", str(out), *extra]
    result = CliRunner(env=env).invoke(main, args)
    assert result.exit_code == 0, result.output
    return out


def merge(*args: str) -> Any:
    return CliRunner().invoke(main, ["merge", "--fail-on", "none", *args])


def findings(report: dict[str, Any]) -> list[tuple[str, str]]:
    resources = report["resources"]  # version 3: a finding names its resource by index
    return sorted((f["rule_id"], resources[f["resource"]]["id"]) for f in report["findings"])


def ids(report: dict[str, Any]) -> list[str]:
    return sorted(r["id"] for r in report["resources"])


def same_audit(merged: dict[str, Any], whole: dict[str, Any]) -> None:
    assert findings(merged) == findings(whole)
    assert ids(merged) == ids(whole)
    since = merged["summary"].pop("since")  # with --history: compared with the last audit
    assert since is None or (since["new"], since["persisting"]) == (len(merged["findings"]), 0)
    assert merged["summary"] == {k: v for k, v in whole["summary"].items() if k != "since"}
    assert merged["coverage_gaps"] == whole["coverage_gaps"] == []
    assert merged["scope"]["accounts"] == whole["scope"]["accounts"]
    assert merged["scope"]["regions"] == whole["scope"]["regions"]


def test_merged_shards_equal_the_unsharded_scan(
    aws_fleet: Fleet, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    organisation(aws_fleet)
    whole = json.loads(scan(tmp_path, "whole.json").read_text())
    shards = [scan(tmp_path, f"shard-{k}.json", "--shard", f"{k}/3") for k in (1, 2, 3)]
    reports = [json.loads(p.read_text()) for p in shards]

    stamps = [r["scope"]["shard"] for r in reports]
    universe = stamps[0]["universe"]
    assert len(universe) == 12 * 4 and all(key.startswith("aws:") for key in universe)
    assert [s["index"] for s in stamps] == [1, 2, 3] and {s["count"] for s in stamps} == {3}
    assert len({(s["universe_digest"], s["policy_digest"], s["price_basis"]) for s in stamps}) == 1
    for k, report in enumerate(reports, start=1):  # each shard scanned only its own items
        for resource in report["resources"]:
            key = f"aws:{resource['account']}:{resource['region']}"
            assert shard_of(key, 3) == k
    assert sum(len(r["resources"]) for r in reports) == len(whole["resources"]) == 17

    history = tmp_path / "audits.db"
    result = merge(*map(str, shards), "--format", "json", "--history", str(history))
    assert result.exit_code == 0, result.output
    same_audit(json.loads(result.stdout), whole)
    with sqlite3.connect(history) as db:  # merge is the one writer: one audit recorded
        assert db.execute("select count(*) from audits").fetchone() == (1,)

    # The same shards from the engines' index variables (0-based), in any order, twice given once.
    monkeypatch.delenv("JOB_COMPLETION_INDEX", raising=False)
    monkeypatch.delenv("AWS_BATCH_JOB_ARRAY_INDEX", raising=False)
    auto = [
        scan(tmp_path, "auto-1.json", "--shard", "auto/3", env={"JOB_COMPLETION_INDEX": "0"}),
        scan(tmp_path, "auto-2.json", "--shard", "auto/3", env={"AWS_BATCH_JOB_ARRAY_INDEX": "1"}),
        scan(tmp_path, "auto-3.json", "--shard", "auto/3", env={"JOB_COMPLETION_INDEX": "2"}),
    ]
    for mine, theirs in zip(auto, shards, strict=True):
        assert ids(json.loads(mine.read_text())) == ids(json.loads(theirs.read_text()))
    result = merge(*map(str, reversed(auto)), "--format", "json")
    assert result.exit_code == 0, result.output
    same_audit(json.loads(result.stdout), whole)

    # Two of three: partial, exit 3, a gap naming the missing shard and its work items.
    result = merge(str(shards[0]), str(shards[2]), "--format", "json")
    assert result.exit_code == 3, result.output
    report = json.loads(result.stdout)
    assert report["partial"] is True
    (gap,) = report["coverage_gaps"]
    missing = [key for key in universe if shard_of(key, 3) == 2]
    assert (gap["provider"], gap["scope"], gap["error"]) == ("aws", "shard 2/3", "ShardMissing")
    first = ", ".join(missing[:5])  # the first few named, the rest counted
    more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
    assert gap["message"].endswith(f"{len(missing)} work items not read: {first}{more}")
    assert "incomplete: aws shard 2/3: ShardMissing: shard 2/3: report missing" in result.stderr
    assert len(report["resources"]) == len(whole["resources"]) - len(reports[1]["resources"])

    # Markdown from the same shards (any format), and a text report names the gap too.
    result = merge(*map(str, shards), "--format", "markdown")
    assert result.exit_code == 0 and "# " in result.stdout


def test_merge_refuses_shards_of_other_runs(aws_fleet: Fleet, tmp_path: Path) -> None:
    aws_fleet.launch("us-east-1", "g5.xlarge")
    base = ["--run-id", "nightly-1"]
    one = scan(tmp_path, "one.json", "--shard", "1/2", *base)
    two = scan(tmp_path, "two.json", "--shard", "2/2", *base)
    other_run = scan(tmp_path, "other-run.json", "--shard", "2/2", "--run-id", "nightly-2")
    three = scan(tmp_path, "three.json", "--shard", "2/3", *base)
    policy = tmp_path / "team.yaml"
    policy.write_text("version: 1\nextends: runbook\nrules: []\n")
    other_policy = scan(tmp_path, "policy.json", "--shard", "2/2", *base, "--policy", str(policy))

    cases = [
        (other_run, "run nightly-2 vs nightly-1"),
        (three, "shard count 3 vs 2"),
        (other_policy, "policies sha256:"),
    ]
    for stranger, what in cases:
        result = merge(str(one), str(stranger))
        assert result.exit_code == 2, result.output
        line = result.stderr.strip()
        assert "\n" not in line and what in line, line
        assert line.startswith(f"gpu-audit: error: merge: {stranger} and {one} are shards of")
    result = merge(str(one), str(one))
    assert result.exit_code == 2 and "shard 1 given twice" in result.stderr
    result = merge(str(one), str(two), "--policy", str(policy))  # judged with other rules
    assert result.exit_code == 2 and "pass the scan's --policy files" in result.stderr
    whole = scan(tmp_path, "whole.json")
    result = merge(str(whole))
    assert result.exit_code == 2 and "not a shard report (no scope.shard)" in result.stderr


def test_shard_refuses_history_and_inventories(aws_fleet: Fleet, tmp_path: Path) -> None:
    db = str(tmp_path / "a.db")
    args = ["scan", "--provider", "aws", "--region", "us-east-1", "--shard", "1/2"]
    result = CliRunner().invoke(main, [*args, "--history", db])
    assert result.exit_code == 2 and "only `gpu-audit merge --history DB`" in result.stderr
    result = CliRunner(env={"JOB_COMPLETION_INDEX": "", "AWS_BATCH_JOB_ARRAY_INDEX": ""}).invoke(
        main, ["scan", "--provider", "aws", "--shard", "auto/2"]
    )
    assert result.exit_code == 2 and "neither is set" in result.stderr
    result = CliRunner().invoke(main, ["scan", "--provider", "aws", "--run-id", "x"])
    assert result.exit_code == 2 and "--run-id names a sharded run" in result.stderr
