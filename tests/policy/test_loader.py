"""Policy files: schema and semantic errors are one located line; extends, disable and waivers."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

import pytest

from gpu_audit.core.canonical import from_mapping
from gpu_audit.core.results import WaiverState
from gpu_audit.errors import PolicyError
from gpu_audit.policy.engine import evaluate
from gpu_audit.policy.loader import load_policy
from tests.conftest import NOW

GOOD_RULE = """
  - id: spot-only
    severity: high
    require: {capacity: spot}
"""


def write(tmp_path: Path, text: str, name: str = "p.yaml") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            "version: 1\nrules:\n  - id: r1\n    sevrity: high\n    require: {capacity: spot}\n",
            ":4: rule 'r1': sevrity: unknown key 'sevrity' (did you mean 'severity'?)",
        ),
        (
            "version: 1\nrules:\n  - id: r1\n    severity: hgih\n    require: {capacity: spot}\n",
            ":4: rule 'r1': severity: 'hgih' is not one of info, low, medium, high, critical",
        ),
        (
            "version: 1\nrules:\n  - id: r1\n    severity: high\n    require: {capacity: {gtee: 1}}\n",
            ":5: rule 'r1': gtee: unknown operator 'gtee' (did you mean 'gte'?)",
        ),
        (
            "version: 1\nrules:\n  - id: r1\n    severity: high\n    require: {gpu.modle: H100}\n",
            ":5: rule 'r1': gpu.modle: unknown field 'gpu.modle' (did you mean 'gpu.model'?)",
        ),
        (
            "version: 1\nrules:\n  - id: r1\n    severity: high\n"
            "    require: {gpu.model: {at-most: A100-90GB}}\n",
            ":5: rule 'r1': at-most: unknown GPU class 'A100-90GB'",
        ),
        (
            "version: 1\nrules:" + GOOD_RULE + GOOD_RULE,
            ":7: rule 'spot-only': id: duplicate id (first defined on line 3)",
        ),
        (
            "version: 1\nrules:\n  - id: r1\n    severity: high\n",
            ":3: rule 'r1': require: required key is missing",
        ),
        (
            "version: 1\nrules:\n  - id: Bad_Id\n    severity: high\n    require: {capacity: spot}\n",
            ":3: rule 'Bad_Id': id: 'Bad_Id' does not match",
        ),
        ("version: 2\nrules: []\n", ":1: policy: version: 1 was expected"),
        (
            "version: 1\nrules:" + GOOD_RULE + "waivers:\n  - rule: spot-only\n    reason: r\n"
            "    owner: o\n    expires: someday\n",
            ":10: waiver #1: expires: expected a date (YYYY-MM-DD), got 'someday'",
        ),
        (
            "version: 1\nrules:" + GOOD_RULE + "waivers:\n  - rule: spot-onyl\n    reason: r\n"
            "    owner: o\n    expires: 2027-01-01\n",
            ":7: waiver: rule: unknown rule 'spot-onyl'",
        ),
        ("version: 1\nrules: [\n", "invalid YAML"),
        (
            "version: 1\nrules:\n  - id: r1\n    severity: high\n    require: {not: null}\n",
            ":5: rule 'r1': not: must be a non-empty mapping of field: value",
        ),
        (
            "version: 1\nrules:\n  - id: r1\n    severity: high\n    require:\n      any:\n"
            "        - {capacity: spot}\n        - []\n",
            ":8: rule 'r1': 1: must be a non-empty mapping of field: value",
        ),
        ("version: 1\nextends: /\nrules: []\n", ":2: policy: extends: not a policy file '/'"),
        (
            "version: 1\nrules:\n  - id: r1\n    title: 2026-01-01\n    severity: high\n"
            "    require: {capacity: spot}\n",
            ":4: rule 'r1': title: expected text, got a date (quote it)",
        ),
        (
            "version: 1\nrules:\n  - id: r1\n    severity: high\n    require: {1: spot}\n",
            ":5: rule 'r1': 1: a key must be text, got a number (quote it)",
        ),
        (
            'version: 1\nrules:\n  - id: r1\n    severity: high\n    require: {gpu.count: {gte: "a\\nb"}}\n',
            ":5: rule 'r1': gte: expected a number, got 'a\\x0ab'",
        ),
        (
            "version: 1\nrules:\n  - id: r1\n    severity: high\n    aliases: [old, old]\n"
            "    require: {capacity: spot}\n",
            ":5: rule 'r1': aliases: duplicate alias 'old'",
        ),
        (
            "version: 1\nrules:" + GOOD_RULE + "waivers:\n  - rule: 2026-01-01\n    reason: r\n"
            "    owner: o\n    expires: 2027-01-01\n",
            ":7: waiver #1: rule: expected a rule id, got datetime.date(2026, 1, 1) (quote it)",
        ),
    ],
)
def test_errors_are_one_located_line(tmp_path: Path, body: str, expected: str) -> None:
    path = write(tmp_path, body)
    with pytest.raises(PolicyError) as raised:
        load_policy([path])
    message = str(raised.value)
    assert "\n" not in message
    assert message.startswith(path)
    assert expected in message


def test_schema_is_checked_again_when_the_cache_is_cold_or_content_changes(tmp_path: Path) -> None:
    path = write(tmp_path, "version: 1\nrules:" + GOOD_RULE)
    load_policy([path])
    load_policy([path])  # cached: skips the schema, still compiles
    write(tmp_path, "version: 1\nrules:\n  - id: r\n    severity: high\n    requires: {}\n")
    with pytest.raises(PolicyError, match="unknown key 'requires'"):
        load_policy([path])


def test_extends_layers_over_the_shipped_pack(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "version: 1\nextends: runbook\ndisable: [cost-allocation-tags]\nrules:\n"
        "  - id: idle-gpu\n    severity: critical\n    require: {utilization.gpu_p95: {gte: 20}}\n",
    )
    policy = load_policy([path])
    ids = [r.info.id for r in policy.rules]
    assert "cost-allocation-tags" not in ids
    assert "spot-for-training" in ids
    idle = next(r for r in policy.rules if r.info.id == "idle-gpu")
    assert idle.info.severity.label == "critical"
    assert len(policy.files) == 2 and policy.versions[0].startswith("runbook.yaml@2026.11")


def test_extends_relative_file_and_cycles(tmp_path: Path) -> None:
    write(tmp_path, "version: 1\nrules:" + GOOD_RULE, "base.yaml")
    child = write(tmp_path, "version: 1\nextends: base.yaml\n", "child.yaml")
    assert [r.info.id for r in load_policy([child]).rules] == ["spot-only"]
    loop = write(tmp_path, "version: 1\nextends: loop.yaml\n", "loop.yaml")
    with pytest.raises(PolicyError, match="circular extends"):
        load_policy([loop])
    missing = write(tmp_path, "version: 1\nextends: nowhere.yaml\n", "m.yaml")
    with pytest.raises(
        PolicyError, match=re.escape("m.yaml:2: policy: extends: no policy file 'nowhere.yaml'")
    ):
        load_policy([missing])


def test_waivers_apply_until_they_expire(tmp_path: Path) -> None:
    def waiver(expires: str, team: str) -> str:
        return (
            f"  - rule: spot-only\n    where: {{tags.team: {team}}}\n    reason: FIN-1\n"
            f"    owner: lead@example.com\n    expires: {expires}\n"
        )

    soon = (NOW + timedelta(days=10)).date().isoformat()
    past = (NOW - timedelta(days=1)).date().isoformat()
    path = write(
        tmp_path,
        "version: 1\nrules:"
        + GOOD_RULE
        + "waivers:\n"
        + waiver("2027-06-30", "a")
        + waiver(soon, "b")
        + waiver(past, "c"),
    )
    policy = load_policy([path])
    resources = [
        from_mapping(
            {"provider": "aws", "id": team, "capacity": "on-demand", "tags": {"team": team}}
        )
        for team in ("a", "b", "c", "d")
    ]
    result = evaluate(resources, policy, NOW)
    waived = {f.resource.id: f.waiver is not None for f in result.findings}
    assert waived == {"a": True, "b": True, "c": False, "d": False}
    states = [(s.state, s.matched) for s in result.waivers]
    assert states == [(WaiverState.ACTIVE, 1), (WaiverState.EXPIRING, 1), (WaiverState.EXPIRED, 1)]


def test_rule_aliases_keep_old_waivers_working(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "version: 1\nrules:\n  - id: spot-capacity\n    aliases: [spot-only]\n    severity: high\n"
        "    require: {capacity: spot}\nwaivers:\n  - rule: spot-only\n    reason: r\n"
        "    owner: o\n    expires: 2099-01-01\n",
    )
    policy = load_policy([path])
    result = evaluate(
        [from_mapping({"provider": "aws", "id": "i", "capacity": "on-demand"})], policy, NOW
    )
    assert result.findings[0].waiver is not None


def test_the_c7n_presence_shorthand_judges_a_fleet(tmp_path: Path) -> None:
    """`tags.owner: present` is the presence test, not equality with the word."""
    from datetime import UTC, datetime

    from gpu_audit.policy.engine import evaluate

    path = write(
        tmp_path,
        "version: 1\nrules:\n  - id: owner\n    severity: high\n"
        "    require: {tags.owner: present}\n  - id: no-temp\n    severity: low\n"
        "    require: {tags.temp: absent}\n",
    )
    fleet = [
        from_mapping({"provider": "aws", "id": f"i-{n}", "tags": tags})
        for n, tags in enumerate([{"owner": "a"}, {}, {"temp": "1"}, {"owner": "present"}])
    ]
    findings = evaluate(fleet, load_policy([path]), datetime.now(UTC)).findings
    assert sorted((f.rule_id, f.resource.id) for f in findings) == [
        ("no-temp", "i-2"),
        ("owner", "i-1"),
        ("owner", "i-2"),
    ]


def test_the_validation_cache_is_keyed_by_the_policy_and_the_schema(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A policy validated once skips the schema; the same text under a changed schema, or one
    byte more of policy, is validated again (the cache is never stale)."""
    from gpu_audit.policy import loader
    from gpu_audit.policy import validated as keys

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    validated: list[str] = []
    real = loader.schema_problems

    def counted(path: str, data: object) -> list:
        validated.append(path)
        return real(path, data)

    monkeypatch.setattr(loader, "schema_problems", counted)
    path = write(tmp_path, "version: 1\nrules:" + GOOD_RULE)
    load_policy([path])
    load_policy([path])
    assert validated == [path]  # the second read was known valid
    schema = keys._schema_bytes()
    monkeypatch.setattr(keys, "_schema_bytes", lambda: schema + b" ")
    load_policy([path])
    assert validated == [path, path]  # a new schema: validated again
    write(tmp_path, "version: 1\nrules:" + GOOD_RULE + "\n")
    load_policy([path])
    assert validated == [path, path, path]
