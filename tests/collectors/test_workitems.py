"""Work items and shards: disjoint, complete, stable; `--shard` parsing and `auto/N`."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpu_audit.collectors.aws.sessions import Target
from gpu_audit.collectors.aws.settings import AwsSettings
from gpu_audit.collectors.aws.universe import work_items
from gpu_audit.collectors.workitems import (
    Shard,
    parse_shard,
    shard_of,
    split,
    universe_digest,
)
from gpu_audit.errors import ConfigError

REGIONS = ("eu-west-1", "us-east-1", "us-west-2", "ap-south-1")
UNIVERSE = [f"aws:{100000000000 + n}:{r}" for n in range(300) for r in REGIONS]


@pytest.mark.parametrize("count", [1, 2, 7, 64])
def test_shards_are_disjoint_and_their_union_is_the_universe(count: int) -> None:
    shards = split(UNIVERSE, count)
    assert sorted(shards) == list(range(1, count + 1))
    joined = [key for keys in shards.values() for key in keys]
    assert len(joined) == len(set(joined)) == len(UNIVERSE)
    assert set(joined) == set(UNIVERSE)
    for index, keys in shards.items():  # Shard.holds agrees with the split
        assert all(Shard(index, count).holds(k) for k in keys)
    if count <= 7:  # 1,200 items: every shard gets a fair share (rendezvous is uniform)
        sizes = [len(keys) for keys in shards.values()]
        assert max(sizes) < 1.3 * len(UNIVERSE) / count


def test_an_item_stays_on_its_shard_when_others_come_and_go() -> None:
    before = {k: shard_of(k, 7) for k in UNIVERSE}
    grown = UNIVERSE + [f"aws:999999999999:{r}" for r in REGIONS]
    shrunk = UNIVERSE[::3]
    assert {k: shard_of(k, 7) for k in grown if k in before} == before
    assert {k: shard_of(k, 7) for k in shrunk} == {k: before[k] for k in shrunk}


def test_one_more_shard_moves_only_the_items_it_wins() -> None:
    moved = [k for k in UNIVERSE if shard_of(k, 7) != shard_of(k, 8)]
    assert all(shard_of(k, 8) == 8 for k in moved)
    assert 0.08 < len(moved) / len(UNIVERSE) < 0.18  # ~1/8, where `mod N` would move ~7/8


keys = st.lists(st.text(min_size=1, max_size=30), min_size=0, max_size=60, unique=True)


@settings(max_examples=60, deadline=None)
@given(universe=keys, count=st.integers(min_value=1, max_value=40), extra=keys)
def test_property_partition_and_stability(
    universe: list[str], count: int, extra: list[str]
) -> None:
    shards = split(universe, count)
    owners = {key: index for index, held in shards.items() for key in held}
    assert sorted(owners) == sorted(universe)  # every key in exactly one shard
    assert sum(len(held) for held in shards.values()) == len(universe)
    bigger = split([*universe, *extra], count)  # adding items never moves an existing one
    assert all(key in bigger[owners[key]] for key in universe)
    assert universe_digest(universe) == universe_digest(reversed(universe))


def test_digest_is_of_the_set_of_keys() -> None:
    assert universe_digest(["b", "a", "a"]) == universe_digest(["a", "b"])
    assert universe_digest(["a"]) != universe_digest(["a", "b"])


@pytest.mark.parametrize(
    ("text", "environ", "expected"),
    [
        ("2/8", {}, Shard(2, 8)),
        (" 1 / 1 ", {}, Shard(1, 1)),
        ("auto/3", {"JOB_COMPLETION_INDEX": "0"}, Shard(1, 3)),
        ("auto/3", {"AWS_BATCH_JOB_ARRAY_INDEX": "2"}, Shard(3, 3)),
        ("auto/3", {"AWS_BATCH_JOB_ARRAY_INDEX": "1", "JOB_COMPLETION_INDEX": ""}, Shard(2, 3)),
    ],
)
def test_parse_shard(text: str, environ: dict[str, str], expected: Shard) -> None:
    assert parse_shard(text, environ) == expected


@pytest.mark.parametrize(
    ("text", "environ", "message"),
    [
        (
            "auto/3",
            {},
            "needs exactly one of JOB_COMPLETION_INDEX or AWS_BATCH_JOB_ARRAY_INDEX; "
            "neither is set",
        ),
        ("auto/3", {"JOB_COMPLETION_INDEX": "0", "AWS_BATCH_JOB_ARRAY_INDEX": "0"}, "both are set"),
        ("auto/3", {"JOB_COMPLETION_INDEX": "3"}, "shard 4 is not between 1 and 3"),
        ("auto/3", {"JOB_COMPLETION_INDEX": "-1"}, "is not a 0-based index"),
        ("0/3", {}, "shard 0 is not between 1 and 3"),
        ("4/3", {}, "shard 4 is not between 1 and 3"),
        ("1/0", {}, "N must be between 1 and"),
        ("2", {}, "expected K/N"),
    ],
)
def test_bad_shards_are_refused_on_one_line(
    text: str, environ: dict[str, str], message: str
) -> None:
    with pytest.raises(ConfigError, match=message) as caught:
        parse_shard(text, environ)
    assert "\n" not in str(caught.value)


def test_aws_items_from_settings() -> None:
    aws = AwsSettings(
        role_arns=("arn:aws:iam::{account}:role/audit",),
        accounts=("222222222222", "111111111111"),
        profiles=("dev",),
        regions=("us-west-2", "us-east-1"),
    )
    assert work_items(aws, lambda: pytest.fail("no Organizations call")) == [
        "aws:111111111111:us-east-1",
        "aws:111111111111:us-west-2",
        "aws:222222222222:us-east-1",
        "aws:222222222222:us-west-2",
        "aws:profile/dev:us-east-1",
        "aws:profile/dev:us-west-2",
    ]
    organization = AwsSettings(organization_role="audit")  # no regions: the account is the item
    assert work_items(organization, lambda: ["333333333333"]) == ["aws:333333333333"]
    assert work_items(AwsSettings(regions=("us-east-1",)), list) == ["aws:default:us-east-1"]
    assert Target("x").account_hint is None
