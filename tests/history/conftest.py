"""A changing fleet over three quarterly audits, written as saved inventories."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from gpu_audit.cli.main import main

POLICY = """\
version: 1
name: history-test
revision: "1"
rules:
  - id: spot-for-training
    title: Training runs on spot
    severity: high
    targets: [instance]
    where: {workload: training}
    require: {capacity: spot}
    savings: spot
  - id: owner-tag
    title: Every GPU has an owner
    severity: low
    targets: [instance]
    require: {tags.owner: present}
"""
DATES = ("2026-05-31T06:00:00Z", "2026-08-31T06:00:00Z", "2026-11-30T06:00:00Z")


def instance(ident: str, *, workload: str, capacity: str, owner: bool, team: str) -> dict[str, Any]:
    tags = {"team": team, **({"owner": "alice@example.com"} if owner else {})}
    return {
        "provider": "aws",
        "id": ident,
        "account": "111122223333",
        "region": "us-east-1",
        "instance_type": "p4d.24xlarge",
        "state": "running",
        "capacity": capacity,
        "workload": workload,
        "launched_at": "2026-05-01T00:00:00Z",
        "tags": tags,
    }


# Quarter 1: a (spot), b (spot, owner), c (owner).
# Quarter 2: b moved to spot (its spot finding resolved), c removed (owner resolved), d new (spot).
# Quarter 3: b re-tagged (team) but still without owner; d given an owner; e new (owner).
FLEET = (
    [
        instance("i-a", workload="training", capacity="on-demand", owner=True, team="nlp"),
        instance("i-b", workload="training", capacity="on-demand", owner=False, team="nlp"),
        instance("i-c", workload="inference", capacity="on-demand", owner=False, team="web"),
    ],
    [
        instance("i-a", workload="training", capacity="on-demand", owner=True, team="nlp"),
        instance("i-b", workload="training", capacity="spot", owner=False, team="nlp"),
        instance("i-d", workload="training", capacity="on-demand", owner=True, team="cv"),
    ],
    [
        instance("i-e", workload="inference", capacity="spot", owner=False, team="web"),
        instance("i-d", workload="training", capacity="on-demand", owner=True, team="cv"),
        instance("i-b", workload="training", capacity="spot", owner=False, team="speech"),
        instance("i-a", workload="training", capacity="on-demand", owner=True, team="nlp"),
    ],
)


@pytest.fixture
def quarters(tmp_path: Path) -> tuple[Path, list[Path]]:
    """The policy and one inventory per quarter."""
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY)
    paths = []
    for index, (when, resources) in enumerate(zip(DATES, FLEET, strict=True)):
        path = tmp_path / f"q{index + 1}.json"
        path.write_text(json.dumps({"version": 1, "captured_at": when, "resources": resources}))
        paths.append(path)
    return policy, paths


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, [str(a) for a in args])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr
