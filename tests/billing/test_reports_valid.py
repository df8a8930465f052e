"""Every report valid by its own schema: a correction's negative GPU-hours, a time before year
1000 (four-digit years), a CSV cell holding a carriage return (quoted, the row whole), and an
estimate of an absurd sweep (refused at its line, never `Infinity`)."""

from __future__ import annotations

import csv
import io
import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from gpu_audit.cli.main import main
from gpu_audit.core.stamps import stamp

duckdb = pytest.importorskip("duckdb")

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "fixtures" / "billing" / "demo"
SCHEMA = json.loads((ROOT / "src/gpu_audit/billing/billing-v1.schema.json").read_text())


def billing(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["billing", *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


def gcp_plus(tmp_path: Path, row: str) -> Path:
    """The demo GCP export with one more row: the first A100 row as `row` (a SELECT * REPLACE)."""
    folder = tmp_path / "gcp"
    shutil.copytree(DEMO / "gcp", folder)
    target = folder / "focus-000000000000.parquet"
    source = DEMO / "gcp" / target.name
    conn = duckdb.connect()
    conn.execute("SET TimeZone = 'UTC'")
    conn.execute(
        f"COPY (SELECT * FROM read_parquet('{source}') UNION ALL BY NAME "
        f"(SELECT * REPLACE ({row}) FROM read_parquet('{source}') "
        "WHERE ChargeDescription LIKE 'Nvidia%' AND month(ChargePeriodStart) = 8 LIMIT 1)) "
        f"TO '{target}' (FORMAT parquet)"
    )
    return folder


def test_a_correction_with_its_own_tag_gives_negative_gpu_hours_in_a_valid_report(
    tmp_path: Path,
) -> None:
    folder = gcp_plus(
        tmp_path,
        "'Correction' AS ChargeClass, -ConsumedQuantity * 3 AS ConsumedQuantity, "
        "-EffectiveCost * 3 AS EffectiveCost, -BilledCost * 3 AS BilledCost, "
        "[{'Key': 'team', 'Value': 'refunded'}] AS x_Labels",
    )
    code, out, err = billing(
        str(folder), "--period", "2026-Q3", "--now", "2026-10-05T08:00:00Z", "--format", "json"
    )
    assert code == 0, err
    report = json.loads(out)
    jsonschema.validate(report, SCHEMA)
    lines = [line for lines in report["breakdowns"].values() for line in lines]
    assert any(line["gpu_hours"] < 0 for line in lines), lines


def test_a_time_before_year_1000_has_four_digits() -> None:
    assert stamp(datetime(999, 1, 2, 3, 4, 5, tzinfo=UTC)) == "0999-01-02T03:04:05Z"
    assert stamp(datetime(1, 1, 1, tzinfo=UTC), "%Y-%m-%d") == "0001-01-01"
    assert stamp(datetime(2026, 7, 1, tzinfo=UTC)) == "2026-07-01T00:00:00Z"


def test_a_billing_report_of_year_999_is_valid(tmp_path: Path) -> None:
    code, out, err = billing(
        str(DEMO / "gcp"), "--period", "2026-Q3", "--now", "0999-12-31T00:00:00Z", "--format",
        "json",
    )  # fmt: skip
    assert code == 0, err
    report = json.loads(out)
    jsonschema.validate(report, SCHEMA)
    assert report["generated_at"] == "0999-12-31T00:00:00Z"


def test_a_carriage_return_in_a_csv_cell_is_quoted(tmp_path: Path) -> None:
    folder = gcp_plus(tmp_path, "[{'Key': 'team', 'Value': 'ml' || chr(13) || 'ops'}] AS x_Labels")
    code, out, err = billing(
        str(folder), "--period", "2026-Q3", "--now", "2026-10-05T08:00:00Z", "--format", "csv"
    )
    assert code == 0, err
    rows = list(csv.reader(io.StringIO(out, newline="")))
    assert all(len(row) == len(rows[0]) for row in rows), rows
    assert ["breakdown", "tag:team", "ml\rops"] in [row[:3] for row in rows]


SWEEP = ROOT / "fixtures" / "sweeps" / "sagemaker-tuning.json"


def _sweep(tmp_path: Path, trials: float, budget: str = "100") -> Path:
    body = json.loads(SWEEP.read_text())
    body["HyperParameterTuningJobConfig"]["ResourceLimits"]["MaxNumberOfTrainingJobs"] = trials
    body["TrainingJobDefinition"]["ResourceConfig"]["InstanceCount"] = 10**6
    body["TrainingJobDefinition"]["StoppingCondition"]["MaxRuntimeInSeconds"] = 3600 * 10**6
    body["Tags"][0]["Value"] = budget
    path = tmp_path / "sweep.json"
    path.write_text(json.dumps(body))
    return path


def _strict(text: str) -> object:
    def refuse(name: str) -> object:
        raise AssertionError(f"{name} in the JSON")

    return json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize(
    ("trials", "budget", "problem"),
    [
        (10**300, "100", "hpo.max_trials: 1e+300 is above the maximum 1e+09"),
        (1e308, "100", "hpo.max_trials: 1e+308 is above the maximum 1e+09"),
        (20, "1e308", "tag gpu-audit/budget-usd: 1e+308 is above the maximum 1e+15"),
    ],
    ids=["trials-1e300", "trials-1e308", "budget-1e308"],
)
def test_an_absurd_sweep_is_refused_at_its_line(
    tmp_path: Path, trials: float, budget: str, problem: str
) -> None:
    path = _sweep(tmp_path, trials, budget)
    for command in (["estimate", str(path), "--format", "json"], ["check", str(path)]):
        result = CliRunner().invoke(main, command)
        assert result.exit_code == 2, result.stderr
        assert f"{path}:1: {problem}" in result.stderr, result.stderr
        assert "internal error" not in result.stderr


def test_the_largest_sweep_allowed_gives_finite_json(tmp_path: Path) -> None:
    path = _sweep(tmp_path, 10**9, str(10**15))
    result = CliRunner().invoke(main, ["estimate", str(path), "--format", "json"])
    assert result.exit_code in (0, 1), result.stderr
    _strict(result.stdout)
    for fmt in ("json", "sarif", "markdown"):
        result = CliRunner().invoke(main, ["check", str(path), "--format", fmt])
        assert result.exit_code in (0, 1), result.stderr
        if fmt != "markdown":
            _strict(result.stdout)
        assert "Infinity" not in result.stdout
