"""Items 6 and 8 of the reader's report (round three): tables at 80 columns, every mistake of a
policy in one run, did-you-mean for every enum value, and an option before its command."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import FIXTURES
from tests.firsttry.cli import git, gpu_audit
from tests.report.test_terminal_fit import _tables


@pytest.fixture
def priced_change(tmp_path: Path) -> Path:
    """A repository whose SageMaker sweep shrank and whose SkyPilot job grew (both priced)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    sweep = (FIXTURES / "jobs" / "sagemaker" / "tuning-no-early-stopping.yaml").read_text()
    (repo / "tune.yaml").write_text(sweep)
    sky = (FIXTURES / "jobs" / "skypilot" / "any-of-alternatives.yaml").read_text()
    (repo / "any-of-alternatives.yaml").write_text(sky)
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "base")
    (repo / "tune.yaml").write_text(
        sweep.replace("MaxNumberOfTrainingJobs: 200", "MaxNumberOfTrainingJobs: 20")
    )
    assert "A100:8" in sky
    (repo / "any-of-alternatives.yaml").write_text(sky.replace("A100:8", "A100:4"))
    return repo


def test_the_diff_table_fits_80_columns(priced_change: Path) -> None:
    result = gpu_audit("diff", "--base", "main", "--format", "table", cwd=priced_change, columns=80)
    assert result.returncode == 0, result.stderr
    long = [line for line in result.stdout.splitlines() if len(line) > 80]
    assert not long, long
    [table] = _tables(result.stdout)
    assert table[0].split()[-2:] == ["run", "delta"]  # the costs are kept, whole
    assert "$11,750.40 → $1,175.04 sweep ceiling" in result.stdout
    assert "…" not in "".join(row.split("  ")[-1] for row in table[2:])


def test_a_check_table_with_a_change_column_fits_80(tmp_path: Path) -> None:
    db = tmp_path / "h.db"
    args = ("check", str(FIXTURES / "jobs"), "--history", str(db), "--fail-on", "none")
    assert gpu_audit(*args, "--format", "json").returncode == 0
    result = gpu_audit(*args, "--format", "table", columns=80)
    tables = _tables(result.stdout)
    assert tables and all(t[0].startswith("change") for t in tables)
    for table in tables:
        ruler = len(table[1])
        assert ruler <= 80, table[:3]
        assert all(len(row) <= ruler for row in table[2:]), table
        assert ".yaml:" in "\n".join(table[2:]) or ".json:" in "\n".join(table[2:])


def test_fix_lines_stand_apart_from_the_table() -> None:
    result = gpu_audit("check", str(FIXTURES / "jobs" / "skypilot"), "--format", "table",
                       "--fail-on", "none", columns=80)  # fmt: skip
    for table in _tables(result.stdout):
        assert not any(row.startswith(("fix ", "  ")) for row in table[2:]), table


POLICY = """\
version: 1
extends: runbook
rules:
  - id: a
    title: A
    severity: hihg
    require: {gpu.count: {gtee: 1}}
  - id: b
    title: B
    severity: low
    where: {workload: trainng}
    require: {capacity: {in: [spot, reservd]}}
waivers:
  - rule: gpu-clas-cap
    reason: approved
    owner: me@example.com
    expires: 2027-13-45
  - rule: spot-for-trainig
    reason: approved
    ownr: me@example.com
    expires: 2027-01-01
"""


def test_every_mistake_of_a_policy_in_one_run(tmp_path: Path) -> None:
    policy = tmp_path / "p.yaml"
    policy.write_text(POLICY)
    result = gpu_audit("policies", "validate", str(policy))
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert all(line.startswith(f"gpu-audit: error: {policy}:") for line in lines), lines
    text = "\n".join(lines)
    for said in (
        ":6: rule 'a': severity: 'hihg' is not one of info, low, medium, high, critical "
        "(did you mean 'high'?)",
        ":7: rule 'a': gtee: unknown operator 'gtee' (did you mean 'gte'?)",
        ":11: rule 'b': workload: 'trainng' is not one of batch-inference, benchmark, inference, "
        "notebook, training, unknown (did you mean 'training'?)",
        ":12: rule 'b': in: 'reservd' is not one of on-demand, reserved, spot, unknown "
        "(did you mean 'reserved'?)",
        ":14: waiver: rule: unknown rule 'gpu-clas-cap' (did you mean 'gpu-class-cap'?)",
        ":17: waiver #1: expires: expected a date (YYYY-MM-DD), got '2027-13-45'",
        ":18: waiver: rule: unknown rule 'spot-for-trainig' (did you mean 'spot-for-training'?)",
        ":20: waiver #2: ownr: unknown key 'ownr' (did you mean 'owner'?)",
    ):
        assert said in text, said
    assert len(lines) == 8


@pytest.mark.parametrize(
    ("args", "said"),
    [(["--format", "text", "check", "x"],
      "--format is an option of `check`: it goes after the command: gpu-audit check --format "
      "text x"),
     (["--format=json", "check", "x"], "gpu-audit check --format=json x"),
     (["-q", "scan", "--inventory", "y"], "gpu-audit scan -q --inventory y"),
     (["--nonsense", "check", "x"],
      "No such option '--nonsense': options go after the command (gpu-audit check --help")],
)  # fmt: skip
def test_an_option_before_the_command_says_where_it_goes(args: list[str], said: str) -> None:
    result = gpu_audit(*args)
    assert result.returncode == 2
    assert said in result.stderr
    assert "Traceback" not in result.stderr


LONG = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: TrainTheVeryLargeLanguageModelOnEightGpusWithoutAnySeparatorsAtAll
spec:
  activeDeadlineSeconds: 7200
  template:
    spec:
      nodeSelector:
        cloud.google.com/gke-accelerator: nvidia-l4
      containers:
        - name: train
          image: trainer:1
          resources:
            limits:
              nvidia.com/gpu: 1
      restartPolicy: Never
"""


def _widest(markdown: str) -> list[tuple[float, list[str]]]:
    from tests.report.github_width import CONTENT_PX, min_width
    from tests.report.test_markdown import parse
    from tests.report.test_markdown_rendered import _tables as md_tables

    tables = md_tables(parse(markdown))
    assert tables
    return [(min_width(t), t[0]) for t in tables if min_width(t) > CONTENT_PX]


def test_the_check_reports_tables_fit_githubs_page_on_real_files(tmp_path: Path) -> None:
    """The corpus's skipped inputs (long file names), and a job and file named with no `-_.`."""
    from tests.conftest import SHARED, need_shared

    need_shared(SHARED / "corpus")
    folder = tmp_path / "jobs"
    folder.mkdir()
    (folder / "averyverylongmanifestnamewithnoseparatorsatallforthisjob.yaml").write_text(LONG)
    (folder / "notes.yaml").write_text("just: a note\n")
    for target in (SHARED / "corpus", folder):
        out = tmp_path / "check.md"
        result = gpu_audit("check", str(target), "--fail-on", "none", "-o", str(out))
        assert result.returncode == 0, result.stderr
        assert _widest(out.read_text(encoding="utf-8")) == []


def test_policies_list_fits_80_columns() -> None:
    result = gpu_audit("policies", "list", columns=80)
    assert result.returncode == 0, result.stderr
    [table] = _tables(result.stdout)
    assert len(table[1]) <= 80 and all(len(row) <= 80 for row in table)
    ids = [row.split()[0] for row in table[2:]]
    assert "spot-for-training" in ids and "billed-cost-allocation-tags" in ids  # never clipped


def test_a_misspelt_gpu_class_gets_a_did_you_mean(tmp_path: Path) -> None:
    policy = tmp_path / "g.yaml"
    policy.write_text(
        "version: 1\nrules:\n  - id: a\n    severity: high\n"
        "    require: {gpu.model: {at-most: A100-80BG}}\n"
    )
    result = gpu_audit("policies", "validate", str(policy))
    assert result.returncode == 2
    assert result.stderr.strip().endswith(
        "at-most: unknown GPU class 'A100-80BG' (did you mean 'A100-80GB'?)"
    )
