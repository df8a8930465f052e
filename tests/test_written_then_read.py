"""What one command writes, the next reads: `billing --write-prices` gives a file `--prices`
takes; `billing --history` on an empty or foreign file is refused and leaves it as it was;
`merge` keeps the same sweep whatever order the shard files are named in."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from gpu_audit.cli.main import main
from gpu_audit.prices.pricefile import PriceFile, PriceRow, parse, readable

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "fixtures" / "billing" / "demo"
NOW = ("--now", "2026-10-05T08:00:00Z")


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


def _row(**change: Any) -> PriceRow:
    base: dict[str, Any] = {
        "provider": "gcp", "type": "gpu:A100", "region": "us-central1", "capacity": "on-demand",
        "usd_per_hour": 2.9, "effective": "2026-07-01", "fetched_at": "2026-10-05T08:00:00Z",
        "source": "billing export 2026-Q3",
    }  # fmt: skip
    return PriceRow(**{**base, **change})


def test_readable_leaves_out_what_the_reader_refuses_and_keeps_the_rest() -> None:
    prices = PriceFile(
        (
            _row(),
            _row(region="us-east1", usd_per_hour=100_000.0),  # a tiny row with a large cost
            _row(region="bad\u202eregion"),
            _row(type="x" * 3000),
        ),
        "2026-10-05T08:00:00Z",
        {},
    )
    kept, refused = readable(prices)
    assert kept.rows == (_row(),)
    assert len(refused) == 3 and "usd_per_hour" in refused[0] and "region" in refused[1]
    from gpu_audit.prices.pricefile import dumps

    assert parse("p.json", json.loads(dumps(kept))).rows == kept.rows


def test_write_prices_from_a_bill_with_an_absurd_rate_is_read_by_prices(tmp_path: Path) -> None:
    duckdb = pytest.importorskip("duckdb")
    folder = tmp_path / "gcp"
    shutil.copytree(DEMO / "gcp", folder)
    target = folder / "focus-000000000000.parquet"
    source = DEMO / "gcp" / target.name
    conn = duckdb.connect()
    conn.execute(
        f"COPY (SELECT * FROM read_parquet('{source}') UNION ALL BY NAME (SELECT * REPLACE "
        "('us-east9' AS RegionId, 0.001 AS ConsumedQuantity, 250 AS EffectiveCost) "
        f"FROM read_parquet('{source}') WHERE ChargeDescription LIKE 'Nvidia%' "
        f"AND month(ChargePeriodStart) = 8 LIMIT 1)) TO '{target}' (FORMAT parquet)"
    )
    prices = tmp_path / "billed.json"
    code, _, err = invoke(
        "billing", str(folder), "--period", "2026-Q3", *NOW, "--format", "json",
        "--write-prices", str(prices),
    )  # fmt: skip
    assert code == 0, err
    assert "--write-prices: left out" in err and "us-east9" in err, err
    code, _, err = invoke("check", str(ROOT / "fixtures" / "sweeps"), "--prices", str(prices), "-q")
    assert code in (0, 1), err
    assert "gpu-audit: prices:" in err


@pytest.mark.parametrize("content", [b"", b"not a database\n", b"SQLite format 3\x00" + b"\0" * 84])
def test_billing_history_on_an_empty_or_foreign_file_is_refused_unchanged(
    tmp_path: Path, content: bytes
) -> None:
    pytest.importorskip("duckdb")
    history = tmp_path / "audits.db"
    history.write_bytes(content)
    code, out, err = invoke(
        "billing", str(DEMO / "gcp"), "--period", "2026-Q3", *NOW, "--format", "json",
        "--history", str(history),
    )  # fmt: skip
    assert code == 2, err
    assert err.startswith(f"gpu-audit: error: {history}: history: "), err
    assert "never seen" not in out
    assert history.read_bytes() == content
    assert sorted(p.name for p in tmp_path.iterdir()) == ["audits.db"]  # no -wal, no -shm


def _shards(tmp_path: Path) -> list[str]:
    sys.path.insert(0, str(ROOT / "tests" / "collectors"))
    from test_shard_reports import fleet, write  # type: ignore[import-not-found]

    held = fleet()
    paths = [write(tmp_path / f"shard-{k}.json", k, held[k]) for k in (1, 2, 3)]
    trial = {
        "id": "t1", "name": "t1", "outcome": "completed", "instance_type": "ml.g5.xlarge",
        "instances": 1, "capacity": "on-demand", "hourly_usd": 1.408, "billable_seconds": 3600,
        "training_seconds": 3600,
    }  # fmt: skip
    sweep = {
        "kind": "tuning", "provider": "aws", "service": "sagemaker", "id": "arn:sweep",
        "name": "s", "account": "1", "region": "us-east-1", "state": "InProgress",
        "since": "2026-09-01T00:00:00Z", "trials": [trial],
    }  # fmt: skip
    later = {**sweep, "state": "Completed", "trials": [trial, {**trial, "id": "t2"}]}
    seen_twice = json.loads(Path(paths[0]).read_text())["resources"][0]
    for path, value in ((paths[0], later), (paths[1], sweep)):
        document = json.loads(Path(path).read_text())
        document["sweeps"] = [value]
        if path == paths[1]:  # shard 2 saw shard 1's first resource too, named otherwise
            document["resources"].append({**seen_twice, "name": "seen-by-shard-2"})
        Path(path).write_text(json.dumps(document))
    return paths


def test_merge_keeps_the_fuller_sweep_whatever_the_order(tmp_path: Path) -> None:
    paths = _shards(tmp_path)
    outputs = []
    for order in (paths, paths[::-1], [paths[1], paths[0], paths[2]]):
        code, out, err = invoke("merge", *order, "--format", "json")
        assert code in (0, 1), err
        report = json.loads(out)
        outputs.append((report["sweeps"], report["resources"], report["summary"]))
    assert outputs[0] == outputs[1] == outputs[2]
    assert "seen-by-shard-2" not in json.dumps(outputs[0][1])  # the lowest shard's, in any order
    (sweep,) = outputs[0][0]
    assert sweep["state"] == "Completed" and len(sweep["trials"]) == 2
