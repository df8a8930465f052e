"""`gpu-audit scan --provider gcp` end to end: the installed console script against the loopback fake."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from gcp_fixtures import FORBIDDEN, PROD, RESEARCH, scenario
from gcp_server import serve

GPU_AUDIT = Path(sys.executable).with_name("gpu-audit")
ENVS = (
    "GPU_AUDIT_GCE_ENDPOINT",
    "GPU_AUDIT_GCP_MONITORING_ENDPOINT",
    "GPU_AUDIT_GCS_ENDPOINT",
    "GPU_AUDIT_VERTEX_ENDPOINT",
)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not GPU_AUDIT.exists(), reason=f"{GPU_AUDIT} is not installed"),
]


def run_scan(url: str, tmp_path: Path, *args: str) -> tuple[int, dict[str, Any], str]:
    env = {**os.environ, **dict.fromkeys(ENVS, url)}
    done = subprocess.run(
        [str(GPU_AUDIT), "scan", "--provider", "gcp", *args, "--format", "json"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,  # no .gpu-audit.yaml to discover here
        timeout=120,
    )
    report = json.loads(done.stdout) if done.stdout.strip() else {}
    return done.returncode, report, done.stderr


def test_scan_reads_projects_through_the_cli_and_exits_3_on_a_gap(tmp_path: Path) -> None:
    with serve(scenario()) as url:
        code, report, stderr = run_scan(
            url, tmp_path, "--project", PROD, "--project", FORBIDDEN, "--project", RESEARCH
        )
    assert code == 3, stderr
    assert report["partial"] is True
    assert [(g["account"], g["error"]) for g in report["coverage_gaps"]] == [
        (FORBIDDEN, "Forbidden (403)")
    ]
    assert f"incomplete: gcp project {FORBIDDEN}" in stderr
    resources = {r["name"]: r for r in report["resources"]}
    assert len(resources) == 8
    a3 = resources["train-a3-reserved"]
    assert (a3["gpu"]["model"], a3["gpu"]["count"], a3["capacity"]) == ("H100", 8, "reserved")
    assert a3["utilization"]["gpu_p95"] == 2.0
    fired = {(f["rule_id"], report["resources"][f["resource"]]["name"]) for f in report["findings"]}
    assert ("idle-gpu", "train-a3-reserved") in fired
    assert ("data-co-location", "train-a2-spot") in fired  # us-central1 VM, EU bucket
    assert ("data-co-location", "serve-t4-1") not in fired  # US multi-region holds us-central1


def test_scan_window_flag_reaches_monitoring(tmp_path: Path) -> None:
    fake = scenario()
    with serve(fake) as url:
        code, report, stderr = run_scan(url, tmp_path, "--project", PROD, "--window", "6")
    assert code in (0, 1), stderr
    calls = [r for r in fake.requests if r.path.endswith("/timeSeries")]
    assert calls and calls[0].query["interval.startTime"] != calls[0].query["interval.endTime"]
    t4 = next(r for r in report["resources"] if r["name"] == "serve-t4-1")
    assert t4["utilization"]["window_hours"] == 6.0
