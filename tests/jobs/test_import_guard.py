"""`gpu-audit check` never imports cloud SDKs: it is on every commit's critical path."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "jobs"
# cloud SDKs, and what only --history (sqlite3) or a directory argument (pathspec) needs
FORBIDDEN = (
    "boto3",
    "botocore",
    "google.cloud",
    "google.api_core",
    "grpc",
    "kubernetes",
    "azure",
    "msrest",
    "sqlite3",
    "pathspec",
)

# Run the real CLI in a fresh interpreter, then report every module it imported, even on exit 1.
PROBE = """
import atexit, json, sys
atexit.register(lambda: print("MODULES=" + json.dumps(sorted(sys.modules)), file=sys.stderr))
from gpu_audit.cli.main import main
sys.argv = ["gpu-audit", "check", "--format", "json", *sys.argv[1:]]
main()
"""


def test_check_imports_no_cloud_sdk() -> None:
    files = sorted(str(p) for p in FIXTURES.rglob("*") if p.suffix in {".yaml", ".yml", ".json"})
    run = subprocess.run(
        [sys.executable, "-c", PROBE, *files], capture_output=True, text=True, timeout=120
    )
    assert run.returncode in (0, 1, 2), run.stderr
    assert '"resources"' in run.stdout or run.stdout.strip(), "check produced a report"
    line = next(ln for ln in run.stderr.splitlines() if ln.startswith("MODULES="))
    modules = line[len("MODULES=") :]
    loaded = [
        name
        for name in json.loads(modules)
        if any(name == bad or name.startswith(bad + ".") for bad in FORBIDDEN)
    ]
    assert not loaded, f"gpu-audit check imported {loaded}"
    assert "gpu_audit.jobs.kubernetes.parser" in modules  # the probe really ran the check path
