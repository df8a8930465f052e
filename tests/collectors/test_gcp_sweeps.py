"""`scan --since` on Vertex AI: a finished tuning job with its trials inline and a spot custom
job, read by the real AuthorizedSession from the loopback REST fake in the API's shapes.

Vertex states no billable time and no interruptions: a trial's cost is its wall clock × the
replicas of its GPU pool × the `vertex:` rate (spot where `scheduling.strategy` is SPOT), worked
out here by hand from the rate card (prices.csv) and the times.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from gcp_server import FakeGcp, serve
from tests.conftest import FIXTURES

from gpu_audit.cli.main import main
from gpu_audit.collectors.gcp.collector import GcpCollector
from gpu_audit.collectors.gcp.settings import GcpSettings
from gpu_audit.core.runs import Sweep

PROJECT = "ml-sweeps"
LOCATION = "us-central1"
PARENT = f"projects/{PROJECT}/locations/{LOCATION}"
ENVS = (
    "GPU_AUDIT_GCE_ENDPOINT",
    "GPU_AUDIT_GCP_MONITORING_ENDPOINT",
    "GPU_AUDIT_GCS_ENDPOINT",
    "GPU_AUDIT_VERTEX_ENDPOINT",
)
G2_SPOT = Decimal("0.39166")  # vertex:g2-standard-8, us-central1, spot (prices.csv)
A2_ON_DEMAND = Decimal("4.22440")  # vertex:a2-highgpu-1g, us-central1, on-demand
A2_SPOT = Decimal("1.65940")
NOW = datetime.now(UTC).replace(microsecond=0)
SINCE = (NOW - timedelta(days=30)).date().isoformat()


def _at(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _pool(machine: str, accelerator: str, replicas: int) -> dict[str, Any]:
    spec = {"machineType": machine, "acceleratorType": accelerator, "acceleratorCount": 1}
    return {"machineSpec": spec, "replicaCount": str(replicas)}


STATES = ["SUCCEEDED"] * 12 + ["STOPPING"] * 5 + ["INFEASIBLE"] * 3


def _seconds(index: int) -> int:
    return 1800 + 60 * index


def _trials(start: datetime) -> list[dict[str, Any]]:
    trials = []
    for index, state in enumerate(STATES):
        trial: dict[str, Any] = {
            "id": str(index + 1),
            "state": state,
            "startTime": _at(start),
            "endTime": _at(start + timedelta(seconds=_seconds(index))),
            "customJob": f"{PARENT}/customJobs/{1000 + index}",
        }
        if state == "INFEASIBLE":
            trial["infeasibleReason"] = "The trial job failed: CUDA out of memory"
        trials.append(trial)
    # A trial that ended before the period: listed with its sweep, never counted.
    old = start - timedelta(days=60)
    trials.append(
        {
            "id": "99",
            "state": "SUCCEEDED",
            "startTime": _at(old),
            "endTime": _at(old + timedelta(hours=1)),
        }
    )
    return trials


def scenario() -> FakeGcp:
    start = NOW - timedelta(days=3)
    fake = FakeGcp()
    fake.vertex[PROJECT] = {
        LOCATION: {
            "hyperparameterTuningJobs": [
                {
                    "name": f"{PARENT}/hyperparameterTuningJobs/7",
                    "displayName": "lr-sweep",
                    "state": "JOB_STATE_SUCCEEDED",
                    "maxTrialCount": 20,
                    "parallelTrialCount": 4,
                    "trialJobSpec": {
                        "workerPoolSpecs": [_pool("g2-standard-8", "NVIDIA_L4", 2)],
                        "scheduling": {"strategy": "SPOT"},
                    },
                    "trials": _trials(start),
                    "createTime": _at(start),
                    "updateTime": _at(NOW - timedelta(days=2)),
                },
                {
                    "name": f"{PARENT}/hyperparameterTuningJobs/1",
                    "displayName": "last-year",
                    "state": "JOB_STATE_SUCCEEDED",
                    "trialJobSpec": {"workerPoolSpecs": [_pool("g2-standard-8", "NVIDIA_L4", 1)]},
                    "trials": _trials(NOW - timedelta(days=400)),
                    "updateTime": _at(NOW - timedelta(days=399)),
                },
            ],
            "customJobs": [
                {
                    "name": f"{PARENT}/customJobs/1000",  # the sweep's first trial: counted once
                    "displayName": "lr-sweep-trial-1",
                    "state": "JOB_STATE_SUCCEEDED",
                    "startTime": _at(start),
                    "endTime": _at(start + timedelta(seconds=1800)),
                    "updateTime": _at(start + timedelta(seconds=1800)),
                    "jobSpec": {"workerPoolSpecs": [_pool("g2-standard-8", "NVIDIA_L4", 2)]},
                },
                {
                    "name": f"{PARENT}/customJobs/55",
                    "displayName": "bert-spot",
                    "state": "JOB_STATE_SUCCEEDED",
                    "startTime": _at(start),
                    "endTime": _at(start + timedelta(hours=5)),
                    "updateTime": _at(start + timedelta(hours=5)),
                    "jobSpec": {
                        "workerPoolSpecs": [_pool("a2-highgpu-1g", "NVIDIA_TESLA_A100", 1)],
                        "scheduling": {"strategy": "SPOT"},
                    },
                },
                {
                    "name": f"{PARENT}/customJobs/56",
                    "displayName": "still-going",
                    "state": "JOB_STATE_RUNNING",
                    "startTime": _at(start),
                    "updateTime": _at(start),
                    "jobSpec": {
                        "workerPoolSpecs": [_pool("a2-highgpu-1g", "NVIDIA_TESLA_A100", 1)]
                    },
                },
            ],
        }
    }
    return fake


@pytest.fixture
def fake() -> FakeGcp:
    return scenario()


@pytest.fixture
def endpoint(fake: FakeGcp, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    with serve(fake) as url:
        for env in ENVS:
            monkeypatch.setenv(env, url)
        yield url


def cents(value: Decimal) -> float:
    return float(value.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def trial_cost(index: int) -> Decimal:
    return Decimal(_seconds(index)) * 2 / 3600 * G2_SPOT  # wall clock × 2 replicas × spot rate


def _scan() -> dict[str, Any]:
    args = ["scan", "--provider", "gcp", "--project", PROJECT, "--service", "vertex"]
    result = CliRunner().invoke(main, [*args, "--since", SINCE, "--format", "json"])
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)


def test_a_sweep_reports_its_cost_per_successful_trial_and_failed_trials_to_the_cent(
    endpoint: str,
) -> None:
    report = _scan()
    sweeps = {s["name"]: s for s in report["sweeps"]}
    assert set(sweeps) == {"lr-sweep", "bert-spot"}  # not last year's, not the trial's own job
    sweep = sweeps["lr-sweep"]
    total = sum(trial_cost(i) for i in range(20))
    failed = sum(trial_cost(i) for i in range(17, 20))
    assert sweep["trials_by_outcome"] == {
        "completed": 12,
        "stopped": 5,
        "failed": 3,
        "running": 0,
        "retried": None,  # Vertex states no interruption or restart
    }
    assert sweep["cost_usd"] == cents(total)
    assert sweep["cost_per_success_usd"] == cents(total / 12)
    assert sweep["failed_usd"] == cents(failed)
    # Vertex states no interruptions: unknown, and the restart rule is not evaluated.
    assert sweep["interruptions"] is None and sweep["restarts"] is None
    assert sweep["trials"][17]["failure"] == "The trial job failed: CUDA out of memory"
    missing = {(n["rule_id"], n["missing"]) for n in report["not_evaluated"]}
    assert ("spot-restart-from-zero", "run.interruptions") in missing


def test_a_spot_custom_job_reports_its_realised_savings(endpoint: str) -> None:
    report = _scan()
    (job,) = [s for s in report["sweeps"] if s["name"] == "bert-spot"]
    assert job["kind"] == "training"
    assert job["cost_usd"] == cents(5 * A2_SPOT)
    assert job["spot_savings_pct"] == float(round((1 - A2_SPOT / A2_ON_DEMAND) * 100, 2))


def test_two_filtered_listings_paged_a_location(fake: FakeGcp, endpoint: str) -> None:
    settings = GcpSettings(
        projects=(PROJECT,), services=("vertex",), vertex_locations=(LOCATION,), since=SINCE
    )
    found = [i for i in GcpCollector(settings).collect() if isinstance(i, Sweep)]
    assert sorted(s.name for s in found) == ["bert-spot", "lr-sweep"]
    after = f'update_time>"{SINCE}T00:00:00Z"'
    reads = [r for r in fake.requests if r.query.get("filter") == [after]]
    # The tuning job in the period: one page; custom jobs: three in the period, two a page.
    assert sorted(r.path.rsplit("/", 1)[1] for r in reads) == [
        "customJobs",
        "customJobs",
        "hyperparameterTuningJobs",
    ]
    assert {r.method for r in fake.requests} == {"GET"}


def test_a_busy_location_is_retried_and_the_sweep_is_whole(fake: FakeGcp, endpoint: str) -> None:
    fake.vertex_unavailable[(PROJECT, LOCATION)] = 2  # two 503s, then answers
    settings = GcpSettings(
        projects=(PROJECT,), services=("vertex",), vertex_locations=(LOCATION,), since=SINCE
    )
    found = list(GcpCollector(settings).collect())
    sweep = next(i for i in found if isinstance(i, Sweep) and i.name == "lr-sweep")
    assert (sweep.completed, sweep.stopped, sweep.failed) == (12, 5, 3)
    assert sweep.cost_usd is not None
    assert cents(Decimal(sweep.cost_usd)) == cents(sum(trial_cost(i) for i in range(20)))


def test_the_sweeps_section_in_markdown_text_and_table_escapes_every_name(
    fake: FakeGcp, endpoint: str
) -> None:
    hostile = "bert | `x` <script>\x1b[31m\u202e"
    fake.vertex[PROJECT][LOCATION]["customJobs"][1]["displayName"] = hostile
    args = ["scan", "--provider", "gcp", "--project", PROJECT, "--service", "vertex"]
    args += ["--since", SINCE]
    markdown = CliRunner().invoke(main, [*args, "--format", "markdown"]).stdout
    section = markdown.split(f"## Sweeps and finished runs since {SINCE}", 1)[1]
    total = sum(trial_cost(i) for i in range(20))
    sweep_row = next(line for line in section.splitlines() if line.startswith("| lr-sweep"))
    # dollars to the cent, the sign escaped (GitHub reads a pair of `$` as math)
    assert f"\\${cents(total):,.2f}" in sweep_row and f"\\${cents(total / 12):,.2f}" in sweep_row
    assert "20: 12 completed, 5 stopped early, 3 failed" in sweep_row
    assert "(ceiling n/a)" in sweep_row and "not stated" in sweep_row
    job_row = next(line for line in section.splitlines() if line.startswith("| bert"))
    # the pipe, backtick and tag escaped, the control folded to a space, the bidi mark shown
    assert job_row.startswith(r"| bert \| \`x\` &lt;script&gt; \[31m\\u202e |")
    assert "\x1b" not in markdown and "\u202e" not in markdown
    for fmt in ("text", "table"):
        out = CliRunner().invoke(main, [*args, "--format", fmt]).stdout
        line = next(x for x in out.splitlines() if x.startswith("Finished runs since"))
        assert f"1 sweep and 1 training job cost ${cents(total + 5 * A2_SPOT):,.2f}" in line
        assert f"${cents(total / 12):,.2f} per successful trial" in line
        assert "\x1b" not in out


def test_a_trial_that_failed_before_it_started_counts_as_failed_at_no_cost(
    fake: FakeGcp, endpoint: str
) -> None:
    sweep_job = fake.vertex[PROJECT][LOCATION]["hyperparameterTuningJobs"][0]
    ended = _at(NOW - timedelta(days=2))
    sweep_job["trials"].append({"id": "21", "state": "INFEASIBLE", "endTime": ended})
    report = _scan()
    (sweep,) = [s for s in report["sweeps"] if s["name"] == "lr-sweep"]
    assert sweep["trials_by_outcome"]["failed"] == 4
    assert sweep["cost_usd"] == cents(sum(trial_cost(i) for i in range(20)))
    assert sweep["trials"][-1]["cost_usd"] == 0.0


def test_a_sweep_is_held_to_the_latest_vertex_file_of_its_name_and_not_a_sagemaker_one(
    endpoint: str, tmp_path: Path
) -> None:
    """The tuning file as the sweep ran (20 trials, 2 replicas of one L4, 2 h per trial): 20 × 2 h
    × 2 GPUs = 80 GPU-hours. Used: Σ (1,800 + 60 i) s × 2 replicas × 1 GPU = 94,800 GPU-seconds,
    26.3333 GPU-hours, 32.92% of it. A SageMaker file of the same name is another family."""
    db, sweeps = tmp_path / "audits.db", tmp_path / "sweeps"
    sweeps.mkdir()
    sagemaker = json.loads((FIXTURES / "sweeps" / "sagemaker-tuning.json").read_text())
    sagemaker["HyperParameterTuningJobName"] = "lr-sweep"
    (sweeps / "sagemaker.json").write_text(json.dumps(sagemaker))
    checked = CliRunner().invoke(main, ["check", str(sweeps), "--history", str(db), "-q"])
    assert checked.exit_code in (0, 1), checked.output
    args = ["scan", "--provider", "gcp", "--project", PROJECT, "--service", "vertex"]
    command = [*args, "--since", SINCE, "--format", "json", "--history", str(db)]

    def lr_sweep() -> dict[str, Any]:
        result = CliRunner().invoke(main, command)
        assert result.exit_code in (0, 1), result.output
        (found,) = [s for s in json.loads(result.stdout)["sweeps"] if s["name"] == "lr-sweep"]
        return found

    sweep = lr_sweep()
    assert sweep["ceiling_gpu_hours"] is None
    assert sweep["ceiling"] == "no estimate of a sweep named 'lr-sweep' (vertex) in the history"
    vertex = (FIXTURES / "sweeps" / "vertex-hpt-timeout.yaml").read_text()
    for old, new in (("l4-lr-sweep", "lr-sweep"), ("maxTrialCount: 30", "maxTrialCount: 20"),
                     ("replicaCount: 1", "replicaCount: 2")):  # fmt: skip
        assert old in vertex
        vertex = vertex.replace(old, new)
    (sweeps / "vertex.yaml").write_text(vertex)
    checked = CliRunner().invoke(main, ["check", str(sweeps), "--history", str(db), "-q"])
    assert checked.exit_code in (0, 1), checked.output
    sweep = lr_sweep()
    assert sweep["gpu_hours"] == round(94_800 / 3600, 4)
    assert (sweep["ceiling_gpu_hours"], sweep["ceiling"]) == (80.0, None)
    assert sweep["ceiling_used_pct"] == round(94_800 / 3600 / 80 * 100, 2) == 32.92
    assert sweep["ceiling_file"] == str(sweeps / "vertex.yaml")
