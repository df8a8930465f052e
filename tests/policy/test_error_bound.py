"""Every policy mistake in one run, but a bounded run: a generated file with thousands of
mistakes prints the first fifty and a located count of the rest (the fuzz campaign's promise)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from gpu_audit.cli.main import main
from gpu_audit.errors import PolicyErrors


def test_a_thousand_mistakes_print_fifty_lines_and_a_count(tmp_path: Path) -> None:
    rules = "".join(
        f"  - id: r{i}\n    severity: high\n    require: {{gpu.modle: x}}\n" for i in range(1000)
    )
    policy = tmp_path / "many.yaml"
    policy.write_text("version: 1\nrules:\n" + rules)
    result = CliRunner().invoke(main, ["policies", "validate", str(policy)])
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 2 and len(lines) == PolicyErrors.LIMIT + 1
    assert all(line.startswith(f"gpu-audit: error: {policy}:") for line in lines)
    assert lines[-1].endswith(
        f"and 950 more errors in the policy files, the next one here (the first {PolicyErrors.LIMIT} are shown)"
    )
    # the 51st mistake: rule r50, its require on line 3 + 3 × 50 + 2
    assert f"{policy}:155:" in lines[-1]
