"""Issue 38.7: `diff` like the other commands: text, table, markdown, json, csv and sarif, the
"wrote the … report to …" line, and help on every option."""

from __future__ import annotations

import csv
import io
import json

import jsonschema
import pytest
from click.testing import CliRunner

from gpu_audit.cli.main import main
from tests.conftest import SARIF_SCHEMA
from tests.diff.conftest import (
    EVAL_L4,
    SWEEP_A10G,
    TRAIN_A100_SPOT,
    TRAIN_H100_ON_DEMAND,
    Repo,
    cli,
)
from tests.report.sarif_rules import AGENT, problems

KEEP = SWEEP_A10G.replace("name: sweep", "name: keep")


@pytest.fixture
def changed(repo: Repo) -> Repo:
    files = {"jobs/train.yaml": TRAIN_A100_SPOT, "jobs/eval.yaml": EVAL_L4, "jobs/keep.yaml": KEEP}
    repo.commit(files, "base")
    repo.commit(
        {
            "jobs/train.yaml": TRAIN_H100_ON_DEMAND,
            "jobs/eval.yaml": None,
            "jobs/sweep.yaml": SWEEP_A10G,
        }
    )
    return repo


def test_text_is_one_line_per_job_and_per_finding(changed: Repo) -> None:
    code, out, _ = cli("diff", "--base", "HEAD~1", "--format", "text")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("gpu-audit diff: +$")
    train = [ln for ln in lines if ln.startswith("jobs/train.yaml: train-llm: modified: ")]
    assert len(train) == 1 and "GPUs A100-40GB × 8 → H100 × 8" in train[0]
    assert "capacity spot → on-demand" in train[0] and "runtime cap 10 h → 24 h" in train[0]
    new = [ln for ln in lines if ln.endswith("[new]")]
    assert any(ln.startswith("jobs/train.yaml:4: high spot-for-training: ") for ln in new)
    assert not any(set(ln) <= {"-", " "} and "--" in ln for ln in lines)  # no table rule line


def test_csv_has_a_row_per_changed_job(changed: Repo) -> None:
    code, out, _ = cli("diff", "--base", "HEAD~1", "--format", "csv")
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    by_job = {row["job"]: row for row in rows}
    assert set(by_job) == {"train-llm", "eval", "sweep"}
    train = by_job["train-llm"]
    assert (train["change"], train["gpus_before"], train["gpus_after"]) == (
        "modified", "A100-40GB × 8", "H100 × 8"
    )  # fmt: skip
    assert float(train["run_usd_after"]) - float(train["run_usd_before"]) == pytest.approx(
        float(train["delta_usd"]), abs=0.01
    )
    assert "spot-for-training (jobs/train.yaml:4)" in train["findings_new"]


def test_sarif_holds_the_new_findings_and_validates(changed: Repo) -> None:
    code, out, _ = cli("diff", "--base", "HEAD~1", "--format", "sarif")
    assert code == 0
    log = json.loads(out)
    schema = json.loads(SARIF_SCHEMA.read_text())
    errors = sorted(jsonschema.Draft4Validator(schema).iter_errors(log), key=str)
    assert not errors, errors[:3]
    run = log["runs"][0]
    results = run["results"]
    spot = [r for r in results if r["ruleId"] == "spot-for-training"]
    assert len(spot) == 1 and spot[0]["level"] == "error"
    location = spot[0]["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "jobs/train.yaml", "uriBaseId": "%SRCROOT%"}
    assert location["region"] == {"startLine": 4}
    rules = [rule["id"] for rule in run["tool"]["driver"]["rules"]]
    assert all(rules[r["ruleIndex"]] == r["ruleId"] for r in results)
    assert run["automationDetails"]["id"].startswith("gpu-audit/diff/")
    assert all(r["partialFingerprints"]["gpuAuditFinding/v1"] for r in results)


@pytest.mark.parametrize("fmt", ["text", "table", "markdown", "json", "csv", "sarif"])
def test_every_format_writes_and_says_so(changed: Repo, fmt: str) -> None:
    target = changed.path.parent / f"diff.{fmt}.out"
    code, out, err = cli("diff", "--base", "HEAD~1", "--format", fmt, "-o", str(target))
    assert code == 0 and out == ""
    assert err.strip() == f"gpu-audit: wrote the {fmt} report to {target}"
    assert target.read_text()


def test_every_option_has_help() -> None:
    from gpu_audit.cli.diff import diff_command

    for param in diff_command.params:
        if param.param_type_name == "option":
            assert getattr(param, "help", None), param.name
    result = CliRunner().invoke(main, ["diff", "--help"])
    for fmt in ("text", "table", "markdown", "json", "csv", "sarif"):
        assert fmt in result.output


def test_diff_sarif_passes_both_services_rules(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: the diff's rules had no description or help (GH2012) and a new finding with no
    line had no region (GH1003)."""
    for name in AGENT:
        monkeypatch.delenv(name, raising=False)
    repo.commit({"jobs/train.yaml": TRAIN_A100_SPOT}, "base")
    repo.commit(
        {"jobs/train.yaml": TRAIN_H100_ON_DEMAND, "jobs/my train.yaml": TRAIN_H100_ON_DEMAND}
    )
    code, out, _ = cli("diff", "--base", "HEAD~1", "--format", "sarif")
    log = json.loads(out)
    assert code == 0 and problems(log, "GH") == []
    run = log["runs"][0]
    spot = next(r for r in run["tool"]["driver"]["rules"] if r["id"] == "spot-for-training")
    assert spot["shortDescription"]["text"] != "spot-for-training" and spot["help"]["text"]
    uris = {
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]
    }
    assert "jobs/my%20train.yaml" in uris
    for name, value in AGENT.items():
        monkeypatch.setenv(name, value)
    code, out, _ = cli("diff", "--base", "HEAD~1", "--format", "sarif")
    log = json.loads(out)
    assert problems(log, "GHAzDO") == [] and problems(log, "GH") == []
    assert (
        log["runs"][0]["automationDetails"]["properties"]["gpuAudit/category"] == "gpu-audit/diff"
    )
    monkeypatch.setenv("BUILD_BUILDID", "")
    code, out, err = cli("diff", "--base", "HEAD~1", "--format", "sarif")
    assert code == 2 and out == "" and "BUILD_BUILDID is not set" in err
