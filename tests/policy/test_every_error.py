"""Every policy error at once, each one located line, with a did-you-mean where a name is
close; keys that are not text, dates given to `extends:` and huge values never break it."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from gpu_audit.cli.main import main

BAD = """\
version: 1
extends: runbok
rules:
  - id: r-one
    severity: hgh
    require: {capacity: spot}
    savings: spott
  - id: r-two
    severity: high
    require: {capacity: spot}
    savigns: spot
  - id: r-three
    severity: high
    require: {gpu.modle: H100}
disable: [idle-gpu]
waivers:
  - rule: r-thre
    reason: x
    owner: y
    expires: 2027-01-01
"""


def _validate(tmp_path: Path, body: str) -> tuple[int, list[str]]:
    path = tmp_path / "p.yaml"
    path.write_text(body)
    result = CliRunner().invoke(main, ["policies", "validate", str(path)])
    assert result.exception is None or isinstance(result.exception, SystemExit)
    return result.exit_code, result.stderr.splitlines()


def test_every_error_is_reported_each_on_its_own_located_line(tmp_path: Path) -> None:
    code, lines = _validate(tmp_path, BAD)
    assert code == 2
    assert all(line.startswith(f"gpu-audit: error: {tmp_path / 'p.yaml'}:") for line in lines)
    text = "\n".join(lines)
    expected = [
        ":2: policy: extends: no policy file 'runbok' (did you mean 'runbook'?)",
        ":5: rule 'r-one': severity: 'hgh' is not one of info, low, medium, high, critical "
        "(did you mean 'high'?)",
        ":7: rule 'r-one': savings: unknown saving 'spott' (did you mean 'spot'?); one of spot, "
        "stop, downsize, unallocated, minimum, slice, failed-trials, lost-work, mixed-precision, smaller-shape, input-pipeline, locality, startup, or {downsize: GPU-CLASS}",
        ":11: rule 'r-two': savigns: unknown key 'savigns' (did you mean 'savings'?)",
        ":14: rule 'r-three': gpu.modle: unknown field 'gpu.modle' (did you mean 'gpu.model'?)",
        ":15: policy: disable: unknown rule 'idle-gpu'",
        ":17: waiver: rule: unknown rule 'r-thre' (did you mean 'r-three'?)",
    ]
    for message in expected:
        assert message in text, text
    assert len(lines) == len(expected)
    assert "is not valid under any of the given schemas" not in text


def test_scan_reports_every_policy_error_too(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(BAD)
    result = CliRunner().invoke(main, ["check", "--policy", str(path), str(tmp_path)])
    assert result.exit_code == 2
    assert len([x for x in result.stderr.splitlines() if x.startswith("gpu-audit: error:")]) == 7


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("version: 1\nrules:\n  - id: a\n    severity: high\n    require: {capacity: spot}\n"
         "    8: x\n", ":6: rule 'a': 8: a key must be text, got a number (quote it)"),
        ("version: 1\nrules:\n  - id: a\n    severity: high\n    require: {capacity: spot, "
         "true: 1}\n", ":5: rule 'a': true: a key must be text, got true/false (quote it)"),
        ("version: 1\ntrue: x\nrules: []\n", ":2: policy: true: a key must be text"),
        ("version: 1\nrules: []\nwaivers:\n  - {rule: '*', reason: r, owner: o, expires: "
         "2027-01-01, where: {7: x}}\n", ":4: waiver #1: 7: a key must be text"),
        ("version: 1\nextends: 2026-01-01\nrules: []\n",
         ":2: policy: extends: expected a pack name or a policy file, got a date '2026-01-01' "
         "(quote it)"),
        ("version: 1\nextends: [runbook, 2026-01-01]\nrules: []\n",
         ":2: policy: extends: expected a pack name or a policy file, got a date"),
    ],
)  # fmt: skip
def test_keys_that_are_not_text_and_dates_in_extends_are_one_line(
    tmp_path: Path, body: str, message: str
) -> None:
    code, lines = _validate(tmp_path, body)
    assert code == 2 and len(lines) == 1, lines
    assert message in lines[0]


def test_a_huge_value_is_clipped(tmp_path: Path) -> None:
    huge = "x" * 50_000
    body = (
        f"version: 1\nrules:\n  - id: a\n    severity: high\n    require:\n      capacity: {huge}\n"
    )
    code, lines = _validate(tmp_path, body)
    assert code == 2 and len(lines) == 1
    assert len(lines[0]) < 400 and "(50,000 chars)" in lines[0]


EIGHT_TYPOS = """\
version: 1
rules:
  - id: my-spot
    severity: hihg
    targets: [job]
    where: {workload: training}
    require: {capacty: spot}
  - id: my-cap
    severity: medium
    require: {gpu.model: {at-mots: A100-80GB}}
  - id: my-hours
    severity: low
    require: {all: [{uptime_hour: {gte: 24h}}, {gpu.cuont: {gte: 1}}]}
  - id: my-tags
    severity: low
    require: {tags.owner: {presnt: true}}
    savings: spto
waivers:
  - rule: my-spot
    reason: ok
    owner: me@example.com
    expires: 2027-13-45
  - rule: my-capp
    reason: ok
    owner: me@example.com
    expires: 2027-01-01
"""


def test_eight_typos_are_eight_lines_of_one_run_in_line_order(tmp_path: Path) -> None:
    """Issue 38.9: a bad date hid the rest, and fields and operators came one per run."""
    code, lines = _validate(tmp_path, EIGHT_TYPOS)
    assert code == 2
    where = [int(line.split(":")[3]) for line in lines]  # gpu-audit: error: PATH:LINE: …
    assert where == [4, 7, 10, 13, 13, 16, 17, 22, 23]  # every mistake, in line order
    text = "\n".join(lines)
    for said in (
        "severity: 'hihg' is not one of info, low, medium, high, critical (did you mean 'high'?)",
        "capacty: unknown field 'capacty' (did you mean 'capacity'?)",
        "at-mots: unknown operator 'at-mots' (did you mean 'at-most'?)",
        "uptime_hour: unknown field 'uptime_hour' (did you mean 'uptime_hours'?)",
        "gpu.cuont: unknown field 'gpu.cuont' (did you mean 'gpu.count'?)",
        "presnt: unknown operator 'presnt' (did you mean 'present'?)",
        "savings: unknown saving 'spto'",
        "waiver #1: expires: expected a date (YYYY-MM-DD), got '2027-13-45'",
        "waiver: rule: unknown rule 'my-capp' (did you mean 'my-cap'?)",
    ):
        assert said in text
    check = CliRunner().invoke(
        main, ["check", "fixtures/estimate", "--policy", f"{tmp_path}/p.yaml"]
    )
    assert check.exit_code == 2 and check.stderr.splitlines() == lines  # check says the same
