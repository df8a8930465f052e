"""Issue 38.3: savings per GPU-hour (jobs with no runtime cap) total per hour in the summary, and
rows rank by the figure they show."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from gpu_audit.cli.main import main

JOB = """\
name: {name}
resources:
  accelerators: {gpus}
  infra: aws/us-east-1
  labels: {{team: ml, project: llm, owner: ada}}
run: python train.py
"""


def run(*args: str) -> str:
    result = CliRunner().invoke(main, list(args))
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.stdout


def _jobs(tmp_path: Path) -> list[str]:
    paths = []
    for name, gpus in (("wide", "A100:32"), ("narrow", "H100:8")):
        path = tmp_path / f"{name}.yaml"
        path.write_text(JOB.format(name=name, gpus=gpus))
        paths.append(str(path))
    return paths


def test_savings_per_gpu_hour_total_per_hour_in_every_summary(tmp_path: Path) -> None:
    paths = _jobs(tmp_path)
    data = json.loads(run("check", *paths, "--format", "json"))
    per_job: dict[str, float] = {}
    for f in data["findings"]:
        if f["saving_unit"] == "gpu-hour":
            job = f["location"].rsplit(":", 1)[0]
            gpus = 32 if "wide" in job else 8
            per_job[job] = max(per_job.get(job, 0.0), f["saving_usd"] * gpus)
    assert len(per_job) == 2
    total = round(sum(per_job.values()), 2)
    summary = data["summary"]
    assert (summary["hourly_savings_usd"], summary["jobs_with_hourly_savings"]) == (total, 2)
    line = run("check", *paths, "--format", "text").splitlines()[-1]
    assert f"savings ${total:,.2f}/hour over 2 jobs with no runtime cap" in line
    assert "none priced" not in line
    markdown = run("check", *paths, "--format", "markdown")
    assert f"| Estimated savings per hour | \\${total:,.2f}/hour over 2 jobs" in markdown


def test_rows_rank_by_the_saving_they_show(tmp_path: Path) -> None:
    """H100 × 8 saves more per GPU-hour than A100 × 32 (which saves more per hour in all): the
    rows show per GPU-hour, so the H100 job comes first."""
    paths = _jobs(tmp_path)
    table = run("check", *paths, "--format", "table")
    rows = [ln for ln in table.splitlines() if ln.startswith("spot-for-training")]
    assert [("narrow" in r, "wide" in r) for r in rows] == [(True, False), (False, True)]
    shown = [float(r.split("/GPU-h")[0].rsplit("$", 1)[1]) for r in rows]
    assert shown == sorted(shown, reverse=True)
