"""An audit's resources survive the database: every canonical field, the source, the note."""

from __future__ import annotations

from gpu_audit.collectors.inventory import load_inventory
from gpu_audit.core.canonical import to_mapping
from gpu_audit.history.documents import encode_checks, pack, unpack, unpack_checks
from gpu_audit.jobs import load_jobs
from tests.conftest import FIXTURES


def test_resources_round_trip_in_chunks() -> None:
    resources = list(load_inventory(str(FIXTURES / "inventory" / "demo.yaml")).resources)
    jobs = sorted((FIXTURES / "jobs").glob("*/*.yaml"))
    resources += load_jobs([str(p) for p in jobs if ".expected." not in p.name]).resources
    assert any(r.source.path for r in resources) and any(r.tags for r in resources)
    for chunk in (1, 7, 2000):
        back = unpack(pack(resources, chunk))
        assert [to_mapping(r) for r in back] == [to_mapping(r) for r in resources]
    assert unpack(pack([])) == []


def test_not_evaluated_checks_round_trip_in_order() -> None:
    checks = [("gpu-idle", 3, "utilization.gpu_avg"), ("spot", 0, "capacity"), ("gpu-idle", 0, "x")]
    columns = [[check[i] for check in checks] for i in range(3)]
    assert unpack_checks(encode_checks(*columns)) == checks
    assert unpack_checks(encode_checks([], [], [])) == []
