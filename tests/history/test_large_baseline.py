"""A fleet's saved report works as a baseline at any size (it was refused over 5 MB)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.history.conftest import DATES, POLICY, instance, run


def test_a_2000_instance_report_is_a_baseline(tmp_path: Path) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY)
    fleet = []
    for index in range(2000):
        item = instance(f"i-{index:05}", workload="training", capacity="on-demand",
                        owner=index % 2 == 0, team=f"team-{index % 40}")  # fmt: skip
        item["tags"]["description"] = "a long tag value that real fleets carry " * 12
        fleet.append(item)
    inventory = tmp_path / "fleet.json"
    inventory.write_text(json.dumps({"version": 1, "captured_at": DATES[0], "resources": fleet}))
    report = tmp_path / "q1.json"
    code, _, err = run("scan", "--inventory", inventory, "--policy", policy, "-o", report,
                       "--fail-on", "none", "--now", DATES[0])  # fmt: skip
    assert code == 0, err
    assert report.stat().st_size > 5 * 1024 * 1024
    code, out, err = run("scan", "--inventory", inventory, "--policy", policy, "--baseline",
                         report, "--format", "json", "--fail-on", "none", "--now", DATES[1])  # fmt: skip
    assert code == 0, err
    since = json.loads(out)["summary"]["since"]
    assert (since["new"], since["persisting"], since["resolved"]) == (0, 3000, 0)
