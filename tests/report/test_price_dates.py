"""Source and date travel with the figure: every dollar a finding prints names its price's date
(the Markdown its source too), and a price older than the limit says so in the finding."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from click.testing import CliRunner

from gpu_audit.cli.main import main

SKY = "name: ranker\nresources:\n  accelerators: A10G:1\n  cloud: aws\n  labels: {team: a, project: b, owner: c}\nrun: python train.py\n"
VERTEX = """\
displayName: bert
jobSpec:
  workerPoolSpecs:
    - machineSpec: {machineType: g2-standard-12, acceleratorType: NVIDIA_L4, acceleratorCount: 1}
      replicaCount: 1
      containerSpec: {imageUri: img, command: ["python", "train.py"]}
labels: {team: a, project: b, owner: c}
"""


def _check(tmp_path: Path, fmt: str) -> str:
    (tmp_path / "sky.yaml").write_text(SKY)
    (tmp_path / "vertex.yaml").write_text(VERTEX)
    result = CliRunner().invoke(
        main, ["check", str(tmp_path / "sky.yaml"), str(tmp_path / "vertex.yaml"),
               "--format", fmt, "--fail-on", "none"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return result.stdout


def test_text_names_the_date_beside_each_saving(tmp_path: Path) -> None:
    lines = [line for line in _check(tmp_path, "text").splitlines() if "(saves $" in line]
    assert len(lines) == 2
    # the EC2 g5 price is dated 2026-07-20: more than 90 days before the check, and marked
    assert any("; price as of 2026-07-20, older than 90 days)" in line for line in lines)
    # the Vertex card's price: dated, and marked only once it is more than 90 days old
    recent = (date.today() - date(2026, 11, 23)).days <= 90
    vertex = "; price as of 2026-11-23" + (")" if recent else ", older than 90 days)")
    assert any(vertex in line for line in lines)


def test_the_table_and_markdown_say_what_the_savings_are_priced_at(tmp_path: Path) -> None:
    table = _check(tmp_path, "table")
    assert (
        "savings priced at: price as of 2026-07-20, older than 90 days; price as of 2026-11-23"
        in table
    )
    markdown = _check(tmp_path, "markdown")
    assert "Prices behind these figures:" in markdown
    assert "- price as of 2026-11-23: Vertex AI custom training and prediction" in markdown
