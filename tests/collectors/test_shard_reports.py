"""Shard reports without a cloud: the stamp validates, reads back, and `merge` keeps a resource
two shards saw once, recomputes the summary, and names a missing shard's work items."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner

from gpu_audit.audit import audit
from gpu_audit.catalog.basis import price_basis
from gpu_audit.cli import main
from gpu_audit.collectors.workitems import shard_of, split, universe_digest
from gpu_audit.core.resource import Capacity, Kind, Resource, State
from gpu_audit.core.results import Scope, ShardStamp
from gpu_audit.errors import InputError
from gpu_audit.policy.digest import policy_digest
from gpu_audit.policy.loader import load_policy
from gpu_audit.report import json as json_report
from gpu_audit.shards.reports import missing_gaps, read_shards

NOW = datetime(2026, 11, 25, 12, tzinfo=UTC)
UNIVERSE = tuple(sorted(f"aws:{a}:{r}" for a in ("111111111111", "222222222222", "333333333333")
                        for r in ("us-east-1", "eu-west-1")))  # fmt: skip


def instance(n: int, key: str, capacity: Capacity = Capacity.ON_DEMAND) -> Resource:
    _, account, region = key.split(":")
    return Resource(
        kind=Kind.INSTANCE,
        provider="aws",
        service="ec2",
        id=f"i-{n:017x}",
        account=account,
        region=region,
        instance_type="p4d.24xlarge",
        state=State.RUNNING,
        capacity=capacity,
        tags={"workload": "training"},
        launched_at=NOW - timedelta(hours=30),
    )


def stamp(index: int, count: int = 3) -> ShardStamp:
    policy = load_policy(None)
    return ShardStamp(
        index=index,
        count=count,
        universe_digest=universe_digest(UNIVERSE),
        universe=UNIVERSE,
        policy_digest=policy_digest(policy),
        price_basis=price_basis(),
    )


def write(path: Path, index: int, resources: list[Resource], count: int = 3) -> str:
    scope = Scope(command="scan", providers=("aws",), shard=stamp(index, count))
    result = audit(resources, load_policy(None), NOW, scope)
    path.write_text(json_report.render(result))
    return str(path)


def fleet() -> dict[int, list[Resource]]:
    held: dict[int, list[Resource]] = {k: [] for k in (1, 2, 3)}
    for n, key in enumerate(UNIVERSE):
        held[shard_of(key, 3)].append(
            instance(n, key, Capacity.SPOT if n % 2 else Capacity.ON_DEMAND)
        )
    return held


def test_a_shard_report_validates_and_reads_back(tmp_path: Path) -> None:
    path = write(tmp_path / "s1.json", 1, fleet()[1])
    document: dict[str, Any] = json.loads(Path(path).read_text())
    schema = json.loads(
        (Path(json_report.__file__).parent / "report-v3.schema.json").read_text("utf-8")
    )
    jsonschema.Draft202012Validator(schema).validate(document)
    assert document["scope"]["shard"]["universe"] == list(UNIVERSE)
    (report,) = read_shards([path])
    assert report.stamp == stamp(1)
    document["scope"]["shard"]["universe"].pop()  # a universe edited after the fact
    Path(path).write_text(json.dumps(document))
    with pytest.raises(InputError, match="universe: does not match universe_digest"):
        list(read_shards([path]))


def test_merge_keeps_a_resource_two_shards_saw_once(tmp_path: Path) -> None:
    held = fleet()
    twice = held[1][0]
    paths = [
        write(tmp_path / f"s{k}.json", k, [*held[k], *([twice] if k == 2 else [])])
        for k in (1, 2, 3)
    ]
    whole = audit(
        [r for k in (1, 2, 3) for r in held[k]], load_policy(None), NOW, Scope(command="scan")
    )
    result = CliRunner().invoke(main, ["merge", *paths, "--format", "json", "--fail-on", "none"])
    assert result.exit_code == 0, result.output
    merged = json.loads(result.stdout)
    assert sorted(r["id"] for r in merged["resources"]) == sorted(r.id for r in whole.resources)
    assert merged["summary"]["resources"] == len(UNIVERSE)
    expected = json.loads(json_report.render(whole))["summary"]
    assert merged["summary"] == expected  # judged on the union, not added up
    assert merged["generated_at"] == "2026-11-25T12:00:00Z"  # as of the shards' time


def test_missing_shards_name_their_items() -> None:
    gaps = missing_gaps(stamp(1), {1})
    shards = split(UNIVERSE, 3)
    unread = sorted([*shards[2], *shards[3]])
    (gap,) = gaps  # one gap per provider, however many shards are missing
    assert (gap.provider, gap.scope, gap.error) == ("aws", "2 of 3 shards", "ShardMissing")
    noun = "work item" if len(unread) == 1 else "work items"
    assert gap.message == (
        f"2 of 3 shards missing: 2/3, 3/3; {len(unread)} {noun} not read: {', '.join(unread)}"
    )
    (one,) = missing_gaps(stamp(1), {1, 3})
    assert one.scope == "shard 2/3" and one.message.startswith("shard 2/3: report missing; ")
    empty = replace(stamp(1, 64), universe=UNIVERSE)
    (said,) = {g.message.split(";")[0] for g in missing_gaps(empty, {1})}
    assert said == "63 of 64 shards missing: 2/64, 3/64, 4/64, 5/64, 6/64 and 58 more"
    assert missing_gaps(stamp(1), {1, 2, 3}) == []


def test_the_held_keys_find_what_hashing_finds() -> None:
    """The linear path (the present shards' `held`) and the plain one (each item hashed) agree."""
    universe = tuple(sorted(f"aws:{n:012d}:us-east-1" for n in range(300)))
    for count, present in ((7, {2, 5}), (64, {1, 2, 3}), (5, {1, 2, 3, 4})):
        base = replace(stamp(1, count), universe=universe)
        held = {key for key in universe if shard_of(key, count) in present}
        assert missing_gaps(base, present, held) == missing_gaps(base, present, None)


def test_merge_of_3_of_100000_shards_says_it_in_a_few_lines(tmp_path: Path) -> None:
    """Shards that name what they held: the missing items are the rest of the universe (no
    item is hashed against 100,000 shards), said in one clipped line per provider."""
    universe = tuple(sorted(f"{p}:{n:012d}" for p in ("aws", "gcp") for n in range(3000)))
    held = {1: universe[:2], 2: universe[2:4], 3: universe[3000:3001]}
    paths = []
    for index in (1, 2, 3):
        mine = replace(stamp(index, 100_000), universe=universe, held=held[index])
        mine = replace(mine, universe_digest=universe_digest(universe))
        scope = Scope(command="scan", providers=("aws",), shard=mine)
        result = audit([], load_policy(None), NOW, scope)
        paths.append(tmp_path / f"s{index}.json")
        paths[-1].write_text(json_report.render(result))
    run = CliRunner().invoke(main, ["merge", *map(str, paths), "--format", "json"])
    assert run.exit_code == 3, run.output
    lines = run.stderr.splitlines()
    assert len(lines) == 2 and all(len(line) < 600 for line in lines), lines
    assert "99,997 of 100,000 shards missing: 4/100000, 5/100000" in lines[0]
    assert "2,996 work items not read: aws:000000000004" in lines[0]
    assert "2,999 work items not read: gcp:000000000001" in lines[1]
    gaps = json.loads(run.stdout)["coverage_gaps"]
    assert [g["provider"] for g in gaps] == ["aws", "gcp"]


def test_a_stranger_is_refused_on_one_line_whatever_its_run_id(tmp_path: Path) -> None:
    one = write(tmp_path / "s1.json", 1, [])
    document = json.loads(Path(write(tmp_path / "s2.json", 2, [])).read_text())
    document["scope"]["shard"]["run_id"] = "nightly\n\x1b[31mgpu-audit: ok"
    Path(tmp_path / "s2.json").write_text(json.dumps(document))
    result = CliRunner().invoke(main, ["merge", one, str(tmp_path / "s2.json")])
    assert result.exit_code == 2
    (line,) = result.stderr.splitlines()
    assert line.endswith("run nightly\\x0a\\x1b[31mgpu-audit: ok vs None")


def _hostile_shard(tmp_path: Path, edit: Any) -> tuple[str, str]:
    held = fleet()
    good = write(tmp_path / "s1.json", 1, held[1])
    document = json.loads(Path(write(tmp_path / "s2.json", 2, held[2])).read_text())
    edit(document)
    bad = tmp_path / "s2.json"
    bad.write_text(json.dumps(document, indent=2))
    return good, str(bad)


@pytest.mark.parametrize(
    ("edit", "said"),
    [
        (lambda d: d.__setitem__("generated_at", "\x1b[2J"), "generated_at: expected a time"),
        (lambda d: d.__setitem__("generated_at", 1700000000), "generated_at: expected a time"),
        (
            lambda d: d.__setitem__("generated_at", "0001-01-01T00:00:00+05:00"),
            "generated_at: is out of range",
        ),
        (lambda d: d["scope"]["shard"].__setitem__("index", "2"), "scope.shard.index: expected"),
        (lambda d: d["scope"]["shard"].pop("count"), "scope.shard.count: expected"),
        (lambda d: d["scope"]["shard"].__setitem__("universe", None), "scope.shard.universe"),
        (lambda d: d["scope"]["shard"].__setitem__("run_id", 7), "scope.shard.run_id"),
        (lambda d: d["scope"]["shard"].__setitem__("policy_digest", []), "policy_digest"),
        (lambda d: d["scope"]["shard"].__setitem__("held", "aws:1"), "scope.shard.held: expected"),
        (
            lambda d: d["scope"]["shard"].__setitem__("held", ["aws:9:\x1b[2J" + "x" * 9000]),
            "scope.shard.held: 'aws:9:\\x1b[2Jxxx",
        ),
    ],
)
def test_a_malformed_stamp_or_time_is_one_located_line(
    tmp_path: Path, edit: Any, said: str
) -> None:
    good, bad = _hostile_shard(tmp_path, edit)
    done = CliRunner().invoke(main, ["merge", good, bad, "--format", "json"])
    assert done.exception is None or isinstance(done.exception, SystemExit), done.exception
    assert done.exit_code == 2
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"gpu-audit: error: {bad}:") and said in line and "\x1b" not in line
    field = said.split(":")[0].rsplit(".", 1)[-1]
    lines = Path(bad).read_text().splitlines()
    number = int(line.removeprefix(f"gpu-audit: error: {bad}:").split(":")[0])
    assert f'"{field}"' in lines[number - 1] or field == "count"  # the line the key is on
    assert '"shard"' in lines[number - 1] or field != "count"  # missing: the stamp's line


def test_a_naive_judging_time_merges_with_aware_ones(tmp_path: Path) -> None:
    good, other = _hostile_shard(
        tmp_path, lambda d: d.__setitem__("generated_at", "2026-11-25T12:00:00")
    )
    done = CliRunner().invoke(main, ["merge", good, other, "--format", "json"])
    assert done.exception is None or isinstance(done.exception, SystemExit), done.exception
    assert done.exit_code == 3  # shard 3 is missing


@pytest.mark.parametrize("field", ["policy_digest", "price_basis"])
def test_a_strangers_digest_comes_back_clipped(tmp_path: Path, field: str) -> None:
    """The merge's own policies and prices against the first shard's: one clipped line."""
    huge = "sha256:" + "f" * 400_000 + "\x1b[2J"
    _, bad = _hostile_shard(tmp_path, lambda d: d["scope"]["shard"].__setitem__(field, huge))
    done = CliRunner().invoke(main, ["merge", bad, "--format", "json"])
    assert done.exit_code == 2
    (line,) = done.stderr.splitlines()
    assert len(line) < 800 + len(bad) and "\x1b" not in line and "differ" in line
