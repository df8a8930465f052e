"""The sweeps of a shard report read back for `merge`, and the sums over them: every bad value is
one located line, never a traceback."""

from __future__ import annotations

from typing import Any

import pytest

from gpu_audit.core.resource import Capacity
from gpu_audit.core.runs import Outcome, TrialRun
from gpu_audit.errors import ConfigError
from gpu_audit.shards.sweeps import read_sweeps

TRIAL = {"id": "t", "name": "t", "outcome": "failed", "instance_type": "ml.g5.xlarge",
         "instances": 2, "capacity": "spot", "hourly_usd": 1.408, "billable_seconds": 1800,
         "training_seconds": 3600}  # fmt: skip
SWEEP = {"kind": "tuning", "provider": "aws", "service": "sagemaker", "id": "arn", "name": "s",
         "account": "1", "region": "us-east-1", "state": "Completed",
         "since": "2026-09-01T00:00:00Z", "trials": [TRIAL]}  # fmt: skip


def test_a_sweep_reads_back_with_its_sums() -> None:
    (sweep,) = read_sweeps("s.json", [SWEEP])
    (trial,) = sweep.trials
    assert (trial.outcome, trial.capacity, trial.instances) == (Outcome.FAILED, Capacity.SPOT, 2)
    assert sweep.cost_usd == pytest.approx(1800 / 3600 * 1.408)
    assert sweep.failed_share == 1.0 and sweep.cost_per_success_usd is None  # none completed
    assert sweep.spot_savings == 0.5 and sweep.retried is None  # the API said nothing of it
    assert read_sweeps("s.json", None) == []


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"kind": "grid"}, "sweeps[0].kind: expected one of tuning, training"),
        ({"since": "yesterday"}, "sweeps[0].since: expected an ISO 8601 time"),
        ({"since": "9999-12-31T23:00:00-14:00"}, "sweeps[0].since: expected an ISO 8601 time"),
        ({"trials": {}}, "sweeps[0].trials: expected a list"),
        ({"trials": [7]}, "sweeps[0].trials[0]: expected an object"),
        ({"trials": [{**TRIAL, "outcome": "won"}]},
         "sweeps[0].trials[0].outcome: expected one of completed, stopped, failed, running"),
        ({"trials": [{**TRIAL, "instances": True}]},
         "sweeps[0].trials[0].instances: expected a whole number of at least 0"),
        ({"trials": [{**TRIAL, "hourly_usd": float("nan")}]},
         "sweeps[0].trials[0].hourly_usd: expected a finite number of at least 0"),
        ({"trials": [{**TRIAL, "billable_seconds": -1}]},
         "sweeps[0].trials[0].billable_seconds: expected a finite number of at least 0"),
        ({"name": None}, "sweeps[0].name: expected a string"),
    ],
)  # fmt: skip
def test_a_bad_value_is_one_located_line(change: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        read_sweeps("shard-2.json", [{**SWEEP, **change}])
    assert str(caught.value) == f"merge: shard-2.json: {message}"


def test_a_spot_rate_is_the_savings_a_vertex_trial_realised() -> None:
    trial = TrialRun(id="t", name="t", outcome=Outcome.COMPLETED, instance_type="g2-standard-8",
                     instances=1, capacity=Capacity.SPOT, hourly_usd=0.4, billable_seconds=3600,
                     training_seconds=3600, spot_discount=0.6)  # fmt: skip
    assert trial.spot_savings == pytest.approx(0.6) and trial.cost_usd == pytest.approx(0.4)
