"""Property-based: any shape of Azure inventory row reads as Resources or one coverage gap.

Real rows (tests/collectors/azure_fixtures.py builds them as ARM and Resource Graph return them)
get values replaced, deleted or wrapped; the mapping's reader (`read_row`, what the collector
calls for every row) must answer Resources or a CoverageGap naming the row, never raise, and
what it answers must be judged and written as a report that validates.
"""

from __future__ import annotations

import copy
import sys
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpu_audit.audit import audit
from gpu_audit.collectors.azure.mapping import (
    compute_resource,
    read_row,
    scale_set_resources,
    vm_resource,
)
from gpu_audit.core.resource import Resource
from gpu_audit.core.results import CoverageGap, Scope
from gpu_audit.policy.loader import load_policy
from gpu_audit.report import json as json_report
from gpu_audit.report.escape import UNSAFE
from tests.conftest import FIXTURES
from tests.fuzz.hostile import value_paths
from tests.fuzz.promises import strict_json, validate

# azure_fixtures imports its server module as pytest's rootdir mode does inside tests/collectors
sys.path.insert(0, str(FIXTURES.parent / "tests" / "collectors"))
from azure_fixtures import SUB_A, cluster, instance, scale_set, vm, workspace

pytestmark = pytest.mark.slow

NOW = datetime(2026, 11, 20, 6, tzinfo=UTC)
_WS = workspace(SUB_A, "ws")
_SIZE = "Standard_ND96asr_v4"
SEEDS = [
    (vm_resource, vm(SUB_A, "a", _SIZE, priority="Spot", zones=["1"], tags={"workload": "x"})),
    (vm_resource, vm(SUB_A, "b", "Standard_NC4as_T4_v3", power="stopped")),
    (
        scale_set_resources,
        scale_set(
            SUB_A,
            "s",
            "Standard_NC24ads_A100_v4",
            5,
            priority="Spot",
            mix={"baseRegularPriorityCount": 1, "regularPriorityPercentageAboveBase": 50},
        ),
    ),
    (compute_resource, cluster(_WS, "c", "Standard_NC24ads_A100_v4", current=2, minimum=1)),
    (compute_resource, instance(_WS, "i", "Standard_NC6s_v3")),
]
HOSTILE = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**20), max_value=10**20),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=30),
    st.sampled_from(
        [
            "9999-12-31T23:59:59-05:00",
            "0001-01-01T00:00:00+05:00",
            "2026-02-30T00:00:00Z",
            "PowerState/\x1b[2J",
            "Standard_N\u202e",
            "Spot",
            "Low",
            "-1",
            "1" * 4301,
            "",
        ]
    ),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
)


@st.composite
def mutated_rows(draw: st.DrawFn) -> tuple[Any, Any]:
    read, seed = draw(st.sampled_from(SEEDS))
    row: Any = copy.deepcopy(seed)
    for _ in range(draw(st.integers(1, 4))):
        path = draw(st.sampled_from(value_paths(row)))
        op = draw(st.sampled_from(["hostile", "hostile", "delete", "wrap", "list"]))
        if not path:
            row = draw(HOSTILE) if op == "hostile" else [row] if op == "list" else row
            continue
        parent = row
        for step in path[:-1]:
            parent = parent[step]
        if op == "delete":
            del parent[path[-1]]
        elif op == "wrap":
            parent[path[-1]] = {"value": parent[path[-1]]}
        elif op == "list":
            parent[path[-1]] = [parent[path[-1]]]
        else:
            parent[path[-1]] = draw(HOSTILE)
    return read, row


@given(case=mutated_rows(), tag=st.sampled_from(["workload", "", "\x1b"]))
def test_any_row_reads_as_resources_or_one_gap(case: tuple[Any, Any], tag: str) -> None:
    read, row = case
    found = read_row(read, row, tag)  # an exception here is the defect this test looks for
    if isinstance(found, CoverageGap):
        assert found.provider == "azure" and found.error == "MalformedRow"
        # one inert line: no control, line-break or bidi character (an unassigned code point
        # is no danger to a terminal, so isprintable() would be too strict)
        assert not UNSAFE.search(found.message), found.message
        return
    assert all(isinstance(r, Resource) for r in found)
    result = audit(found, load_policy(None), NOW, Scope(command="scan", providers=("azure",)))
    where = f"\n--- row ---\n{row!r}"[:2000]
    validate("json", strict_json(json_report.render(result), where), where)
