"""Meta-test: every format in the registry renders the demo, job findings, hostile values and nothing."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from gpu_audit.core.results import ScanResult, Scope
from gpu_audit.report import REPORTERS, render

EMPTY = ScanResult(
    generated_at=datetime(2026, 1, 1, tzinfo=UTC),
    scope=Scope(command="check"),
    rules=(),
    resources=(),
    findings=(),
)


def test_registry_is_the_cli_choice() -> None:
    from gpu_audit.cli.main import FORMATS

    assert set(REPORTERS) == set(FORMATS)


@pytest.mark.parametrize("format_name", sorted(REPORTERS))
def test_renders_everything(
    format_name: str,
    demo: ScanResult,
    jobs: ScanResult,
    checked: ScanResult,
    hostile: ScanResult,
) -> None:
    for result in (demo, jobs, checked, hostile, EMPTY):
        text = render(format_name, result)
        assert isinstance(text, str) and text.endswith("\n")
