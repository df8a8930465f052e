"""`gpu-audit check` never imports cloud SDKs: it is on every commit's critical path."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from gpu_audit.collectors.registry import PROVIDERS
from gpu_audit.jobs import FORMATS

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
    # gpu-audit's own: what only `scan`, `history` and the other commands need
    "gpu_audit.collectors.registry",
    *(f"gpu_audit.collectors.{name}" for name in PROVIDERS),
    "gpu_audit.collectors.inventory",
    "gpu_audit.cli.scan",
    "gpu_audit.cli.tools",
    "gpu_audit.history",
    "gpu_audit.estimate",
)
# and, as pre-commit runs it (text to a pipe, the policy validated once before): no schema
# validator, terminal table, temp files, OpenSSL hashes or report writers it does not print
HOOK_FORBIDDEN = (
    *FORBIDDEN,
    "jsonschema",
    "tabulate",
    "tempfile",
    "hashlib",
    "shutil",
    "gpu_audit.report.table",
    "gpu_audit.report.json",
    "gpu_audit.report.fastjson",
    "gpu_audit.report.sarif",
    "gpu_audit.report.markdown",
    "difflib",  # did-you-mean hints are for errors
    # the standard library's, for paths a YAML job file does not take: JSON files, quoted globs,
    # messages that need escaping, the command line a report shows; CRC-32 comes from binascii
    "json",
    "glob",
    "unicodedata",
    "shlex",
    "zlib",
    # no baseline, no comparison: its classes (core/comparison.py) stay unimported
    "gpu_audit.core.comparison",
    # a SkyPilot file: the other formats' markers say no, so their parsers stay unimported
    *(f"gpu_audit.jobs.{name}.parser" for name in FORMATS if name != "skypilot"),
    "gpu_audit.jobs.aws_bodies",
)

# Run the real CLI in a fresh interpreter, then report every module it imported, even on exit 1
# (the probe itself imports nothing the check would not: json is one of the modules asked about).
PROBE = """
import atexit, sys
atexit.register(lambda: print("MODULES=" + " ".join(sorted(sys.modules)), file=sys.stderr))
from gpu_audit.cli.main import main
sys.argv = ["gpu-audit", "check", *sys.argv[1:]]
main()
"""


def _imported(args: list[str], env: dict[str, str] | None = None) -> tuple[str, list[str]]:
    """The check's stdout and every module it imported."""
    run = subprocess.run(
        [sys.executable, "-c", PROBE, *args], capture_output=True, text=True, timeout=120, env=env
    )
    assert run.returncode in (0, 1, 2), run.stderr
    line = next(ln for ln in run.stderr.splitlines() if ln.startswith("MODULES="))
    return run.stdout, line[len("MODULES=") :].split()


def _offenders(modules: list[str], forbidden: tuple[str, ...]) -> list[str]:
    return [m for m in modules if any(m == bad or m.startswith(bad + ".") for bad in forbidden)]


def test_check_imports_no_cloud_sdk() -> None:
    files = sorted(str(p) for p in FIXTURES.rglob("*") if p.suffix in {".yaml", ".yml", ".json"})
    stdout, modules = _imported(["--format", "json", *files])
    assert '"resources"' in stdout, "check produced a report"
    loaded = _offenders(modules, FORBIDDEN)
    assert not loaded, f"gpu-audit check imported {loaded}"
    assert "gpu_audit.jobs.kubernetes.parser" in modules  # the probe really ran the check path


def test_the_hook_imports_only_what_it_prints(tmp_path: Path) -> None:
    """One job file as pre-commit passes it, on a machine that never ran gpu-audit (the shipped
    pack's validation is known to this version) and again (a cache, if any, warm)."""
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    job = str(FIXTURES / "skypilot" / "serve-on-demand.yaml")
    first, cold = _imported([job], env)
    second, warm = _imported([job], env)
    assert first == second and "serve-on-demand.yaml:" in second
    for modules in (cold, warm):
        loaded = _offenders(modules, HOOK_FORBIDDEN)
        assert not loaded, f"gpu-audit check (one file) imported {loaded}"
        assert "gpu_audit.report.text" in modules and "gpu_audit.jobs.skypilot.parser" in modules


def test_a_policy_new_to_the_machine_is_validated_once(tmp_path: Path) -> None:
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    shipped = Path(__file__).resolve().parents[2] / "policies" / "runbook.yaml"
    policy = tmp_path / "team.yaml"
    policy.write_text(shipped.read_text() + "# the team's copy\n")
    args = ["--policy", str(policy), str(FIXTURES / "skypilot" / "serve-on-demand.yaml")]
    _, cold = _imported(args, env)
    assert "jsonschema" in cold  # an edited pack is validated
    _, warm = _imported(args, env)
    assert "jsonschema" not in warm  # and remembered once it passed
