"""The diff's gates (cost increase in dollars or percent, new findings) and its exit codes."""

from __future__ import annotations

import pytest

from tests.diff.conftest import (
    EVAL_L4,
    SWEEP_A10G,
    TRAIN_A100_SPOT,
    TRAIN_H100_ON_DEMAND,
    Repo,
    cli,
    diff_json,
)


@pytest.fixture
def dearer(repo: Repo) -> Repo:
    repo.commit({"jobs/train.yaml": TRAIN_A100_SPOT, "jobs/eval.yaml": EVAL_L4}, "base")
    repo.write({"jobs/train.yaml": TRAIN_H100_ON_DEMAND})
    return repo


def _delta(repo: Repo) -> tuple[float, float]:
    _, report = diff_json("--base", "HEAD")
    return report["total"]["delta_usd"], report["total"]["delta_percent"]


@pytest.mark.parametrize(
    ("threshold", "expected"),
    [("50%", 1), ("20%", 1), ("500", 1), ("$500", 1), ("100000", 0), ("1000000%", 0)],
)
def test_fail_on_increase_in_dollars_or_percent(
    dearer: Repo, threshold: str, expected: int
) -> None:
    delta, percent = _delta(dearer)
    assert delta > 500 and 50 < percent < 1_000_000
    code, _, err = cli("diff", "--base", "HEAD", "--fail-on-increase", threshold)
    assert code == expected, err
    if expected:
        assert (
            err.startswith("gpu-audit: gate: the change costs +") and threshold.lstrip("$") in err
        )


def test_the_threshold_is_exceeded_not_reached(dearer: Repo) -> None:
    delta, percent = _delta(dearer)
    assert cli("diff", "--base", "HEAD", "--fail-on-increase", f"{delta}")[0] == 0
    assert cli("diff", "--base", "HEAD", "--fail-on-increase", f"{delta - 0.01:.2f}")[0] == 1
    assert cli("diff", "--base", "HEAD", "--fail-on-increase", f"{percent}%")[0] == 0


def test_a_cheaper_change_or_no_change_passes(repo: Repo) -> None:
    repo.commit({"jobs/train.yaml": TRAIN_H100_ON_DEMAND}, "base")
    assert cli("diff", "--base", "HEAD", "--fail-on-increase", "0%")[0] == 0  # nothing changed
    repo.write({"jobs/train.yaml": TRAIN_A100_SPOT})
    code, report = diff_json("--base", "HEAD", "--fail-on-increase", "0")
    assert code == 0 and report["total"]["delta_usd"] < 0


def test_an_increase_from_nothing_trips_a_percent_gate(repo: Repo) -> None:
    repo.commit({"README.md": "jobs come later\n"}, "base")
    repo.write({"jobs/eval.yaml": EVAL_L4})
    code, report = diff_json("--base", "HEAD", "--fail-on-increase", "1000%")
    assert code == 1 and report["total"]["delta_percent"] is None


def test_an_unbounded_increase_trips_any_threshold(repo: Repo) -> None:
    repo.commit({"jobs/eval.yaml": EVAL_L4}, "base")
    capless = SWEEP_A10G.replace('    gpu-audit/max-runtime-hours: "6"\n', "")
    repo.write({"jobs/sweep.yaml": capless})
    code, _, err = cli("diff", "--base", "HEAD", "--fail-on-increase", "1000000")
    assert code == 1
    assert "jobs/sweep.yaml: sweep: +$" in err and "/h with no runtime cap (unbounded)" in err


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        ([], 0),  # no gate given: the diff is a report
        (["--fail-on", "high"], 1),  # spot-for-training is new and high
        (["--fail-on", "critical"], 0),
        (["--fail-on", "none"], 0),
        (["--fail-on-new"], 1),
        (["--fail-on-new", "--fail-on", "critical"], 0),
    ],
)
def test_fail_on_and_fail_on_new_count_new_findings_only(
    dearer: Repo, flags: list[str], expected: int
) -> None:
    code, _, err = cli("diff", "--base", "HEAD", *flags)
    assert code == expected, err
    if expected:
        assert "jobs/train.yaml:4: new high finding spot-for-training" in err


def test_findings_already_there_do_not_trip_the_gate(repo: Repo) -> None:
    """eval is on-demand-free spot L4 with a finding that persists: not new, no exit 1."""
    on_demand = EVAL_L4.replace("use_spot: true", "use_spot: false")
    repo.commit({"jobs/eval.yaml": on_demand}, "base")
    repo.write({"jobs/eval.yaml": on_demand.replace('"2"', '"3"')})
    code, report = diff_json("--base", "HEAD", "--fail-on", "info")
    assert code == 0
    [job] = report["jobs"]
    assert job["change"] == "modified" and job["findings_new"] == []


@pytest.mark.parametrize("bad", ["lots", "20 %%", "-5", "%"])
def test_a_bad_threshold_is_one_line_and_exit_2(dearer: Repo, bad: str) -> None:
    code, out, err = cli("diff", "--base", "HEAD", "--fail-on-increase", bad)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "--fail-on-increase" in err and "Traceback" not in err
