"""Every job-config fixture against its `.expected.yaml` (the scheme is in fixtures/jobs/README.md)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from enum import Enum
from functools import cache
from operator import attrgetter
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpu_audit.core.resource import Resource
from gpu_audit.jobs import FORMATS, load_jobs
from gpu_audit.policy.engine import evaluate
from gpu_audit.policy.loader import Policy, load_policy

ROOT = Path(__file__).resolve().parents[2] / "fixtures" / "jobs"
SUFFIX = ".expected.yaml"
EXPECTED = sorted(ROOT.rglob(f"*{SUFFIX}"))
# The rule of fixtures/jobs/README.md: other tests run `gpu-audit check` over the whole folder.
ONLY_GOOD_INPUT = (
    "every file under fixtures/jobs/ must pass `gpu-audit check` (other tests check the whole "
    "folder); an input that must be refused belongs in tests/test_robustness.py"
)


def _config_of(expected: Path) -> Path:
    stem = expected.name[: -len(SUFFIX)]
    found = [
        path
        for path in expected.parent.iterdir()
        if path.is_file() and not path.name.endswith(SUFFIX) and _stem(path) == stem
    ]
    assert len(found) == 1, f"{expected}: expected one config beside it, found {found}"
    return found[0]


def _stem(path: Path) -> str:
    name = path.name
    for suffix in (".dstack.yml", ".yaml", ".yml", ".json"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return path.stem


def _value(resource: Resource, field: str) -> Any:
    if field.startswith("tags."):
        return resource.tags.get(field[len("tags.") :])
    value = attrgetter(field)(resource)
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, tuple):
        return list(value)
    return value


@pytest.mark.parametrize("expected_path", EXPECTED, ids=lambda p: str(p.relative_to(ROOT)))
def test_fixture(expected_path: Path) -> None:
    expected = yaml.safe_load(expected_path.read_text()) or {}
    config = _config_of(expected_path)
    load = load_jobs([str(config)])
    assert load.files == (str(config),)
    if "skipped" in expected:
        want = expected["skipped"]
        assert not want.get("error"), f"{config}: {ONLY_GOOD_INPUT}"
        assert not load.resources, f"expected a skip, got {load.resources}"
        assert len(load.skipped) == 1, load.skipped
        skipped = load.skipped[0]
        assert skipped.error is bool(want.get("error", False)), skipped
        assert want["reason"] in skipped.reason, skipped.reason
        return
    assert not load.skipped, load.skipped
    wanted = expected.get("resources") or []
    assert len(load.resources) == len(wanted), [r.name for r in load.resources]
    for index, (resource, want) in enumerate(zip(load.resources, wanted, strict=True)):
        where = f"{config.name} resource {index}"
        assert resource.kind.value == "job"
        assert resource.provider == want["provider"], where
        if "name" in want:
            assert resource.name == want["name"], where
        assert resource.source.path == str(config)
        assert resource.source.document == want.get("document", 0), where
        if "line" in want:
            assert resource.source.line == want["line"], where
        for field, value in (want.get("fields") or {}).items():
            assert _value(resource, field) == value, f"{where}: {field}"
        for field, line in (want.get("lines") or {}).items():
            assert resource.source.key_lines.get(field) == line, f"{where}: line of {field}"
        if "note" in want:
            assert want["note"] in (resource.source.note or ""), where
        if "suppressions" in want:
            got = {line: dict(rules) for line, rules in resource.source.suppressions.items()}
            assert got == {int(k): v for k, v in want["suppressions"].items()}, where
        _check_verdicts(resource, want, where)


@cache
def _runbook() -> Policy:
    return load_policy(None)


def _check_verdicts(resource: Resource, want: dict[str, Any], where: str) -> None:
    """`verdicts: {rule: pass|fail|not-evaluated}` and `finding_lines: {rule: line}` under the
    runbook pack; `pass` is no finding (met, or out of the rule's scope)."""
    if "verdicts" not in want and "finding_lines" not in want:
        return
    result = evaluate([resource], _runbook(), datetime(2026, 11, 20, 6, tzinfo=UTC))
    failed = {f.rule_id: f.line for f in result.findings}
    unknown = {n.rule_id for n in result.not_evaluated}
    for rule, verdict in (want.get("verdicts") or {}).items():
        got = "fail" if rule in failed else "not-evaluated" if rule in unknown else "pass"
        assert got == verdict, f"{where}: {rule}"
    for rule, line in (want.get("finding_lines") or {}).items():
        assert failed.get(rule) == line, f"{where}: line of the {rule} finding"


def formats_without_fixtures(formats: Iterable[str]) -> list[str]:
    """The fixture folders these formats lack, as `fixtures/jobs/<format>/`."""
    folders = {path.parent.name for path in EXPECTED}
    return [f"fixtures/jobs/{name}/" for name in sorted(set(formats) - folders)]


def test_every_format_has_fixtures() -> None:
    missing = formats_without_fixtures(FORMATS)
    assert not missing, f"formats without fixtures (fixtures/jobs/README.md): {missing}"


def test_every_fixture_passes_check() -> None:
    configs = [str(_config_of(path)) for path in EXPECTED]
    errors = [f"{s.path}: {s.reason}" for s in load_jobs(configs).skipped if s.error]
    assert not errors, f"{ONLY_GOOD_INPUT}: {errors}"


def test_every_config_has_expectations() -> None:
    # Any file a format's syntax takes (jobs/syntax.py), not a hand-kept list of YAML suffixes.
    suffixes = {s for fmt in FORMATS.values() for s in (*fmt.syntax.suffixes, *fmt.syntax.sniffed)}
    configs = [
        path
        for path in ROOT.rglob("*")
        if path.is_file() and path.suffix.lower() in suffixes and not path.name.endswith(SUFFIX)
    ]
    lacking = [str(p.relative_to(ROOT)) for p in configs if not _expected_of(p).exists()]
    assert not lacking, f"fixtures without a .expected.yaml: {lacking}"


def _expected_of(config: Path) -> Path:
    return config.with_name(_stem(config) + SUFFIX)
