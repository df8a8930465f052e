"""Every format against its golden file for the demo inventory and the hand-built job findings.

After an intended change: `GPU_AUDIT_UPDATE_GOLDEN=1 pytest tests/report` (or
`pytest tests/report --update-golden`), then review `git diff fixtures/golden`.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from gpu_audit.report import REPORTERS, render
from tests.report.conftest import GOLDEN, check_scan, demo_scan, jobs_scan

EXTENSIONS = {
    "table": "txt",
    "text": "log",
    "json": "json",
    "markdown": "md",
    "sarif": "sarif",
    "csv": "csv",
}
SCANS = {"demo": demo_scan, "jobs": jobs_scan, "check": check_scan}


GOLDEN_VERSION = "0.0.0-golden"  # goldens do not change with every release


def test_every_format_has_an_extension() -> None:
    assert set(EXTENSIONS) == set(REPORTERS)


@pytest.mark.parametrize("scan", sorted(SCANS))
@pytest.mark.parametrize("format_name", sorted(EXTENSIONS))
def test_golden(format_name: str, scan: str, in_root: object, update_golden: bool) -> None:
    text = render(format_name, replace(SCANS[scan](), tool_version=GOLDEN_VERSION))
    path = GOLDEN / f"{scan}.{EXTENSIONS[format_name]}"
    if update_golden or not path.exists():
        path.write_bytes(text.encode("utf-8"))
        if not update_golden:
            pytest.fail(f"{path} was missing and has been written; review and commit it")
    assert text == path.read_bytes().decode("utf-8"), (
        f"{path.name} differs; if intended, regenerate with GPU_AUDIT_UPDATE_GOLDEN=1"
    )
