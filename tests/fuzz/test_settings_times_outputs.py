"""Property-based fuzzing of the third campaign's surfaces: settings sections, calendar-edge times,
output paths that are inputs, and `merge` with many shards missing.

- A settings file with hostile `azure:`/`aws:`/`gcp:`/`kubernetes:` values (NaN, infinities, zero,
  negative, huge, NUL bytes) and shared keys in either spelling is refused at its line by
  `check --config`, or accepted only when every value is one a scan can use.
- Any time from year 1 to 9999, with any offset, given as `--now` or an inventory's `captured_at`,
  is written by every format, or refused in one line when it leaves those years in UTC.
- An output path that names an input of the run (by itself, a symlink, a hard link or `./`) is one
  error, exit 2, and the input is byte-identical after.
- `merge` of a few of up to 100,000 shards says the missing ones in one clipped line a provider,
  with the unread items counted exactly.

The suite's run is small and seeded; `make fuzz` runs the campaign (tests/fuzz/conftest.py).
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpu_audit.errors import GpuAuditError
from gpu_audit.report import REPORTERS
from gpu_audit.settings import load_settings
from tests.conftest import FIXTURES
from tests.fuzz.promises import Broken, check_run, invoke, write
from tests.fuzz.test_promises import GOOD_JOB, _kept

pytestmark = pytest.mark.slow  # the fuzz suite runs under `make test`, not `make quick`

_CAMPAIGN = int(os.environ.get("GPU_AUDIT_FUZZ_EXAMPLES", "0") or 0) // 4  # as conftest.py
_SMALL = settings(
    max_examples=_CAMPAIGN or 20,
    derandomize=not _CAMPAIGN,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)
CLIP = 1_000  # no message line is longer, whatever the input holds
DEMO = str(FIXTURES / "inventory" / "demo.yaml")
PRICES = FIXTURES / "prices" / "example.json"

# -- settings ----------------------------------------------------------------------------------

_NUMBERS = st.sampled_from([".nan", ".inf", "-.inf", "0", "-1", "0.0", "1e308", "-0.0", "3", "20"])
_HOSTILE_TEXT = st.sampled_from(
    ['"a\\0b"', '"x\\x1b[2J"', "arm", "resource-graph", "graph", "[1, 2]", "{a: 1}", "yes", "~",
     "0001-01-01T00:00:00+05:00", "9999-12-31T23:00:00-14:00", "2026-09-01", "9999-12-31"]
)  # fmt: skip
_LONG = st.integers(1, 200_000).map(lambda n: "v" * n)
_VALUES = st.one_of(_NUMBERS, _HOSTILE_TEXT, _LONG)
_SECTIONS = {
    "azure": ["timeout", "max_attempts", "max-attempts", "source", "concurrency"],
    "aws": ["connect_timeout", "read-timeout", "max_attempts", "services", "window_hours", "since"],
    "gcp": ["timeout", "max_attempts", "services", "since"],
    "kubernetes": ["timeout", "max_attempts", "page_size", "kubeconfig", "prometheus"],
}
_SHARED = ["prices", "history", "prices_max_age_days", "prices-max-age-days", "fail-on", "fail_on"]


@st.composite
def settings_files(draw: st.DrawFn) -> str:
    lines: list[str] = []
    for section in draw(st.lists(st.sampled_from(sorted(_SECTIONS)), max_size=3, unique=True)):
        keys = draw(st.lists(st.sampled_from(_SECTIONS[section]), min_size=1, max_size=3))
        lines.append(f"{section}:")
        lines += [f"  {key}: {draw(_VALUES)}" for key in keys]
    for key in draw(st.lists(st.sampled_from(_SHARED), max_size=3)):
        lines.append(f"{key}: {draw(_VALUES)}")
    return "\n".join(lines) + "\n"


def _usable(loaded: Any) -> None:
    """What a settings file that loads holds: values a scan can use."""
    for name in ("azure", "aws", "gcp", "kubernetes"):
        section = loaded.section(name)
        for key in ("timeout", "connect_timeout", "read_timeout"):
            value = getattr(section, key, None)
            if value is not None and not (math.isfinite(value) and value > 0):
                raise Broken(f"{name}.{key} = {value!r} accepted")
        if section.max_attempts < 1:
            raise Broken(f"{name}.max_attempts = {section.max_attempts} accepted")
    for path in (loaded.prices, loaded.history):
        if path is not None and "\0" in path:
            raise Broken(f"a path with a NUL byte accepted: {path!r}")


@_SMALL
@given(text=settings_files())
def test_settings_are_refused_at_their_line_or_usable(text: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        config = write(Path(tmp), "settings.yaml", text)
        job = write(Path(tmp), "job.sky.yaml", GOOD_JOB)
        result = invoke(["check", job, "--config", config, "--format", "json", "--fail-on", "none"])

        inputs = [config, job]
        try:  # a price file or history the settings name is an input too (`cannot read` it)
            loaded = load_settings(config)
            inputs += [p for p in (loaded.prices, loaded.history) if p]
        except GpuAuditError:
            pass

        def promises() -> None:
            check_run(result, inputs, "json", text)
            for line in result.stderr.splitlines():
                if len(line) > CLIP + len(config):
                    raise Broken(f"a {len(line)}-character line: {line[:300]!r}\n{text[:500]}")
            if result.exit_code == 2:
                said = result.stderr.splitlines()[0]
                if not said.startswith(f"gpu-audit: error: {config}:"):
                    raise Broken(f"refused without its place: {said[:300]!r}\n{text[:500]}")
            elif "prices:" not in text:  # a price path that loads is read: its own promises
                _usable(load_settings(config))

        _kept(promises)


# -- times -------------------------------------------------------------------------------------

_OFFSETS = st.integers(-(24 * 60 - 1), 24 * 60 - 1).map(lambda m: timezone(timedelta(minutes=m)))
_EDGE_DAYS = st.sampled_from(
    [
        datetime(1, 1, 1),
        datetime(1, 1, 1, 23, 59, 59),
        datetime(9999, 12, 31),
        datetime(9999, 12, 31, 23, 59, 59, 999_999),
        datetime(2028, 2, 29, 12),
    ]
)
_TIMES = st.one_of(
    st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31, 23, 59, 59)),
    _EDGE_DAYS,
)


def _exists_in_utc(when: datetime) -> bool:
    try:
        when.astimezone(UTC)
    except OverflowError:
        return False
    return True


@_SMALL
@given(
    when=_TIMES,
    zone=st.one_of(st.none(), _OFFSETS),
    fmt=st.sampled_from(sorted(REPORTERS)),
    where=st.sampled_from(["--now", "captured_at"]),
)
def test_every_writer_takes_every_time_the_readers_accept(
    when: datetime, zone: timezone | None, fmt: str, where: str
) -> None:
    stamp = (when.replace(tzinfo=zone) if zone else when).isoformat()
    aware = when.replace(tzinfo=zone or UTC)
    with tempfile.TemporaryDirectory() as tmp:
        inventory = write(
            Path(tmp),
            "inventory.json",
            json.dumps({"version": 1, "captured_at": stamp, "resources": []}),
        )
        args = (
            ["--now", stamp, "--inventory", DEMO]
            if where == "--now"
            else ["--inventory", inventory]
        )
        result = invoke(["scan", *args, "--format", fmt, "--fail-on", "none"])

        def promises() -> None:
            if where == "--now" and not _exists_in_utc(aware):  # a flag's error: no file to name
                if not result.stderr.startswith("gpu-audit: error: --now: ") or (
                    result.stderr.count("\n") != 1 or result.exit_code != 2
                ):
                    raise Broken(f"--now {stamp}: {result.exit_code}, {result.stderr[:300]!r}")
                return
            check_run(result, [inventory, DEMO], fmt, stamp)
            if _exists_in_utc(aware):
                if result.exit_code != 0:
                    raise Broken(f"{stamp} ({where}) refused by {fmt}: {result.stderr[:500]}")
            elif result.exit_code != 2 or "out of range" not in result.stderr:
                raise Broken(f"{stamp} ({where}) not refused: exit {result.exit_code}")

        _kept(promises)


# -- outputs that are inputs -------------------------------------------------------------------

_ROLES = ["job", "policy", "settings", "prices", "baseline", "inventory"]


@_SMALL
@given(
    role=st.sampled_from(_ROLES),
    alias=st.sampled_from(["same", "dot", "symlink", "hardlink"]),
    how=st.sampled_from(["-o", "--report"]),
    command=st.sampled_from(["check", "scan"]),
)
def test_no_output_replaces_an_input(role: str, alias: str, how: str, command: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        here = Path(tmp)
        files = {
            "job": write(here, "job.json", json.dumps({"name": "ok", "resources": {
                "accelerators": "A100:8", "use_spot": False}, "run": "python train.py"})),
            "policy": write(here, "policy.json", '{"version": 1, "extends": "runbook"}\n'),
            "settings": write(here, "settings.json", '{"fail_on": "none"}\n'),
            "prices": write(here, "prices.json", PRICES.read_text(encoding="utf-8")),
            "inventory": write(here, "inventory.json", '{"version": 1, "resources": []}\n'),
        }  # fmt: skip
        first = invoke(["scan", "--inventory", files["inventory"], "--format", "json", "--fail-on",
                        "none", "-o", str(here / "baseline.json")])  # fmt: skip
        assert first.exit_code == 0, first.stderr
        files["baseline"] = str(here / "baseline.json")
        victim = Path(files[role])
        target = {
            "same": str(victim),
            "dot": str(here / "." / victim.name),
            "symlink": str(here / "alias.json"),
            "hardlink": str(here / "linked.json"),
        }[alias]
        if alias == "symlink":
            os.symlink(victim, target)
        elif alias == "hardlink":
            os.link(victim, target)
        before = victim.read_bytes()
        reads = ["--policy", files["policy"], "--config", files["settings"],
                 "--prices", files["prices"], "--baseline", files["baseline"]]  # fmt: skip
        what = [files["job"]] if command == "check" else ["--inventory", files["inventory"]]
        out = [how, target if how == "-o" else f"json={target}"]
        result = invoke([command, *what, *reads, "--format", "json", *out])
        inputs = [*files.values(), target]

        def promises() -> None:
            check_run(result, inputs, "json", f"{command} {role} as {alias} via {how}")
            if (command, role) in (("check", "inventory"), ("scan", "job")):
                return  # not an input of this command: writing it is allowed
            if victim.read_bytes() != before:
                raise Broken(f"{command} replaced its {role} given as {alias} to {how}")
            said = [line for line in result.stderr.splitlines() if "input of this run" in line]
            if result.exit_code != 2 or len(said) != 1:
                raise Broken(f"{command}: {role} as {alias}: exit {result.exit_code}, {said}")

        _kept(promises)


# -- merge with many shards missing ------------------------------------------------------------


@st.composite
def sharded_runs(draw: st.DrawFn) -> tuple[int, dict[int, tuple[str, ...]], tuple[str, ...]]:
    count = draw(st.one_of(st.integers(2, 70), st.integers(1_000, 100_000)))
    sizes = {p: draw(st.integers(0, 400)) for p in ("aws", "gcp", "azure")}
    universe = tuple(sorted(f"{p}:{n:06d}" for p, size in sizes.items() for n in range(size)))
    present = draw(st.lists(st.integers(1, count), min_size=1, max_size=3, unique=True))
    held: dict[int, tuple[str, ...]] = {}
    at = 0
    for index in present:  # each present shard held a slice (the merge trusts the stamp)
        size = draw(st.integers(0, max(0, len(universe) - at)))
        held[index] = universe[at : at + size]
        at += size
    return count, held, universe


@_SMALL
@given(run=sharded_runs())
def test_merge_says_many_missing_shards_in_a_few_clipped_lines(
    run: tuple[int, dict[int, tuple[str, ...]], tuple[str, ...]],
) -> None:
    from gpu_audit.audit import audit
    from gpu_audit.catalog.basis import price_basis
    from gpu_audit.collectors.workitems import universe_digest
    from gpu_audit.core.results import Scope, ShardStamp
    from gpu_audit.policy.digest import policy_digest
    from gpu_audit.policy.loader import load_policy
    from gpu_audit.report import json as json_report

    count, held, universe = run
    policy = load_policy(None)
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for index, keys in held.items():
            stamp = ShardStamp(index=index, count=count, universe_digest=universe_digest(universe),
                               universe=universe, policy_digest=policy_digest(policy),
                               price_basis=price_basis(), held=keys)  # fmt: skip
            scope = Scope(command="scan", providers=("aws",), shard=stamp)
            result = audit([], policy, datetime(2026, 11, 25, tzinfo=UTC), scope)
            paths.append(write(Path(tmp), f"s{index}.json", json_report.render(result)))
        result = invoke(["merge", *paths, "--format", "json", "--fail-on", "none"])
        read = {key for keys in held.values() for key in keys}

        def promises() -> None:
            check_run(result, paths, "json", f"{len(held)} of {count} shards")
            missing = count - len(held)
            if missing == 0:
                return
            lines = [line for line in result.stderr.splitlines() if "ShardMissing" in line]
            if result.exit_code != 3 or not 1 <= len(lines) <= 3:
                raise Broken(f"exit {result.exit_code}, {len(lines)} gap lines for {missing}")
            for line in lines:
                if len(line) > CLIP:
                    raise Broken(f"a {len(line)}-character gap line")
            for provider in ("aws", "gcp", "azure"):
                unread = sum(1 for k in universe if k.startswith(f"{provider}:") and k not in read)
                mine = [
                    line for line in lines if line.startswith(f"gpu-audit: incomplete: {provider} ")
                ]
                if unread and not (mine and f"; {unread:,} work item" in mine[0]):
                    raise Broken(f"{provider}: {unread} unread items not counted: {lines}")

        _kept(promises)
