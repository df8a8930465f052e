"""`gpu-audit diff` in throw-away git repositories: pairing, costs as `estimate` prices them,
totals, unbounded jobs, formats (the JSON against its schema)."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tests.conftest import FIXTURES
from tests.diff.conftest import (
    EVAL_L4,
    SWEEP_A10G,
    TRAIN_A100_SPOT,
    TRAIN_H100_ON_DEMAND,
    Repo,
    by_name,
    cli,
    diff_json,
)

SCHEMA = json.loads(
    resources.files("gpu_audit.diff").joinpath("diff-v1.schema.json").read_text("utf-8")
)
KEEP = SWEEP_A10G.replace("name: sweep", "name: keep")


def valid(report: dict[str, Any]) -> dict[str, Any]:
    jsonschema.validate(report, SCHEMA)
    return report


def estimate(*files: Path | str) -> dict[str, dict[str, Any]]:
    """`gpu-audit estimate --format json` of these files, by job name."""
    code, out, err = cli("estimate", "--format", "json", *map(str, files))
    assert code in (0, 1), err  # 1: a run over the job's declared budget
    return {job["job"]: job for job in json.loads(out)["jobs"]}


def at(repo: Repo, ref: str, name: str, into: Path) -> Path:
    """The file as it was at `ref`, written out for `estimate` (git show, no checkout)."""
    target = into / ref.replace("~", "-") / name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(repo.git("show", f"{ref}:{name}"), encoding="utf-8")
    return target


@pytest.fixture
def changed(repo: Repo) -> Repo:
    """Base: train (A100 spot, 10 h), eval, keep. Last commit: train to on-demand H100 with a
    24 h cap, eval removed, sweep added, keep untouched."""
    files = {"jobs/train.yaml": TRAIN_A100_SPOT, "jobs/eval.yaml": EVAL_L4, "jobs/keep.yaml": KEEP}
    repo.commit({**files, "README.md": "# jobs\n"}, "base")
    repo.commit(
        {
            "jobs/train.yaml": TRAIN_H100_ON_DEMAND,
            "jobs/eval.yaml": None,
            "jobs/sweep.yaml": SWEEP_A10G,
        }
    )
    return repo


def test_added_removed_modified_and_unchanged_jobs(changed: Repo) -> None:
    code, report = diff_json("--base", "HEAD~1")
    assert code == 0
    jobs = by_name(valid(report))
    assert {n: j["change"] for n, j in jobs.items()} == {
        "train-llm": "modified",
        "eval": "removed",
        "sweep": "added",
        "keep": "unchanged",
    }
    train = jobs["train-llm"]
    assert (train["before"]["gpu_model"], train["after"]["gpu_model"]) == ("A100-40GB", "H100")
    assert (train["before"]["capacity"], train["after"]["capacity"]) == ("spot", "on-demand")
    assert (train["before"]["runtime_cap_hours"], train["after"]["runtime_cap_hours"]) == (10, 24)
    assert train["before"]["gpu_hours"] == 80 and train["after"]["gpu_hours"] == 192
    assert [f["rule_id"] for f in train["findings_new"]] == ["spot-for-training", "gpu-class-cap"]
    assert jobs["eval"]["after"] is None and jobs["sweep"]["before"] is None
    assert jobs["keep"]["findings_new"] == [] and jobs["keep"]["delta_usd"] == 0
    assert report["base"]["ref"] == "HEAD~1" and report["head"]["ref"] == "working tree"
    assert report["base"]["commit"] == changed.git("rev-parse", "HEAD~1").strip()


def test_costs_are_estimates_of_the_same_files_and_the_total_adds_up(
    changed: Repo, tmp_path: Path
) -> None:
    _, report = diff_json("--base", "HEAD~1")
    jobs = by_name(report)
    after = estimate("jobs/train.yaml", "jobs/sweep.yaml", "jobs/keep.yaml")
    before = estimate(
        *(at(changed, "HEAD~1", f"jobs/{n}.yaml", tmp_path) for n in ("train", "eval"))
    )
    for name, side, expected in [
        ("train-llm", "before", before["train-llm"]),
        ("eval", "before", before["eval"]),
        ("train-llm", "after", after["train-llm"]),
        ("sweep", "after", after["sweep"]),
        ("keep", "after", after["keep"]),
    ]:
        cost = jobs[name][side]
        own = expected["spot"] if expected["capacity"] == "spot" else expected["on_demand"]
        assert cost["run_usd"] == expected["run_usd"] is not None, (name, side)
        assert cost["hourly_usd"] == own["hourly_usd"]
        assert cost["gpu_hours"] == expected["gpu_hours"]
        assert cost["price_as_of"] == own["as_of"] and cost["price_source"] == own["source"]
    train = jobs["train-llm"]
    assert train["delta_usd"] == round(
        after["train-llm"]["run_usd"] - before["train-llm"]["run_usd"], 2
    )
    assert train["delta_percent"] == round(
        100 * train["delta_usd"] / before["train-llm"]["run_usd"], 1
    )
    total = report["total"]
    want_before = round(before["train-llm"]["run_usd"] + before["eval"]["run_usd"], 2)
    want_after = round(after["train-llm"]["run_usd"] + after["sweep"]["run_usd"], 2)
    assert (total["before_run_usd"], total["after_run_usd"]) == (want_before, want_after)
    assert total["delta_usd"] == round(want_after - want_before, 2)
    assert total["changed_jobs"] == 3  # keep is unchanged: not in the total
    assert report["prices_as_of"] == sorted(
        {c["price_as_of"] for j in jobs.values() for c in (j["before"], j["after"]) if c}
    )


def test_a_committed_rename_is_a_modification(repo: Repo) -> None:
    repo.commit({"jobs/train.yaml": TRAIN_A100_SPOT}, "base")
    (repo.path / "jobs/llm").mkdir()
    repo.git("mv", "jobs/train.yaml", "jobs/llm/train.yaml")
    repo.commit({"jobs/llm/train.yaml": TRAIN_A100_SPOT.replace('"10"', '"12"')}, "move")
    _, report = diff_json("--base", "HEAD~1")
    [job] = valid(report)["jobs"]
    assert (job["file"], job["change"]) == ("jobs/llm/train.yaml", "modified")
    assert job["before"]["file"] == "jobs/train.yaml"
    assert job["notes"] == ["file renamed from jobs/train.yaml"]
    assert job["findings_new"] == job["findings_resolved"] == []
    assert job["delta_usd"] == round(job["after"]["run_usd"] - job["before"]["run_usd"], 2) > 0


def test_a_pure_rename_is_modified_with_no_cost_change(repo: Repo) -> None:
    repo.commit({"a.yaml": EVAL_L4}, "base")
    repo.git("mv", "a.yaml", "b.yaml")  # staged, not committed: the worktree side
    _, report = diff_json("--base", "HEAD")
    [job] = report["jobs"]
    assert (job["change"], job["delta_usd"], job["file"]) == ("modified", 0, "b.yaml")


def test_a_rename_git_cannot_see_is_paired_by_job_name(repo: Repo) -> None:
    """A plain `mv` (the new file untracked) with most lines edited: git sees a deletion only;
    the job keeps its name, so it is the same job, modified."""
    repo.commit({"old/train.yaml": TRAIN_A100_SPOT}, "base")
    (repo.path / "old/train.yaml").unlink()
    repo.write({"new/train.yaml": TRAIN_H100_ON_DEMAND})
    _, report = diff_json("--base", "HEAD")
    [job] = report["jobs"]
    assert (job["change"], job["file"], job["before"]["file"]) == (
        "modified",
        "new/train.yaml",
        "old/train.yaml",
    )


def test_head_compares_two_revisions_whatever_the_worktree(changed: Repo) -> None:
    changed.write({"jobs/keep.yaml": None})  # an uncommitted edit --head does not see
    _, report = diff_json("--base", "HEAD~1", "--head", "HEAD")
    assert by_name(valid(report))["keep"]["change"] == "unchanged"
    assert report["head"] == {"ref": "HEAD", "commit": changed.git("rev-parse", "HEAD").strip()}
    _, worktree = diff_json("--base", "HEAD~1")
    assert by_name(worktree)["keep"]["change"] == "removed"


def test_unbounded_jobs_show_the_hourly_rate_and_stay_out_of_the_run_total(repo: Repo) -> None:
    repo.commit({"jobs/train.yaml": TRAIN_A100_SPOT}, "base")
    capless = SWEEP_A10G.replace('    gpu-audit/max-runtime-hours: "6"\n', "")
    uncapped = TRAIN_A100_SPOT.replace('    gpu-audit/max-runtime-hours: "10"\n', "")
    repo.write({"jobs/sweep.yaml": capless, "jobs/train.yaml": uncapped})
    _, report = diff_json("--base", "HEAD")
    jobs = by_name(valid(report))
    sweep, train = jobs["sweep"], jobs["train-llm"]
    assert sweep["after"]["run_usd"] is None and sweep["after"]["unbounded"] is True
    assert sweep["after"]["gpu_hours"] is None and sweep["after"]["hourly_usd"] > 0
    assert sweep["delta_usd"] is None and sweep["delta_hourly_usd"] == sweep["after"]["hourly_usd"]
    assert train["change"] == "modified" and train["delta_usd"] is None  # the cap was removed
    assert train["delta_hourly_usd"] == 0 and train["unbounded"] is True
    total = report["total"]
    assert (total["before_run_usd"], total["after_run_usd"], total["delta_usd"]) == (0, 0, 0)
    assert total["unbounded_jobs"] == 2
    code, out, _ = cli("diff", "--base", "HEAD", "--format", "markdown")
    hourly = f"+\\${sweep['after']['hourly_usd']:,.2f}/h"  # `$` escaped in Markdown
    assert out.splitlines()[1].endswith(f"+\\$0.00 per run, {hourly} with no runtime cap")
    assert total["unbounded_hourly_delta_usd"] == sweep["after"]["hourly_usd"]
    code, out, _ = cli("diff", "--base", "HEAD", "--format", "table")
    assert code == 0
    assert "unbounded" in out and f"${sweep['after']['hourly_usd']:,.2f}/h" in out
    assert "not in the per-run total" in out


def test_the_table_lists_changed_jobs_with_their_findings(
    changed: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # every column fits
    code, out, _ = cli("diff", "--base", "HEAD~1", "--format", "table")
    assert code == 0
    assert out.startswith("gpu-audit diff: +$")
    for text in ("train-llm", "modified", "A100-40GB × 8 → H100 × 8", "spot → on-demand",
                 "10 h → 24 h", "+ high spot-for-training", "1 GPU job(s) unchanged",
                 "Prices as of"):  # fmt: skip
        assert text in out
    assert "keep " not in out  # unchanged jobs are counted, not listed


def test_no_change_says_so(repo: Repo) -> None:
    repo.commit({"jobs/train.yaml": TRAIN_A100_SPOT}, "base")
    code, report = diff_json("--base", "HEAD")
    assert code == 0
    assert report["total"]["changed_jobs"] == 0
    assert [j["change"] for j in valid(report)["jobs"]] == ["unchanged"]
    code, out, _ = cli("diff", "--base", "HEAD", "--format", "markdown")
    assert "no change to any GPU job" in out


def test_output_file_is_written_and_the_format_follows_its_extension(changed: Repo) -> None:
    code, out, _ = cli("diff", "--base", "HEAD~1", "-o", "../diff.json")
    assert code == 0 and out == ""
    valid(json.loads((changed.path.parent / "diff.json").read_text()))


FORMATS = [  # (fixture, what the change replaces, with what)
    ("jobs/kubernetes/pytorchjob-spot.yaml", "replicas: 3", "replicas: 7"),
    (
        "jobs/kubernetes/pytorchjob-spot.yaml",
        "activeDeadlineSeconds: 86400",
        "activeDeadlineSeconds: 3600",
    ),
    ("estimate/finetune-over-budget.json", "ml.p4de.24xlarge", "ml.p5.48xlarge"),
    ("estimate/tuning-spot.json", '"MaxRuntimeInSeconds": 9000', '"MaxRuntimeInSeconds": 4500'),
]


@pytest.mark.parametrize(("fixture", "old", "new"), FORMATS, ids=lambda v: str(v)[:40])
def test_other_formats_are_priced_as_estimate_prices_them(
    repo: Repo, tmp_path: Path, fixture: str, old: str, new: str
) -> None:
    text = (FIXTURES / fixture).read_text()
    assert old in text
    name = f"jobs/{Path(fixture).name}"
    repo.commit({name: text}, "base")
    repo.write({name: text.replace(old, new)})
    _, report = diff_json("--base", "HEAD")
    before = estimate(at(repo, "HEAD", name, tmp_path))
    after = estimate(name)
    assert report["jobs"] and {j["change"] for j in valid(report)["jobs"]} == {"modified"}
    for job in report["jobs"]:  # a sweep's run is its ceiling, as its budget is held to
        assert job["before"]["run_usd"] == before[job["name"]]["ceiling_usd"]
        assert job["after"]["run_usd"] == after[job["name"]]["ceiling_usd"]
        assert job["before"]["run_usd"] != job["after"]["run_usd"]


@pytest.mark.parametrize("columns", [80, 120])
def test_the_table_fits_the_terminal_as_checks_does(
    changed: Repo, monkeypatch: pytest.MonkeyPatch, columns: int
) -> None:
    """Issue 38.4: capacity, cap and GPUs go first, then the widest is clipped; the change and
    the costs stay whole."""
    monkeypatch.setenv("COLUMNS", str(columns))
    _, out, _ = cli("diff", "--base", "HEAD~1", "--format", "table")
    lines = out.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("file "))
    table = lines[start : lines.index("", start)]
    assert all(len(line) <= columns for line in table), table
    assert "change" in table[0] and "per run" in table[0] and "delta" in table[0]
    assert any("modified" in line and "+$1,2" in line for line in table)
