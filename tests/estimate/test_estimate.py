"""`gpu-audit estimate` through the Python API: costs checked against sums worked by hand."""

from __future__ import annotations

import csv
import json

import pytest

from gpu_audit.catalog.enrich import enrich
from gpu_audit.errors import InputError
from gpu_audit.estimate.compute import (
    estimate_job,
    instance_request,
    options,
    parse_gpu_request,
)
from gpu_audit.estimate.model import JobEstimate
from gpu_audit.estimate.render import FORMATS, render_jobs, render_options
from gpu_audit.jobs import load_jobs
from tests.conftest import FIXTURES, NOW, ROOT

ESTIMATE = FIXTURES / "estimate"


def _estimates(hours: float | None = None) -> dict[str, JobEstimate]:
    loaded = load_jobs([str(p) for p in sorted(ESTIMATE.iterdir())])
    assert not loaded.skipped
    return {e.job: e for e in (estimate_job(enrich(r, NOW), hours) for r in loaded.resources)}


def test_fine_tuning_job_matches_the_hand_computation() -> None:
    job = _estimates()["llm-finetune"]
    # ml.p4de.24xlarge × 1 in us-east-1, MaxRuntimeInSeconds 43200 = 12 h (catalog, 2026-07-20):
    # on-demand 27.44705 $/h × 12 h = 329.3646 → $329.36; spot 5.8394 × 12 = 70.0728 → $70.07.
    assert (job.gpu_model, job.gpus_per_node, job.nodes, job.gpu_count) == ("A100-80GB", 8, 1, 8)
    assert (job.hours, job.hours_from, job.gpu_hours) == (12.0, "runtime cap", 96.0)
    assert job.on_demand is not None and job.spot is not None
    assert (job.on_demand.hourly_usd, job.on_demand.run_usd) == (27.44705, 329.36)
    assert (job.spot.hourly_usd, job.spot.run_usd) == (5.8394, 70.07)
    assert job.on_demand.region == job.spot.region == "us-east-1"
    assert job.on_demand.instance_type == job.spot.instance_type == "p4de.24xlarge"
    assert job.on_demand.as_of == "2026-07-20" and "Karpenter" in job.on_demand.source
    assert job.run_usd == 329.36 and job.budget_usd == 300.0 and job.over_budget


def test_tuning_job_worst_case_is_trials_times_one_run() -> None:
    job = _estimates()["ranker-tune"]
    # ml.g5.xlarge on the SageMaker rate card in us-east-1 (a SageMaker tuning job is billed
    # there, not at the EC2 g5.xlarge rate), 9000 s = 2.5 h per trial, 20 trials:
    # spot 0.5556 × 2.5 = 1.389 → $1.39 a run; 20 × 1.389 = $27.78 worst case.
    # on-demand 1.408 × 2.5 = 3.52; 20 × 3.52 = $70.40.
    assert job.capacity == "spot" and job.trials == 20
    assert job.spot is not None and job.on_demand is not None
    assert (job.spot.run_usd, job.on_demand.run_usd, job.run_usd) == (1.39, 3.52, 1.39)
    assert (job.tuning_spot_usd, job.tuning_on_demand_usd) == (27.78, 70.40)
    assert (
        "SageMaker AI pricing page" in job.spot.source and "sagemaker rate card" in job.region_note
    )


def test_job_without_a_runtime_cap_needs_hours() -> None:
    job = _estimates()["h100-sweep"]
    assert (job.hours, job.hours_from, job.gpu_hours, job.run_usd) == (None, "unknown", None, None)
    assert job.budget_usd == 1000.0 and not job.over_budget  # from the gpu-audit/budget-usd label
    three = _estimates(hours=3)["h100-sweep"]
    # H100 × 8, no instance type: the one machine that holds them, p5.48xlarge at 55.04 $/h
    # (as `check` prices it); × 3 h = $165.12; spot 20.9934 × 3 = 62.9802 → $62.98.
    assert three.on_demand is not None and three.spot is not None
    assert (three.hours_from, three.gpu_hours) == ("--hours", 24)
    assert three.on_demand.instance_type == "p5.48xlarge"
    assert (three.on_demand.run_usd, three.spot.run_usd) == (165.12, 62.98)


def test_enriched_fields_agree_with_the_estimate() -> None:
    loaded = load_jobs([str(p) for p in sorted(ESTIMATE.iterdir())])
    fields = {r.name: enrich(r, NOW).estimate for r in loaded.resources}
    assert (fields["llm-finetune"].gpu_hours, fields["llm-finetune"].run_usd) == (96.0, 329.36)
    assert fields["llm-finetune"].tuning_usd is None
    assert (fields["ranker-tune"].run_usd, fields["ranker-tune"].tuning_usd) == (1.39, 27.78)
    assert fields["h100-sweep"].run_usd is None  # no runtime cap: missing, not zero


def _catalog(name: str) -> list[dict[str, str]]:
    path = ROOT / "src" / "gpu_audit" / "catalog" / "data" / name
    lines = [line for line in path.read_text().splitlines() if line and not line.startswith("#")]
    return list(csv.DictReader(lines))


def test_options_list_every_type_offering_the_gpu_with_both_capacities() -> None:
    table = options(*parse_gpu_request("A100-80GB:8"), hours=12, max_usd=300)
    priced = {(r["item"].lower(), r["region"]): r for r in _catalog("prices.csv")}
    offering = [
        r["instance_type"]
        for r in _catalog("instances.csv")
        if r["gpu_model"] == "A100-80GB" and r["gpu_count"] == "8"
    ]
    assert {"p4de.24xlarge", "a2-ultragpu-8g", "Standard_ND96amsr_A100_v4"} <= set(offering)
    for itype in offering:
        for (item, region), row in priced.items():
            if item != itype.lower():
                continue
            for capacity, column in (("on-demand", "on_demand_usd_hr"), ("spot", "spot_usd_hr")):
                rows = [
                    o
                    for o in table.options
                    if (o.instance_type, o.region, o.capacity) == (itype, region, capacity)
                ]
                assert len(rows) == (1 if row[column] else 0), (itype, region, capacity)
                if rows:  # hourly × 12 h, to the cent
                    expected = float(row[column]) * 12
                    assert rows[0].run_usd == pytest.approx(expected, abs=0.005)
    runs = [o.run_usd for o in table.options]
    assert runs == sorted(runs)
    p4de = next(
        o
        for o in table.options
        if (o.instance_type, o.region, o.capacity) == ("p4de.24xlarge", "us-east-1", "on-demand")
    )
    assert (p4de.run_usd, p4de.over_budget) == (329.36, True)  # 27.44705 × 12 = 329.3646
    assert all(o.memory_gib_per_gpu >= 80 for o in table.options)
    assert {"H100", "H200"} <= {o.gpu_model for o in table.options}  # bigger GPUs that fit


def test_instance_type_request_and_nodes() -> None:
    assert instance_request("p4d.24xlarge") == ("A100-40GB", 8)
    table = options(*instance_request("p4d.24xlarge"), hours=12, nodes=2, cloud="aws")
    assert {o.cloud for o in table.options} == {"aws"}
    row = next(
        o
        for o in table.options
        if (o.instance_type, o.region, o.capacity) == ("p4d.24xlarge", "us-east-1", "spot")
    )
    assert row.run_usd == 122.24  # 5.0933 × 2 nodes × 12 h = 122.2392


@pytest.mark.parametrize("text", ["A100-80GB:eight", "A100-80GB:0", "Z9000:8"])
def test_bad_gpu_requests_are_one_line_errors(text: str) -> None:
    with pytest.raises(InputError, match="--gpu"):
        parse_gpu_request(text)


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_renders_jobs_and_options(fmt: str) -> None:
    jobs = render_jobs(list(_estimates().values()), fmt)
    table = render_options(options("A100-80GB", 8, 12, max_usd=300), fmt)
    assert "329.36" in jobs and "70.07" in jobs
    assert "329.36" in table
    if fmt == "json":
        data = json.loads(jobs)
        for job in data["jobs"]:
            for rate in (job["on_demand"], job["spot"]):
                assert rate is None or (rate["as_of"] and rate["source"])
        assert all(o["as_of"] and o["source"] for o in json.loads(table)["options"])
    else:
        assert "OVER" in jobs and "OVER" in table
