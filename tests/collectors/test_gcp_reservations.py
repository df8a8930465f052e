"""GCE reservations in a live scan: the real google-cloud-compute client against the GCE-shaped
loopback server (paged aggregated lists, a 403)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from gcp_fixtures import instance
from gcp_server import FakeGcp, serve
from reservation_fixtures import RESERVED, reserved_project

from gpu_audit.collectors.gcp.collector import GcpCollector
from gpu_audit.collectors.gcp.connect import (
    GCE_ENDPOINT_ENV,
    GCS_ENDPOINT_ENV,
    MONITORING_ENDPOINT_ENV,
    VERTEX_ENDPOINT_ENV,
)
from gpu_audit.collectors.gcp.settings import GcpSettings
from gpu_audit.core.resource import Capacity, Kind, Resource, State
from gpu_audit.core.results import CoverageGap

AHEAD = datetime.now(UTC).replace(microsecond=0) + timedelta(days=7)


@pytest.fixture
def fake() -> Iterator[FakeGcp]:
    fake = FakeGcp()
    with serve(fake) as url, pytest.MonkeyPatch.context() as patch:
        for env in (
            GCE_ENDPOINT_ENV,
            MONITORING_ENDPOINT_ENV,
            GCS_ENDPOINT_ENV,
            VERTEX_ENDPOINT_ENV,
        ):
            patch.setenv(env, url)
        yield fake


def collect(*projects: str) -> list[Resource | CoverageGap]:
    settings = GcpSettings(projects=projects, services=("gce",), timeout=5.0, max_attempts=1)
    return list(GcpCollector(settings).collect())


@pytest.mark.server
def test_reservations_paged_with_their_vms(fake: FakeGcp) -> None:
    vms = reserved_project(fake, AHEAD, AHEAD + timedelta(days=14))
    outside = instance(RESERVED, "us-central1-b", "no-reservation", "a2-highgpu-1g", id="9001")
    outside["reservationAffinity"] = {"consumeReservationType": "NO_RESERVATION"}
    default = instance(RESERVED, "us-central1-b", "any-reservation", "a2-highgpu-1g", id="9002")
    fake.instances[RESERVED] += [outside, default]
    items = collect(RESERVED)

    assert not [i for i in items if isinstance(i, CoverageGap)]
    found = {r.name: r for r in items if isinstance(r, Resource)}
    # Neither names a reservation: one takes none, the other any matching one (unsaid which).
    assert (
        found["no-reservation"].reservation.match,
        found["any-reservation"].reservation.match,
    ) == (
        "none",
        "open",
    )
    assert {found[n].capacity for n in ("no-reservation", "any-reservation")} == {
        Capacity.ON_DEMAND
    }
    vms_found = {n for n in found if n in vms}
    assert vms_found == set(vms)
    held = {r.name: r for r in items if isinstance(r, Resource) and r.kind is Kind.RESERVATION}
    assert set(held) == {"a3-pretrain", "a2-spare", "a3-next-month"}  # the CPU one is not kept
    a3 = held["a3-pretrain"]
    assert a3.id == f"projects/{RESERVED}/zones/us-central1-a/reservations/a3-pretrain"
    assert (a3.instance_type, a3.gpu.model, a3.gpu.count) == ("a3-highgpu-8g", "H100", 8)
    assert (a3.reservation.total, a3.reservation.used, a3.reservation.unused) == (8, 8, 0)
    assert a3.reservation.match == "targeted" and a3.state is State.RUNNING
    spare = held["a2-spare"]
    assert (spare.gpu.model, spare.gpu.count, spare.reservation.match) == ("A100-40GB", 1, "open")
    ahead = held["a3-next-month"]
    assert ahead.reservation.type == "future-reservation" and ahead.state is State.PENDING
    assert (ahead.reservation.total, ahead.reservation.starts_at) == (16, AHEAD)
    assert ahead.reservation.ends_at == AHEAD + timedelta(days=14)
    # Every VM names its reservation: reserved capacity, not on-demand.
    on = {r.name: r for r in items if isinstance(r, Resource) and r.kind is Kind.INSTANCE}
    on = {name: r for name, r in on.items() if name in vms}
    assert {r.capacity for r in on.values()} == {Capacity.RESERVED}
    assert {r.reservation.id for r in on.values()} == {a3.id}
    # Two a page: the three reservations take two pages (and the instances four).
    pages = [r for r in fake.requests if r.path.endswith("/aggregated/reservations")]
    assert [r.query.get("pageToken") for r in pages] == [None, ["2"]]


@pytest.mark.server
def test_a_denied_reservation_list_is_a_gap_and_the_vms_stay(fake: FakeGcp) -> None:
    vms = reserved_project(fake, AHEAD, AHEAD + timedelta(days=14))
    fake.reservations_forbidden.add(RESERVED)

    items = collect(RESERVED)

    gaps = [i for i in items if isinstance(i, CoverageGap)]
    # One gap for the one failure (both lists refused), naming each permission.
    assert [(g.account, g.error) for g in gaps] == [(RESERVED, "Forbidden (403)")]
    first, second = gaps[0].message.split("; future reservations: ")
    assert first.startswith("reservations: ") and "'compute.reservations.list'" in first
    assert "'compute.futureReservations.list'" in second
    assert {r.name for r in items if isinstance(r, Resource)} == set(vms)
