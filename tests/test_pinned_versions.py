"""Issue 38.12: the versions the docs pin (pre-commit `rev:`, the action's `@v…`, SARIF's
`fullName`) are this release's, the tag it is published under, not one that does not exist."""

from __future__ import annotations

import re
from pathlib import Path

from gpu_audit import __version__

ROOT = Path(__file__).resolve().parents[1]
PINS = re.compile(r"(?:rev: v|gpu-audit/gpu-audit@v|`gpu-audit )(\d+\.\d+\.\d+)")


def test_every_pinned_version_is_this_release() -> None:
    found: dict[str, list[str]] = {}
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        for version in PINS.findall(path.read_text(encoding="utf-8")):
            found.setdefault(version, []).append(path.name)
    assert found, "no pinned version found: the pattern is out of date"
    assert set(found) == {__version__}, found
