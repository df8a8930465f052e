"""Property-based fuzzing of today's new inputs: price files, shard reports and diff file names.

A price file (`--prices FILE`, `catalog diff FILE`) and a shard report (`gpu-audit merge`) are
mutated as tests/fuzz/hostile.py mutates every seed; `gpu-audit diff` gets job files under hostile
names (line breaks, bytes that are not UTF-8, leading dashes, escapes) at the base, the head or both.
Each run keeps the promises of tests/fuzz/promises.py, and nothing from a file reaches the
terminal unescaped. The suite's run is small and seeded; `make fuzz` runs the campaign.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import tempfile
from pathlib import Path

import pytest
from click.testing import Result
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fuzz.hostile import mutated, shard_seeds
from tests.fuzz.promises import Broken, check_run, invoke, strict_json, write
from tests.fuzz.test_promises import GOOD_JOB, _kept

pytestmark = pytest.mark.slow

_CAMPAIGN = int(os.environ.get("GPU_AUDIT_FUZZ_EXAMPLES", "0") or 0) // 4  # as conftest.py
# A merge judges three shards and a diff makes a git repository per example: fewer in the suite.
_SLOW = settings(
    max_examples=_CAMPAIGN or 25,
    derandomize=not _CAMPAIGN,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)
# What a terminal acts on: C0/C1 controls but the line end, DEL, bidi and line separators.
_RAW = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def escaped(result: Result, fmt: str | None, text: str) -> None:
    """No value from a file reaches stderr, or a terminal format on stdout, unescaped."""
    streams = [("stderr", result.stderr)]
    if fmt in (None, "table", "text"):
        streams.append(("stdout", result.stdout))
    for name, out in streams:
        found = _RAW.search(out)
        if found:
            at = found.start()
            raise Broken(
                f"{name} holds {found.group()!r} unescaped: {out[max(0, at - 80) : at + 80]!r}"
                f"\n--- input ---\n{text[:1500]}"
            )


@given(case=mutated("prices"), how=st.sampled_from(["diff", "lookup", "estimate"]))
def test_price_files_keep_the_promises(case: tuple[str, str], how: str) -> None:
    name, text = case
    with tempfile.TemporaryDirectory() as tmp:
        path = write(Path(tmp), name, text)
        args = {
            "diff": ["catalog", "diff", path],
            "lookup": ["catalog", "lookup", "p4d.24xlarge", "--prices", path],
            "estimate": ["estimate", "--gpu", "A100-80GB:8", "--hours", "2", "--format", "json",
                         "--prices", path],
        }[how]  # fmt: skip
        result = invoke(args)
        fmt = "json" if how == "estimate" else None

        def promises() -> None:
            check_run(result, [path], None, text)
            escaped(result, fmt, text)

        _kept(promises)


SPOT_JOB = (
    "name: spot\nresources:\n  accelerators: A100:8\n  use_spot: true\n  labels:\n"
    "    gpu-audit/checkpoint-interval-minutes: '20'\n    gpu-audit/max-runtime-hours: '12'\n"
    "run: python train.py --output_dir /ckpt\n"
)


@given(case=mutated("interruptions"), how=st.sampled_from(["check", "estimate"]))
def test_interruption_rate_files_keep_the_promises(case: tuple[str, str], how: str) -> None:
    """`--interruption-rates FILE` (issue 47): a damaged rate file is one located line, exit 2;
    a readable one prices a spot job's lost work without a traceback or a raw value."""
    name, text = case
    with tempfile.TemporaryDirectory() as tmp:
        path = write(Path(tmp), name, text)
        job = write(Path(tmp), "spot.sky.yaml", SPOT_JOB)
        fmt = "json" if how == "estimate" else "text"
        result = invoke([how, "--format", fmt, "--interruption-rates", path, job])

        def promises() -> None:
            check_run(result, [path, job], None, text)  # estimate's JSON is not a scan report
            if how == "estimate" and result.stdout.strip():
                strict_json(result.stdout, f"\n--- input ---\n{text[:1500]}")
            escaped(result, fmt, text)

        _kept(promises)


STAMP_KEYS = ["index", "count", "universe", "universe_digest", "policy_digest", "price_basis",
              "run_id"]  # fmt: skip
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)


@st.composite
def mutated_stamps(draw: st.DrawFn) -> tuple[str, str]:
    """Shard 2 with its stamp or judging time changed: the keys a merge checks first."""
    document = json.loads(shard_seeds()[1].read_text())
    stamp = document["scope"]["shard"]
    for _ in range(draw(st.integers(1, 3))):
        key = draw(st.sampled_from([*STAMP_KEYS, "generated_at"]))
        target = document if key == "generated_at" else stamp
        if draw(st.booleans()):
            target.pop(key, None)
        else:
            target[key] = draw(JSON_VALUES)
    return "shard-2.json", json.dumps(document, indent=2, allow_nan=True)


@_SLOW
@given(
    case=st.one_of(mutated("shards", json_out=True), mutated_stamps()),
    fmt=st.sampled_from(["json", "table"]),
)
def test_merge_keeps_the_promises_on_a_mutated_shard(case: tuple[str, str], fmt: str) -> None:
    _name, text = case
    first, _, third = (str(p) for p in shard_seeds())
    with tempfile.TemporaryDirectory() as tmp:
        bad = write(Path(tmp), "shard-2.json", text)
        result = invoke(["merge", first, bad, third, "--format", fmt, "--fail-on", "none"])

        def promises() -> None:
            check_run(result, [first, bad, third], fmt, text)
            escaped(result, fmt, text)
            if result.exit_code not in (0, 2, 3):
                raise Broken(f"merge exit {result.exit_code}: {result.stderr[:500]}")

        _kept(promises)


# Names git and file systems allow that break naive code: a line break, bytes that are not
# UTF-8, a leading dash (an option to git), escapes and bidi marks, spaces, a colon (REV:path).
HOSTILE_NAMES = [
    b"two\nlines.sky.yaml",
    b"\xff\xfe.sky.yaml",
    b"caf\xe9.yaml",
    b"-rf.sky.yaml",
    b"--base=HEAD.yaml",
    b"\x1b[2J\x1b]0;x\x07.sky.yaml",
    b"\xe2\x80\xaeevil.sky.yaml",
    b" spaced .sky.yaml",
    b"HEAD:x.sky.yaml",
    b"dir/\r.yaml",
]
_GIT_ENV = {"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


def _git(directory: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=T", "-c", "user.email=t@example.com", *args],
        cwd=directory, check=True, capture_output=True, timeout=60, env={**os.environ, **_GIT_ENV},
    )  # fmt: skip


def _put(directory: Path, name: bytes, text: str | None) -> None:
    path = Path(os.fsdecode(bytes(directory) + b"/" + name))
    if text is None:
        path.unlink(missing_ok=True)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


_ANY_NAME = st.binary(min_size=1, max_size=10).filter(lambda b: b"/" not in b and b"\0" not in b)


@_SLOW
@given(
    name=st.one_of(st.sampled_from(HOSTILE_NAMES), _ANY_NAME.map(lambda b: b + b".yaml")),
    sides=st.sampled_from(["both", "base", "head"]),
    change=st.sampled_from(["A100:8", "A100:4", "[", "\x00"]),
    fmt=st.sampled_from(["json", "table", "markdown"]),
)
def test_diff_keeps_the_promises_on_hostile_file_names(
    name: bytes, sides: str, change: str, fmt: str
) -> None:
    with tempfile.TemporaryDirectory() as tmp, contextlib.chdir(tmp):
        directory = Path(tmp).resolve()
        _git(directory, "init", "-q")
        _put(directory, b"good.sky.yaml", GOOD_JOB)
        _put(directory, name, GOOD_JOB if sides != "head" else None)
        _git(directory, "add", "-A")
        _git(directory, "commit", "-q", "-m", "base")
        head = GOOD_JOB.replace("A100:8", change) if change.startswith("A100") else change
        _put(directory, name, head if sides != "base" else None)
        result = invoke(["diff", "--base", "HEAD", "--format", fmt])
        shown = f"{name!r} on {sides}, head {change!r}"

        def promises() -> None:
            if result.exception is not None and not isinstance(result.exception, SystemExit):
                exc = result.exception
                raise Broken(f"exception escaped: {type(exc).__name__}: {exc}\n{shown}") from exc
            if result.exit_code not in (0, 1, 2):
                raise Broken(f"exit {result.exit_code}: {result.stderr[:500]}\n{shown}")
            lines = result.stderr.splitlines()
            if not all(line.startswith("gpu-audit: ") for line in lines):
                raise Broken(f"stderr line is not one gpu-audit message: {lines}\n{shown}")
            if result.exit_code == 2 and not lines:
                raise Broken(f"exit 2 without a message\n{shown}")
            escaped(result, "table" if fmt == "table" else "json", shown)

        _kept(promises)
