"""Property-based fuzzing of the real CLI: mutated job configs, inventories and policies.

Each example writes files to a temporary directory, runs `gpu-audit` in-process and checks the
promises of tests/fuzz/promises.py. The default run is seeded and small (the suite's budget);
`make fuzz` runs the long campaign (tests/fuzz/conftest.py).
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpu_audit.report import REPORTERS
from tests.conftest import FIXTURES
from tests.fuzz.hostile import mutated, mutated_script
from tests.fuzz.promises import (
    Broken,
    check_run,
    invoke,
    strict_json,
    write,
)

pytestmark = pytest.mark.slow  # ~20 s: `make quick` leaves the fuzz suite to `make test`

NOW = "2026-11-20T06:00:00Z"
FORMATS = st.sampled_from(["json", *REPORTERS])  # JSON twice: its promises are the strictest
GOOD_JOB = "name: ok\nresources:\n  accelerators: A100:8\n  use_spot: false\nrun: python train.py\n"
LOG = os.environ.get("GPU_AUDIT_FUZZ_LOG")


def _kept(run: callable) -> None:  # type: ignore[valid-type]
    """Raise a broken promise, or (campaign with a log) record it and go on."""
    try:
        run()
    except Broken as exc:
        if not LOG:
            raise
        with open(LOG, "a", encoding="utf-8") as log:
            log.write(json.dumps({"finding": str(exc)}) + "\n")


@given(case=mutated("jobs"), fmt=FORMATS)
def test_check_keeps_its_promises_on_mutated_job_configs(case: tuple[str, str], fmt: str) -> None:
    name, text = case
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        good = write(directory, "good.sky.yaml", GOOD_JOB)
        bad = write(directory, name, text)
        result = invoke(["check", "--format", fmt, "--fail-on", "high", good, bad])

        def promises() -> None:
            check_run(result, [good, bad], fmt, text)
            if fmt == "json" and result.stdout.strip():  # the good file is still judged
                report = json.loads(result.stdout)
                assert good in report["scope"]["files"], "good file not judged"
                assert any(r.get("source", {}).get("path") == good for r in report["resources"])

        _kept(promises)


@given(case=mutated_script(), fmt=FORMATS)
def test_check_keeps_its_promises_on_mutated_slurm_scripts(case: tuple[str, str], fmt: str) -> None:
    """A Slurm script is read as text, not YAML: its own mutations (values of `#SBATCH` options,
    directives added, repeated or dropped, `hetjob`), beside a good job file."""
    name, text = case
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        good = write(directory, "good.sky.yaml", GOOD_JOB)
        bad = write(directory, name, text)
        result = invoke(["check", "--format", fmt, "--fail-on", "high", good, bad])
        _kept(lambda: check_run(result, [good, bad], fmt, text))


@given(case=mutated("jobs"), fmt=st.sampled_from(["json", "text", "markdown"]))
def test_estimate_keeps_its_promises_on_mutated_job_configs(
    case: tuple[str, str], fmt: str
) -> None:
    """`gpu-audit estimate` reads the same job files: the same promises, and strict JSON."""
    name, text = case
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        good = write(directory, "good.sky.yaml", GOOD_JOB)
        bad = write(directory, name, text)
        result = invoke(["estimate", "--format", fmt, good, bad])

        def promises() -> None:
            check_run(result, [good, bad], None, text)
            if fmt == "json" and result.stdout.strip():
                strict_json(result.stdout, f"\n--- input ---\n{text[:1500]}")

        _kept(promises)


@given(case=mutated("inventory"), fmt=FORMATS)
def test_scan_keeps_its_promises_on_mutated_inventories(case: tuple[str, str], fmt: str) -> None:
    name, text = case
    with tempfile.TemporaryDirectory() as tmp:
        path = write(Path(tmp), name, text)
        result = invoke(["scan", "--inventory", path, "--format", fmt, "--now", NOW])
        _kept(lambda: check_run(result, [path], fmt, text))


@given(case=mutated("policies"), fmt=st.sampled_from(["json", "sarif", "text"]))
def test_policies_keep_their_promises_when_mutated(case: tuple[str, str], fmt: str) -> None:
    name, text = case
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        policy = write(directory, name, text)
        good = write(directory, "good.sky.yaml", GOOD_JOB)
        result = invoke(["check", "--policy", policy, "--format", fmt, good])
        _kept(lambda: check_run(result, [policy, good], fmt, text))
        validated = invoke(["policies", "validate", policy])
        _kept(lambda: check_run(validated, [policy], None, text))


@given(case=mutated("inventory", json_out=True), fmt=st.sampled_from(["json", "sarif"]))
def test_json_inventories_keep_their_promises(case: tuple[str, str], fmt: str) -> None:
    """JSON has its own reader (the json module) and its own hostile values: NaN, Infinity."""
    name, text = case
    with tempfile.TemporaryDirectory() as tmp:
        path = write(Path(tmp), name, text)
        result = invoke(["scan", "--inventory", path, "--format", fmt, "--now", NOW])
        _kept(lambda: check_run(result, [path], fmt, text))


@given(case=mutated("inventory", json_out=True), fmt=st.sampled_from(["json", "text"]))
def test_a_mutated_baseline_keeps_the_promises(case: tuple[str, str], fmt: str) -> None:
    """`--baseline FILE` is another JSON input (a saved report): the same promises hold."""
    name, text = case
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        good = write(directory, "good.sky.yaml", GOOD_JOB)
        baseline = write(directory, name, text)
        result = invoke(["check", "--baseline", baseline, "--format", fmt, good])
        _kept(lambda: check_run(result, [good, baseline], fmt, text))


def test_the_seeds_are_real_files() -> None:
    assert (FIXTURES / "inventory" / "demo.yaml").exists()
