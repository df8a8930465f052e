"""Hardware a cloud no longer sells is not a saving (issue 48): EC2 P3 and G3, dated by AWS's
e-mails and corroborated by the EC2 API's and the Deep Learning AMI's absence of them."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from gpu_audit.cli import main

SKY = """\
name: train-v100
resources:
  cloud: aws
  instance_type: TYPE
run: |
  torchrun --nproc_per_node 4 train.py --epochs 10
"""
INVENTORY = """\
version: 1
captured_at: '2026-12-04T06:00:00Z'
resources:
- provider: aws
  id: i-0p3
  name: legacy-train
  account: '111122223333'
  region: us-east-1
  instance_type: TYPE
  state: running
  capacity: on-demand
  workload: training
  tags: {team: vision, project: det, owner: eve@example.com}
"""


def _json(*args: str) -> dict[str, object]:
    done = CliRunner().invoke(main, list(args))
    assert done.exit_code in (0, 1), done.output
    result: dict[str, object] = json.loads(done.output)
    return result


def test_lookup_says_p3_is_no_longer_offered_with_its_source_and_date() -> None:
    data = _json("catalog", "lookup", "--format", "json", "p3.2xlarge", "g4dn.xlarge")
    p3, g4dn = data["items"]  # type: ignore[misc]
    assert p3["no_longer_offered"]["since"] == "2025-12-20"
    assert "kubernetes-on-aws#8685" in p3["no_longer_offered"]["source"]
    assert p3["spot_usd"] is None and p3["on_demand_usd"] == 3.06
    assert g4dn["no_longer_offered"] is None and g4dn["spot_usd"] is not None
    text = CliRunner().invoke(main, ["catalog", "lookup", "g3.4xlarge"]).output
    assert "g3.4xlarge: no longer offered: Amazon EC2 G3 (M60), retired 2025-10-31" in text


def test_a_p3_job_gets_retired_gpu_and_no_spot_saving(tmp_path: Path) -> None:
    path = tmp_path / "train.yaml"
    path.write_text(SKY.replace("TYPE", "p3.8xlarge"), encoding="utf-8")
    findings = _json("check", "--format", "json", str(path))["findings"]
    assert [f["rule_id"] for f in findings] == ["retired-gpu"]  # type: ignore[index]
    assert "Amazon EC2 P3 (V100), retired 2025-12-20" in findings[0]["actual"]  # type: ignore[index]
    assert all(f["saving_usd"] is None for f in findings)  # type: ignore[union-attr]
    (job,) = _json("estimate", "--format", "json", str(path))["jobs"]  # type: ignore[misc]
    assert job["on_demand"] is None and job["spot"] is None
    # a current type in the same file is told to use spot, with its saving
    path.write_text(SKY.replace("TYPE", "g5.12xlarge"), encoding="utf-8")
    findings = _json("check", "--format", "json", str(path))["findings"]
    spot = [f for f in findings if f["rule_id"] == "spot-for-training"]  # type: ignore[index]
    assert spot and spot[0]["saving_usd"] > 0


def test_a_running_p3_instance_is_priced_but_no_spot_saving_is(tmp_path: Path) -> None:
    inventory = tmp_path / "fleet.yaml"
    for kind, advised in (("p3.8xlarge", False), ("g4dn.12xlarge", True)):
        inventory.write_text(INVENTORY.replace("TYPE", kind), encoding="utf-8")
        report = _json(
            "scan", "--inventory", str(inventory), "--format", "json", "--fail-on", "none"
        )
        rules = {f["rule_id"] for f in report["findings"]}  # type: ignore[union-attr]
        assert ("spot-for-training" in rules) is advised, kind
        (resource,) = report["resources"]  # type: ignore[misc]
        assert resource["monthly_cost_usd"] > 0  # what it still bills is priced
