"""Job findings are priced per run at the runtime cap, or per GPU-hour; live capacity per month."""

from __future__ import annotations

from gpu_audit.catalog.enrich import enrich
from gpu_audit.collectors.inventory import load_inventory
from gpu_audit.core.results import Finding
from gpu_audit.jobs import load_jobs
from gpu_audit.policy.engine import evaluate
from gpu_audit.policy.loader import load_policy
from tests.conftest import FIXTURES, NOW

PACK = load_policy(None)


def _findings(paths: list[str]) -> dict[tuple[str, str], Finding]:
    loaded = load_jobs(paths)
    resources = [enrich(r, NOW) for r in loaded.resources]
    result = evaluate(resources, PACK, NOW)
    return {(f.resource.name or "", f.rule_id): f for f in result.findings}


def test_spot_saving_on_a_capped_job_is_per_run() -> None:
    found = _findings([str(FIXTURES / "estimate" / "finetune-over-budget.json")])
    finding = found[("llm-finetune", "spot-for-training")]
    # p4de.24xlarge us-east-1: (27.44705 - 5.8394) $/h × 12 h = 259.2918 → $259.29 per run.
    assert finding.saving_usd == 259.29
    assert finding.saving_unit == "run"
    assert finding.saving_per == "per run at the 12 h cap"
    assert finding.monthly_savings_usd is None


def test_saving_on_an_uncapped_job_is_per_gpu_hour() -> None:
    found = _findings([str(FIXTURES / "estimate" / "skypilot-no-cap.yaml")])
    finding = found[("h100-sweep", "spot-for-training")]
    # p5.48xlarge per GPU: 55.04 / 8 = 6.88 on-demand, 20.9934 / 8 → 2.62418 spot;
    # (8 × 6.88 - 8 × 2.62418) / 8 GPUs = 4.25582 → $4.2558 per GPU-hour.
    assert (finding.saving_usd, finding.saving_unit) == (4.2558, "gpu-hour")
    assert finding.saving_per == "per GPU-hour"


def test_live_capacity_keeps_monthly_savings() -> None:
    inventory = load_inventory(str(FIXTURES / "inventory" / "demo.yaml"))
    resources = [enrich(r, NOW) for r in inventory.resources]
    findings = evaluate(resources, PACK, NOW).findings
    priced = [f for f in findings if f.saving_usd is not None]
    assert priced and all(f.saving_unit == "month" for f in priced)
    assert all(f.monthly_savings_usd == f.saving_usd for f in priced)
