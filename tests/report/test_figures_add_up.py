"""Figures that visibly add up: severity groups, pie slices and resolved rows sum to their total
(or say the rule where they are shown)."""

from __future__ import annotations

import json
import re
from decimal import Decimal
from pathlib import Path

from click.testing import CliRunner

from gpu_audit.cli.main import main
from gpu_audit.report.markdown_charts import to_the_cent

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "fixtures" / "inventory"


def _run(*args: object) -> str:
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exit_code in (0, 1), result.output
    return result.stdout


def _demo(fmt: str) -> str:
    return _run("scan", "--inventory", DEMO / "demo.yaml", "--policy", DEMO / "demo-policy.yaml",
                "--format", fmt, "--fail-on", "none")  # fmt: skip


def _cents(text: str) -> int:
    """`12,345.67` in cents: every amount is written to the cent."""
    whole, _, cents = text.replace(",", "").partition(".")
    assert len(cents) == 2, text
    return int(whole) * 100 + int(cents)


def test_severity_groups_add_up_to_the_total_and_say_so() -> None:
    text = _demo("table")
    groups = [
        _cents(m) for m in re.findall(r"^[A-Z]+ \(\d+; savings \$([\d,.]+)/month", text, re.M)
    ]
    total = _cents(re.search(r"; savings \$([\d,.]+)/month", text.splitlines()[-1]).group(1))  # type: ignore[union-attr]
    assert len(groups) >= 2
    assert abs(sum(groups) - total) <= len(groups)  # each group rounded to the cent
    assert "counts once, in the group of its largest finding" in text


def test_pie_slices_add_up_to_the_total_exactly() -> None:
    text = _demo("markdown")
    total = _cents(re.search(r"Estimated \\\$([\d,.]+) / month\.", text).group(1))  # type: ignore[union-attr]
    pies = re.findall(r"```mermaid\n%%[^\n]*%%\npie title [^\n]+\n(.*?)```", text, re.S)
    assert len(pies) == 2
    for body in pies:
        assert sum(_cents(v) for v in re.findall(r" : ([\d.]+)$", body, re.M)) == total
        labels = [_cents(v) for v in re.findall(r': \$([\d,.]+)" :', body)]
        assert sum(labels) == total


def test_rounding_lands_in_the_largest_slice() -> None:
    cents = to_the_cent([("a", 0.025), ("b", 0.005), ("c", 0.005)])
    assert cents == [("a", Decimal("0.04")), ("b", Decimal("0.00")), ("c", Decimal("0.00"))]
    cents = to_the_cent([("a", 10.004), ("b", 10.004), ("c", 10.004)])
    assert cents == [("a", Decimal("10.01")), ("b", Decimal("10.00")), ("c", Decimal("10.00"))]


POLICY = """\
version: 1
name: add-up
rules:
  - id: spot-for-training
    title: Training on spot
    severity: high
    targets: [instance]
    where: {workload: training}
    require: {capacity: spot}
    savings: spot
  - id: idle-gpu
    title: No idle GPUs
    severity: high
    targets: [instance]
    require: {utilization.gpu_p95: {gte: 10}}
    savings: stop
"""


def _inventory(path: Path, when: str, fixed: bool) -> Path:
    resource = {
        "provider": "aws", "id": "i-a", "account": "111122223333", "region": "us-east-1",
        "instance_type": "p4d.24xlarge", "state": "running", "workload": "training",
        "capacity": "spot" if fixed else "on-demand", "launched_at": "2026-05-01T00:00:00Z",
        "utilization": {"gpu_p95": 50 if fixed else 1},
    }  # fmt: skip
    path.write_text(json.dumps({"version": 1, "captured_at": when, "resources": [resource]}))
    return path


def test_resolved_rows_add_up_to_savings_realised(tmp_path: Path) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY)
    db = tmp_path / "audits.db"
    for fixed, when in ((False, "2026-08-31T06:00:00Z"), (True, "2026-11-30T06:00:00Z")):
        inventory = _inventory(tmp_path / f"{fixed}.json", when, fixed)
        text = _run("scan", "--inventory", inventory, "--policy", policy, "--history", db,
                    "--format", "markdown", "--fail-on", "none")  # fmt: skip
    realised = _cents(
        re.search(
            r"\| Savings realised / month \(resolved findings\) \|  \| \\\$([\d,.]+) \|", text
        ).group(1)
    )  # type: ignore[union-attr]
    start = text.index("**Resolved since the last audit**")
    block = text[start:].split("\n\n")[1]
    rows = [line for line in block.splitlines()[2:] if line.startswith("| ")]
    assert len(rows) == 2  # one resource, two resolved findings with a saving each
    savings = [_cents(re.findall(r"\\\$([\d,.]+)", row)[0]) for row in rows]
    counted = [re.findall(r"\\\$([\d,.]+)", row)[-1] for row in rows]
    assert sum(savings) > realised  # what each would save alone: more than what counts
    assert sum(_cents(c) for c in counted) == realised
    assert "counts once, under its largest resolved finding" in text[start:]
