"""Figures that visibly add up: severity groups, pie slices and resolved rows sum to their total
(or say the rule where they are shown)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner

from gpu_audit.cli.main import main
from gpu_audit.report.markdown_charts import whole_dollars

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "fixtures" / "inventory"


def _run(*args: object) -> str:
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exit_code in (0, 1), result.output
    return result.stdout


def _demo(fmt: str) -> str:
    return _run("scan", "--inventory", DEMO / "demo.yaml", "--policy", DEMO / "demo-policy.yaml",
                "--format", fmt, "--fail-on", "none")  # fmt: skip


def _dollars(text: str) -> int:
    return int(text.replace(",", ""))


def test_severity_groups_add_up_to_the_total_and_say_so() -> None:
    text = _demo("table")
    groups = [
        _dollars(m) for m in re.findall(r"^[A-Z]+ \(\d+; savings \$([\d,]+)/month", text, re.M)
    ]
    total = _dollars(re.search(r"; savings \$([\d,]+)/month", text.splitlines()[-1]).group(1))  # type: ignore[union-attr]
    assert len(groups) >= 2
    assert abs(sum(groups) - total) <= len(groups)  # each group rounded to the dollar
    assert "counts once, in the group of its largest finding" in text


def test_pie_slices_add_up_to_the_total_exactly() -> None:
    text = _demo("markdown")
    total = _dollars(re.search(r"Estimated \\\$([\d,]+) / month\.", text).group(1))  # type: ignore[union-attr]
    pies = re.findall(r"```mermaid\n%%[^\n]*%%\npie title [^\n]+\n(.*?)```", text, re.S)
    assert len(pies) == 2
    for body in pies:
        assert sum(int(v) for v in re.findall(r" : (\d+)$", body, re.M)) == total
        labels = [_dollars(v) for v in re.findall(r': \$([\d,]+)" :', body)]
        assert sum(labels) == total


def test_rounding_lands_in_the_largest_slice() -> None:
    assert whole_dollars([("a", 2.5), ("b", 0.5), ("c", 0.5)]) == [("a", 4), ("b", 0), ("c", 0)]
    assert whole_dollars([("a", 10.4), ("b", 10.4), ("c", 10.4)]) == [
        ("a", 11),
        ("b", 10),
        ("c", 10),
    ]


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
    realised = _dollars(
        re.search(
            r"\| Savings realised / month \(resolved findings\) \|  \| \\\$([\d,]+) \|", text
        ).group(1)
    )  # type: ignore[union-attr]
    start = text.index("**Resolved since the last audit**")
    block = text[start:].split("\n\n")[1]
    rows = [line for line in block.splitlines()[2:] if line.startswith("| ")]
    assert len(rows) == 2  # one resource, two resolved findings with a saving each
    savings = [_dollars(re.findall(r"\\\$([\d,]+)", row)[0]) for row in rows]
    counted = [re.findall(r"\\\$([\d,]+)", row)[-1] for row in rows]
    assert sum(savings) > realised  # what each would save alone: more than what counts
    assert sum(_dollars(c) for c in counted) == realised
    assert "counts once, under its largest resolved finding" in text[start:]
