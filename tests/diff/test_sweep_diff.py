"""`gpu-audit diff` prices a tuning sweep at its ceiling: raising its trial cap or its per-trial
cap shows as the ceiling's change (issue 34's "done when"; the ceilings: test_sweep_ceilings.py)."""

from __future__ import annotations

import pytest

from tests.conftest import FIXTURES
from tests.diff.conftest import Repo, cli, diff_json

SWEEP = (FIXTURES / "sweeps/sagemaker-tuning.json").read_text()


@pytest.mark.parametrize(
    ("old", "new", "after"),
    [  # 40 trials × 2.5 h × $2.816; 20 trials × 5 h × $2.816
        ('"MaxNumberOfTrainingJobs": 20', '"MaxNumberOfTrainingJobs": 40', 281.60),
        ('"MaxRuntimeInSeconds": 9000', '"MaxRuntimeInSeconds": 18000', 281.60),
    ],
)
def test_diff_shows_the_ceiling_change_when_a_cap_is_raised(
    repo: Repo, old: str, new: str, after: float
) -> None:
    assert old in SWEEP
    repo.commit({"tuning/ranker.json": SWEEP}, "base")
    repo.commit({"tuning/ranker.json": SWEEP.replace(old, new)}, "raise a cap")
    _, report = diff_json("--base", "HEAD~1", "--head", "HEAD")
    (job,) = report["jobs"]
    assert job["change"] == "modified" and job["before"]["sweep"] is True
    assert (job["before"]["run_usd"], job["after"]["run_usd"]) == (140.80, after)
    assert job["delta_usd"] == round(after - 140.80, 2)
    _, text, _ = cli("diff", "--base", "HEAD~1", "--head", "HEAD", "--format", "markdown")
    assert "$140.80 sweep ceiling" in text and f"${after:,.2f} sweep ceiling" in text


def test_a_sweep_that_loses_its_trial_cap_is_unbounded_with_a_new_finding(repo: Repo) -> None:
    repo.commit({"tuning/ranker.json": SWEEP}, "base")
    repo.commit({"tuning/ranker.json": SWEEP.replace('"MaxNumberOfTrainingJobs": 20, ', "")})
    _, report = diff_json("--base", "HEAD~1", "--head", "HEAD")
    (job,) = report["jobs"]
    assert job["before"]["run_usd"] == 140.80 and job["after"]["run_usd"] is None
    assert job["after"]["unbounded"] is True and job["after"]["trials"] is None
    assert job["delta_usd"] is None
    assert {f["rule_id"] for f in job["findings_new"]} >= {"hpo-trial-cap"}
