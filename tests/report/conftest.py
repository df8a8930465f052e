"""Report test fixtures: the demo scan, job findings built by hand, and a hostile resource.

Golden files live in fixtures/golden/. Regenerate them after an intended change with
`GPU_AUDIT_UPDATE_GOLDEN=1 pytest tests/report` (or `pytest tests/report --update-golden`),
then review the diff.
"""

from __future__ import annotations

import os
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from gpu_audit.audit import audit
from gpu_audit.collectors.inventory import load_inventory
from gpu_audit.core.resource import (
    Capacity,
    Gpu,
    Kind,
    Limits,
    Resource,
    SourceRef,
    State,
    Utilization,
    Workload,
)
from gpu_audit.core.results import CoverageGap, ScanResult, Scope, Skipped
from gpu_audit.policy.loader import load_policy
from tests.conftest import ROOT

GOLDEN = ROOT / "fixtures" / "golden"
DEMO_INVENTORY = "fixtures/inventory/demo.yaml"
DEMO_POLICY = "fixtures/inventory/demo-policy.yaml"
HOSTILE = "x|y\n# Injected heading\n```\n`tick` <script>alert(1)</script> [link](https://evil.example) &amp; \\"
NOW = datetime(2026, 11, 20, 6, 0, tzinfo=UTC)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden",
        action="store_true",
        default=False,
        help="Rewrite fixtures/golden/* from the current reporters.",
    )


@pytest.fixture
def update_golden(request: pytest.FixtureRequest) -> bool:
    flag = request.config.getoption("--update-golden", default=False)
    return bool(flag) or os.environ.get("GPU_AUDIT_UPDATE_GOLDEN") == "1"


@pytest.fixture
def in_root(monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run from the checkout root, so relative fixture paths read as in the docs."""
    monkeypatch.chdir(ROOT)
    return ROOT


def relative_policies(result: ScanResult) -> ScanResult:
    """The shipped pack's absolute path, relative to the checkout (goldens move with the repo)."""
    files = tuple(
        os.path.relpath(path, ROOT) if os.path.isabs(path) else path
        for path in result.scope.policy_files
    )
    return replace(result, scope=replace(result.scope, policy_files=files))


def demo_scan() -> ScanResult:
    """What `gpu-audit scan --inventory demo.yaml --policy demo-policy.yaml` judges (cwd=ROOT)."""
    inventory = load_inventory(DEMO_INVENTORY)
    assert inventory.captured_at is not None
    resources = inventory.resources
    scope = Scope(
        command="scan",
        providers=tuple(dict.fromkeys(r.provider for r in resources)),
        accounts=tuple(dict.fromkeys(r.account or "" for r in resources if r.account)),
        regions=tuple(sorted({r.region for r in resources if r.region})),
        files=(DEMO_INVENTORY,),
    )
    policy = load_policy([DEMO_POLICY])
    result = audit(
        resources, policy, inventory.captured_at, scope, coverage_gaps=inventory.coverage_gaps
    )
    return relative_policies(result)


@pytest.fixture
def demo(in_root: Path) -> ScanResult:
    return demo_scan()


def job(name: str, path: str, line: int, **fields: object) -> Resource:
    key_lines = fields.pop("key_lines", {})
    suppressions = fields.pop("suppressions", {})
    values: dict[str, object] = {
        "kind": Kind.JOB,
        "provider": "skypilot",
        "id": f"{path}#0",
        "name": name,
        "state": State.DEFINED,
        "source": SourceRef(
            path=path, line=line, document=0, key_lines=key_lines, suppressions=suppressions
        ),
    }
    values.update(fields)
    return Resource(**values)  # type: ignore[arg-type]


def jobs_scan() -> ScanResult:
    """Job findings built by hand: key lines, an inline suppression, a skipped and a bad file."""
    resources = [
        job(
            "train-llm",
            "jobs/train llm.yaml",
            1,
            instance_type="p4d.24xlarge",
            region="us-east-1",
            capacity=Capacity.ON_DEMAND,
            workload=Workload.TRAINING,
            gpu=Gpu(model="A100-40GB", count=8, memory_gib=40.0),
            tags={"team": "nlp", "project": "llm", "owner": "a@example.com"},
            key_lines={"capacity": 7, "gpu.model": 5, "limits.max_runtime_hours": 9},
        ),
        job(
            "eval-h100",
            "jobs/eval.yaml",
            3,
            provider="kubernetes",
            capacity=Capacity.SPOT,
            workload=Workload.TRAINING,
            gpu=Gpu(model="H100", count=8, memory_gib=80.0),
            limits=Limits(max_runtime_hours=4),
            key_lines={"gpu.model": 12},
            suppressions={12: {"gpu-class-cap": "approved in FIN-77"}},
        ),
    ]
    skipped = [
        Skipped(path="jobs/README.yaml", reason="not a GPU job"),
        Skipped(
            path="jobs/broken.yaml",
            reason="jobs/broken.yaml:4:3: mapping values are not allowed here",
            error=True,
            line=4,
        ),
    ]
    scope = Scope(
        command="check",
        files=("jobs/train llm.yaml", "jobs/eval.yaml", "jobs/README.yaml", "jobs/broken.yaml"),
    )
    return relative_policies(audit(resources, load_policy(None), NOW, scope, skipped=skipped))


CHECK_FILES = (
    "fixtures/jobs/skypilot/any-of-alternatives.yaml",
    "fixtures/jobs/skypilot/serve-on-demand.yaml",
    "fixtures/jobs/kubernetes/pytorchjob-spot.yaml",
    "fixtures/jobs/sagemaker/tuning-no-early-stopping.yaml",
    "fixtures/jobs/not-jobs/docker-compose.yaml",
)


def check_scan() -> ScanResult:
    """What `gpu-audit check CHECK_FILES` judges (cwd=ROOT), as of the fixed NOW."""
    from gpu_audit.jobs import load_jobs

    loaded = load_jobs(CHECK_FILES)
    scope = Scope(command="check", files=CHECK_FILES)
    result = audit(loaded.resources, load_policy(None), NOW, scope, skipped=loaded.skipped)
    return relative_policies(result)


@pytest.fixture
def checked(in_root: Path) -> ScanResult:
    return check_scan()


@pytest.fixture
def jobs() -> ScanResult:
    return jobs_scan()


def hostile_scan(tmp_path: Path) -> ScanResult:
    """Every input field a cloud or file controls, set to text that tries to break out."""
    policy = tmp_path / "hostile-policy.yaml"
    policy.write_text(
        "version: 1\nextends: runbook\nwaivers:\n"
        "  - rule: idle-gpu\n    where: {tags.team: " + repr(HOSTILE).replace("'", '"') + "}\n"
        "    reason: " + repr(HOSTILE).replace("'", '"') + "\n"
        "    owner: '=HYPERLINK(\"https://evil.example\")'\n    expires: 2027-01-31\n"
    )
    resource = Resource(
        kind=Kind.INSTANCE,
        provider="aws",
        id="i-" + HOSTILE,
        name=HOSTILE,
        account="111122223333",
        region="us-east-1",
        instance_type="p4d.24xlarge",
        state=State.RUNNING,
        capacity=Capacity.ON_DEMAND,
        workload=Workload.TRAINING,
        launched_at=datetime(2026, 11, 1, tzinfo=UTC),
        utilization=Utilization(gpu_avg=1, gpu_p95=2, window_hours=24),
        tags={"team": HOSTILE, "project": "-2+3", "owner": "@evil\tx", HOSTILE: HOSTILE},
    )
    hostile_job = job(
        HOSTILE,
        "jobs/" + HOSTILE.replace("\n", " ").replace("\\", "") + ".yaml",
        2,
        gpu=Gpu(model="A100-40GB", count=1, memory_gib=40.0),
        workload=Workload.TRAINING,
        capacity=Capacity.ON_DEMAND,
        tags={"team": HOSTILE},
    )
    gap = CoverageGap(
        provider="aws",
        scope="account " + HOSTILE,
        error="AccessDenied",
        message=HOSTILE,
        account="1",
        region="r",
    )
    scope = Scope(
        command="scan",
        providers=("aws",),
        accounts=(HOSTILE,),
        regions=("us-east-1",),
        files=(HOSTILE,),
    )
    result = audit(
        [resource, hostile_job],
        load_policy([str(policy)]),
        NOW,
        scope,
        skipped=[Skipped(path=HOSTILE, reason=HOSTILE, error=True, line=1)],
        coverage_gaps=[gap],
    )
    return result


@pytest.fixture
def hostile(tmp_path: Path) -> ScanResult:
    return hostile_scan(tmp_path)
