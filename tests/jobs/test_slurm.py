"""Slurm batch scripts: what the fixtures cannot say (time forms, options after the first
command, ignores on `#SBATCH` lines, discovery by opening, and a site's rate as the only price)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from tests.conftest import FIXTURES

from gpu_audit.cli.main import main
from gpu_audit.jobs import load_jobs
from gpu_audit.jobs.discover import expand
from gpu_audit.jobs.slurm.parser import hours

SITE_PRICES = FIXTURES / "prices" / "site-slurm.json"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("30", 0.5),  # minutes
        ("3:00", 0.05),  # minutes:seconds
        ("12:30:00", 12.5),  # hours:minutes:seconds
        ("2-12", 60.0),  # days-hours
        ("1-00:30", 24.5),  # days-hours:minutes
        ("1-01:00:36", 25.01),  # days-hours:minutes:seconds
        ("UNLIMITED", None),
        ("infinite", None),
    ],
)
def test_every_slurm_time_form(value: str, expected: float | None) -> None:
    assert hours(value) == expected


def _script(tmp_path: Path, text: str, name: str = "job.sbatch") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_a_bad_time_is_one_located_line_and_exit_2(tmp_path: Path) -> None:
    path = _script(tmp_path, "#!/bin/bash\n#SBATCH --gpus=1\n#SBATCH --time=soon\nrun\n")
    result = CliRunner().invoke(main, ["check", str(path)])
    assert result.exit_code == 2
    assert f"{path}:3: --time: 'soon' is not a Slurm time" in result.output
    assert "Traceback" not in result.output


def test_tasks_nodes_and_directives_after_the_first_command(tmp_path: Path) -> None:
    path = _script(
        tmp_path,
        "#!/bin/bash\n#SBATCH --nodes=2-4 --ntasks-per-node=2\n#SBATCH --gpus-per-task=l4:1\n"
        "echo start\n#SBATCH --gpus-per-task=h100:8\n",  # sbatch stops at `echo`
    )
    (job,) = load_jobs([str(path)]).resources
    assert (job.gpu.model, job.gpu.count) == ("L4", 8)  # 1 a task x 2 a node x 4 nodes at most


def test_an_ignore_on_or_above_an_sbatch_line_is_that_lines(tmp_path: Path) -> None:
    path = _script(
        tmp_path,
        "#!/bin/bash\n# gpu-audit: ignore[gpu-class-cap] approved in FIN-9\n"
        "#SBATCH --gres=gpu:h100:8\n#SBATCH --time=1:00:00  # gpu-audit: ignore[job-runtime-cap]\n"
        "srun python train.py\n",
    )
    (job,) = load_jobs([str(path)]).resources
    assert dict(job.source.suppressions) == {
        3: {"gpu-class-cap": "approved in FIN-9"},
        4: {"job-runtime-cap": ""},
    }
    result = CliRunner().invoke(main, ["check", str(path), "--format", "json"])
    found = {f["rule_id"]: f["suppressed"] for f in json.loads(result.stdout)["findings"]}
    assert found["gpu-class-cap"] is not None  # suppressed at the #SBATCH line, not line 5


def test_a_directory_gives_its_scripts_and_no_other_shell_file(tmp_path: Path) -> None:
    _script(tmp_path, "#!/bin/bash\n#SBATCH --gpus=1\nrun\n", "a.sbatch")
    _script(tmp_path, "#!/bin/bash\n#SBATCH --gpus=1\nrun\n", "b.sh")
    _script(tmp_path, "#!/bin/bash\nmake\n", "build.sh")  # a shell script, not a job
    _script(tmp_path, "#SBATCH --gpus=1\n", "notes.md")
    files, _ = expand([str(tmp_path)])
    assert sorted(Path(f).name for f in files) == ["a.sbatch", "b.sh"]


def test_a_script_is_priced_only_by_its_sites_rate(tmp_path: Path) -> None:
    script = str(FIXTURES / "jobs" / "slurm" / "gres-a100.sbatch")  # 8 A100-40GB, partition gpu
    args = ["estimate", script, "--hours", "10", "--format", "json"]
    (bare,) = json.loads(CliRunner().invoke(main, args).stdout)["jobs"]
    assert bare["on_demand"] is None and bare["spot"] is None  # no cloud's rate, ever
    result = CliRunner().invoke(main, [*args, "--prices", str(SITE_PRICES)])
    (priced,) = json.loads(result.stdout)["jobs"]
    assert priced["on_demand"]["hourly_usd"] == pytest.approx(8 * 1.1)
    assert priced["on_demand"]["run_usd"] == pytest.approx(88.0)
    # another partition's script is not given this one's rate
    other = _script(
        tmp_path, "#SBATCH -p debug --gres=gpu:a100:1 -t 1:00:00\nrun\n", "debug.sbatch"
    )
    args = ["estimate", str(other), "--format", "json", "--prices", str(SITE_PRICES)]
    (unpriced,) = json.loads(CliRunner().invoke(main, args).stdout)["jobs"]
    assert unpriced["on_demand"] is None


def test_a_site_row_names_a_gpu_model(tmp_path: Path) -> None:
    data = json.loads(SITE_PRICES.read_text())
    data["rows"][0]["type"] = "p4d.24xlarge"
    bad = tmp_path / "prices.json"
    bad.write_text(json.dumps(data))
    script = str(FIXTURES / "jobs" / "slurm" / "gres-a100.sbatch")
    result = CliRunner().invoke(main, ["estimate", script, "--hours", "1", "--prices", str(bad)])
    assert result.exit_code == 2
    assert "type: a slurm rate is per GPU-hour of a model: expected `slurm:gpu:<MODEL>`" in (
        result.output
    )
