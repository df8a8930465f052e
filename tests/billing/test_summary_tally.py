"""`Tally`, the summary's running sum, against its plain twin `Figures.plus`: the same groups folded
both ways give the same figures digit for digit (a Decimal's exponent is part of what a report
prints: `1.50` is not `1.5`), in one fold and in a whole summary."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from gpu_audit.billing import summary
from gpu_audit.billing.model import BilledGroup
from gpu_audit.billing.period import Period
from gpu_audit.billing.summary import Figures, Tally, summarize

PERIOD = Period("2026-Q3", datetime(2026, 7, 1, tzinfo=UTC), datetime(2026, 10, 1, tzinfo=UTC))

AMOUNTS = st.decimals(
    min_value=Decimal("-1e6"), max_value=Decimal("1e6"), allow_nan=False, places=None
).filter(lambda d: d.is_finite()) | st.sampled_from(
    [
        Decimal(0),
        Decimal("0.00"),
        Decimal("-0"),
        Decimal("1.50"),
        Decimal("1E+2"),
        Decimal("0.000001"),
    ]
)
MAYBE = st.none() | st.sampled_from(["a", "b", "c"])


def groups() -> st.SearchStrategy[BilledGroup]:
    return st.builds(
        BilledGroup,
        cloud=st.sampled_from(["aws", "gcp", "azure"]),
        currency=st.sampled_from(["USD", "USD", "EUR"]),
        in_period=st.booleans(),
        kind=st.sampled_from(
            ["gpu", "gpu-machine", "unused", "transfer", "team-transfer", "other"]
        ),
        reason=st.none() | st.sampled_from(["not a GPU", "not usage"]),
        account=MAYBE,
        region=MAYBE,
        instance_type=st.none() | st.sampled_from(["p4d.24xlarge", "g5.4xlarge"]),
        gpu_model=st.none() | st.sampled_from(["A100", "A10G"]),
        gpus=st.none() | st.integers(1, 8),
        gcp_gpu=st.none(),
        capacity=st.none() | st.sampled_from(["on-demand", "spot", "committed", "reserved"]),
        service=MAYBE,
        usage_kind=MAYBE,
        resource_id=MAYBE,
        reservation_id=MAYBE,
        tags=st.dictionaries(st.sampled_from(["team", "owner"]), st.sampled_from(["x", "y"])),
        effective=AMOUNTS,
        billed=AMOUNTS,
        quantity=AMOUNTS,
        gpu_hours=AMOUNTS,
        corrections=AMOUNTS,
        rows=st.integers(0, 10**6),
        first_charge=st.none(),
        last_charge=st.none(),
        month=st.none() | st.sampled_from(["2026-07", "2026-08", "2026-09"]),
        billing_period=st.none() | st.sampled_from(["2026-07-01", "2026-08-01"]),
        commitment_id=MAYBE,
        capacity_id=MAYBE,
        commitment_unused=st.none() | st.booleans(),
        list=AMOUNTS,
    )


class PlainTally:
    """The twin: every group makes a new `Figures` (what the summary did before `Tally`)."""

    def __init__(self) -> None:
        self.sums = Figures()

    def add(self, group: BilledGroup) -> None:
        self.sums = self.sums.plus(group)

    def figures(self) -> Figures:
        return self.sums

    def __getattr__(self, name: str) -> Any:
        return getattr(self.sums, name)


def digits(value: Any) -> Any:
    """`value` with every Decimal as its text (exponent included), walked through records."""
    if isinstance(value, Decimal):
        return str(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: digits(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {k: digits(v) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [digits(v) for v in value]
    return value


@settings(max_examples=100, deadline=None)
@given(st.lists(groups(), max_size=12))
def test_a_tally_adds_what_plus_adds(folded: list[BilledGroup]) -> None:
    tally, plain = Tally(), Figures()
    for group in folded:
        tally.add(group)
        plain = plain.plus(group)
    assert digits(tally.figures()) == digits(plain)


@settings(max_examples=50, deadline=None)
@given(st.lists(groups(), max_size=30), st.sampled_from([(), ("team",), ("team", "owner")]))
def test_a_summary_is_the_same_with_its_plain_twin(folded: list[BilledGroup], tags: Any) -> None:
    fast = summarize(PERIOD, (), folded, tags)
    before = summary.Tally
    summary.Tally = PlainTally  # type: ignore[misc, assignment]
    try:
        plain = summarize(PERIOD, (), folded, tags)
    finally:
        summary.Tally = before  # type: ignore[misc]
    assert digits(fast) == digits(plain)
    assert fast.spend.effective == sum(
        (
            g.effective
            for g in folded
            if g.in_period and g.currency == "USD" and g.kind in ("gpu", "gpu-machine", "unused")
        ),
        Decimal(0),
    )
