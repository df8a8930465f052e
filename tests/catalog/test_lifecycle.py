"""Hardware has dates: the lifecycle table, verdicts only after a date, no retired machine offered."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

from click.testing import CliRunner
from tests.conftest import FIXTURES

from gpu_audit.catalog.lifecycle import lifecycle, notices, retired_type
from gpu_audit.catalog.shapes import gpu_shape_price
from gpu_audit.cli.main import main
from gpu_audit.estimate.compute import options

BEFORE_P100 = date(2026, 9, 14)
AFTER_P100 = date(2026, 9, 15)


def test_every_row_names_its_source_and_the_date_it_was_read() -> None:
    rows = notices()
    assert len(rows) >= 10
    for row in rows:
        assert row.source and date.fromisoformat(row.checked), row
        assert row.cloud in {"aws", "gcp", "azure"} and row.scope in {"gpu", "family", "service"}
        if row.ends is None:  # an undated row says why it makes no verdict
            assert "no verdict" in row.source, row
    dated = {(r.cloud, r.item): r.ends for r in rows if r.scope != "family"}
    assert dated[("gcp", "K80")] == date(2024, 5, 1)
    assert dated[("gcp", "P100")] == date(2026, 9, 15)
    assert dated[("gcp", "T4")] == dated[("gcp", "P4")] == date(2027, 8, 1)
    assert dated[("gcp", "ai-platform")] == date(2025, 1, 31)
    families = {r.name: r.ends for r in rows if r.scope == "family"}
    # Azure's notices: NC, NCv2, ND and NV retired on 6 September 2023 (not 31 August)
    for series in ("NC-series (K80)", "NCv2-series (P100)", "ND-series (P40)", "NV-series (M60)"):
        assert families[f"Azure {series}"] == date(2023, 9, 6)
    assert families["Azure NCv3-series (V100)"] == date(2025, 9, 30)
    assert families["Azure NVv3-series (M60)"] == families["Azure NVv4-series (AMD MI25)"]
    assert families["Azure NVv4-series (AMD MI25)"] == date(2026, 9, 30)
    # a row read against the cloud's own notice names its address; one that could not be says so
    for row in rows:
        assert "https://" in row.source or "(unverified)" in row.source, row


def test_a_gpu_is_retired_only_once_its_date_has_passed() -> None:
    assert lifecycle("gcp", "P100", None, "vertex", BEFORE_P100) == (
        None,
        "NVIDIA P100 on Compute Engine, retires 2026-09-15",
    )
    retired, retiring = lifecycle("gcp", "P100", None, "vertex", AFTER_P100)
    assert retired == "NVIDIA P100 on Compute Engine, retired 2026-09-15" and retiring is None
    # announced for 2027: still offered
    assert lifecycle("gcp", "T4", None, "vertex", AFTER_P100)[0] is None
    # an undated row (AWS P2) makes no verdict, and a GPU still sold on one cloud is offered
    assert lifecycle("aws", "K80", "p2.xlarge", None, AFTER_P100) == (None, None)
    assert lifecycle(None, "K80", None, None, AFTER_P100) == (None, None)


def test_a_platform_that_no_longer_runs_is_named() -> None:
    retired, _ = lifecycle("gcp", "T4", "n1-standard-8", "ai-platform", date(2026, 11, 20))
    assert retired == "AI Platform Training (legacy), shut down 2025-01-31"
    assert lifecycle("gcp", "T4", "n1-standard-8", "ai-platform", date(2025, 1, 30))[0] is None


def test_estimate_never_offers_a_machine_no_longer_sold() -> None:
    assert retired_type("Standard_NC6s_v3", date.today())  # Azure NCv3, retired 2025-09-30
    table = options("V100", 1, hours=None, cloud="azure")
    assert all(o.instance_type != "Standard_NC6s_v3" for o in table.options)
    assert any(w.startswith("Standard_NC6s_v3 (Azure NCv3-series") for w in table.withdrawn)
    everywhere = options("V100", 1, hours=None)
    assert not any(retired_type(o.instance_type, date.today()) for o in everywhere.options)
    code = CliRunner().invoke(main, ["estimate", "--instance-type", "Standard_NC6s_v3"])
    assert "Not offered, no longer sold: " in code.stdout
    assert "Standard_NC6s_v3 (Azure NCv3-series (V100), retired 2025-09-30)" in code.stdout
    assert "p3.2xlarge (Amazon EC2 P3 (V100), retired 2025-12-20)" in code.stdout


def test_a_gpu_ask_is_never_priced_on_a_retired_machine() -> None:
    # V100 on Azure is sold only as NCv3 in the catalog: no price rather than a retired one
    assert gpu_shape_price("V100", 1, "azure", "eastus") is None
    quote = gpu_shape_price("V100", 1, None, None)
    assert quote is not None and "NC6s_v3" not in (quote.item or "")


def test_a_retired_config_is_not_priced_as_an_option_by_estimate() -> None:
    path = FIXTURES / "precision" / "vertex-legacy-k80.yaml"
    result = CliRunner().invoke(main, ["estimate", str(path), "--format", "json"])
    job = json.loads(result.stdout)["jobs"][0]
    assert job["on_demand"] is None and job["spot"] is None
    assert "no longer offered" in job["note"] and "K80 on Compute Engine" in job["note"]


def test_check_names_the_shut_down_platform(tmp_path: Path) -> None:
    path = FIXTURES / "precision" / "vertex-legacy-t4.yaml"
    result = CliRunner().invoke(main, ["check", str(path), "--format", "json"])
    findings = json.loads(result.stdout)["findings"]
    assert [f["rule_id"] for f in findings] == ["retired-gpu"]
    assert "AI Platform Training (legacy), shut down 2025-01-31" in findings[0]["actual"]


def test_azure_nvv3_and_nvv4_are_retired_once_september_30_2026_has_passed() -> None:
    before, after = date(2026, 9, 29), date(2026, 9, 30)
    assert lifecycle("azure", "M60", "Standard_NV12s_v3", None, before) == (
        None,
        "Azure NVv3-series (M60), retires 2026-09-30",
    )
    assert lifecycle("azure", "M60", "Standard_NV12s_v3", None, after) == (
        "Azure NVv3-series (M60), retired 2026-09-30",
        None,
    )
    # NVv4 (AMD MI25) is not in the machine catalog: its family row alone dates it
    assert lifecycle("azure", None, "Standard_NV8as_v4", None, after)[0] == (
        "Azure NVv4-series (AMD MI25), retired 2026-09-30"
    )
    # M60 on Azure is sold only as NVv3: retired there; on AWS only as G3, retired 2025-10-31
    # (issue 48), so an M60 asked for on no cloud is retired everywhere it was sold
    assert lifecycle("azure", "M60", None, None, after)[0] is not None
    assert lifecycle(None, "M60", None, None, after)[0] == (
        "Amazon EC2 G3 (M60), retired 2025-10-31; Azure NVv3-series (M60), retired 2026-09-30"
    )
    assert lifecycle(None, "M60", None, None, before)[1] is not None  # NVv3 still ahead
    table = options("M60", 1, hours=None, cloud="azure")
    assert all(o.instance_type != "Standard_NV12s_v3" for o in table.options)
    assert any(w.startswith("Standard_NV12s_v3 (Azure NVv3-series") for w in table.withdrawn)


def test_azure_nc_nd_nv_retired_on_6_september_2023() -> None:
    assert lifecycle("azure", "K80", "Standard_NC6", None, date(2023, 9, 5))[0] is None
    assert lifecycle("azure", "K80", "Standard_NC6_Promo", None, date(2023, 9, 6)) == (
        "Azure NC-series (K80), retired 2023-09-06",
        None,
    )


def test_ec2_p3_and_g3_are_retired_on_their_dates_p2_and_sagemaker_are_not() -> None:
    """Issue 48: the dated e-mails AWS sent, corroborated by the EC2 API's and the Deep Learning
    AMI's absence of P3 and G3; P2 has no dated notice; SageMaker's ml.p3 is its own list."""
    from gpu_audit.catalog.lifecycle import ended

    today = date(2026, 12, 4)
    p3 = ended("p3.8xlarge", today)
    assert p3 is not None and p3.ends == date(2025, 12, 20) and "gpuhunt#233" in p3.source
    g3 = ended("g3s.xlarge", today)
    assert g3 is not None and g3.ends == date(2025, 10, 31)
    assert ended("p3.8xlarge", date(2025, 12, 19)) is None  # still sold the day before
    assert ended("p2.xlarge", today) is None  # no dated notice: no verdict
    assert ended("ml.p3.2xlarge", today) is None  # SageMaker still lists it
    assert ended("p3dn.24xlarge", today) is None  # not in the P3 notice
    assert lifecycle("aws", "V100", "p3.2xlarge", None, today)[0] == (
        "Amazon EC2 P3 (V100), retired 2025-12-20"
    )
