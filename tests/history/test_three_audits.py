"""Three quarterly scans of a changing fleet recorded in one database: the comparison."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from gpu_audit.core.results import Change
from gpu_audit.history.load import load_audit
from gpu_audit.history.store import HistoryStore
from tests.history.conftest import DATES, run


def _day(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)


def _record(policy: Path, paths: list[Path], db: Path, dates: tuple[str, ...] = DATES) -> None:
    for path, when in zip(paths, dates, strict=True):
        code, _, err = run(
            "scan", "--inventory", path, "--policy", policy, "--history", db, "--now", when,
            "--fail-on", "none", "-q",
        )  # fmt: skip
        assert code == 0, err


def test_three_audits_new_persisting_resolved(
    quarters: tuple[Path, list[Path]], tmp_path: Path
) -> None:
    policy, paths = quarters
    db = tmp_path / "history.db"
    _record(policy, paths, db)
    store = HistoryStore.open(str(db), create=False)
    audits = store.audits()
    assert [a.generated_at for a in audits] == [_day(d) for d in DATES]
    assert [(a.new, a.persisting, a.resolved) for a in audits] == [(4, 0, 0), (1, 2, 2), (1, 3, 0)]

    second = load_audit(store, audits[1].id)
    first = load_audit(store, audits[0].id)
    assert second.since is not None and second.since.previous_at == _day(DATES[0])
    resolved = {(r.rule_id, r.resource_id) for r in second.since.resolved}
    assert resolved == {("spot-for-training", "i-b"), ("owner-tag", "i-c")}
    # savings realised: what b's spot finding saved in quarter 1
    b_spot = next(
        f for f in first.findings if f.rule_id == "spot-for-training" and f.resource.id == "i-b"
    )
    assert b_spot.monthly_savings_usd and b_spot.monthly_savings_usd > 0
    assert second.since.savings_realised_usd == round(b_spot.monthly_savings_usd, 2)
    assert [r.resource_id for r in second.since.removed] == ["i-c"]
    c_cost = next(r for r in first.resources if r.id == "i-c").monthly_cost_usd
    assert second.since.removed[0].monthly_cost_usd == c_cost

    third = load_audit(store, audits[2].id)
    assert third.since is not None
    by_key = {
        (f.rule_id, f.resource.id): c
        for f, c in zip(third.findings, third.since.changes, strict=True)
    }
    a_spot = by_key[("spot-for-training", "i-a")]
    assert (a_spot.change, a_spot.first_seen, a_spot.audits_open) == (
        Change.PERSISTING, _day(DATES[0]), 3,
    )  # fmt: skip
    b_owner = by_key[("owner-tag", "i-b")]  # re-tagged (team) and reordered: the same finding
    assert (b_owner.change, b_owner.first_seen, b_owner.audits_open) == (
        Change.PERSISTING, _day(DATES[0]), 3,
    )  # fmt: skip
    d_spot = by_key[("spot-for-training", "i-d")]
    assert (d_spot.change, d_spot.first_seen, d_spot.audits_open) == (
        Change.PERSISTING, _day(DATES[1]), 2,
    )  # fmt: skip
    assert by_key[("owner-tag", "i-e")].change is Change.NEW

    trend = third.since.trend
    assert [p.generated_at for p in trend] == [_day(d) for d in DATES]
    assert [p.savings_realised_usd for p in trend] == [0.0, second.since.savings_realised_usd, 0.0]
    assert [p.monthly_cost_usd for p in trend] == [a.monthly_cost_usd for a in audits]
    assert trend[0].monthly_cost_usd == round(
        sum(r.monthly_cost_usd or 0 for r in first.resources), 2
    )
    code, out, _ = run("history", "trend", "--history", db)
    assert code == 0 and [line.split()[0] for line in out.splitlines()[2:]] == [
        d[:10] for d in DATES
    ]
    assert all(line.split()[1].startswith("$") for line in out.splitlines()[2:])  # issue 38.12
    code, out, _ = run("history", "trend", "--history", db, "--format", "json")
    points = json.loads(out)["points"]
    assert [p["monthly_cost_usd"] for p in points] == [p.monthly_cost_usd for p in trend]
    code, out, _ = run("history", "list", "--history", db, "--format", "json")
    listed = json.loads(out)["audits"]
    assert [a["id"] for a in listed] == [a.id for a in audits]
    assert [a["savings_realised_usd"] for a in listed] == [a.savings_realised_usd for a in audits]
    store.close()


def test_recording_out_of_order_compares_with_the_audit_before(
    quarters: tuple[Path, list[Path]], tmp_path: Path
) -> None:
    policy, paths = quarters
    db = tmp_path / "history.db"
    _record(policy, [paths[2], paths[0]], db, (DATES[2], DATES[0]))  # quarter 3, then 1
    store = HistoryStore.open(str(db), create=False)
    audits = store.audits()
    assert [a.generated_at for a in audits] == [_day(DATES[0]), _day(DATES[2])]
    assert audits[0].new == 4 and audits[0].persisting == 0
    store.close()


def test_prune_keeps_the_latest(quarters: tuple[Path, list[Path]], tmp_path: Path) -> None:
    policy, paths = quarters
    db = tmp_path / "history.db"
    _record(policy, paths, db)
    code, out, _ = run("history", "prune", "--keep", "1", "--history", db)
    assert code == 0 and "pruned 2 audits" in out
    store = HistoryStore.open(str(db), create=False)
    (kept,) = store.audits()
    assert kept.generated_at == _day(DATES[2])
    assert store.conn.execute("SELECT count(DISTINCT audit_id) FROM documents").fetchone() == (1,)
    store.close()


def test_the_history_setting_records_without_the_flag(
    quarters: tuple[Path, list[Path]], tmp_path: Path
) -> None:
    policy, paths = quarters
    config = tmp_path / "gpu-audit.yaml"
    config.write_text("history: audits/history.db\n")
    (tmp_path / "audits").mkdir()
    for path, when in zip(paths[:2], DATES[:2], strict=True):
        code, _, err = run(
            "scan", "--inventory", path, "--policy", policy, "--config", config, "--now", when,
            "--fail-on", "none", "-q",
        )  # fmt: skip
        assert code == 0, err
    code, out, _ = run("history", "list", "--config", config)
    assert code == 0 and len(out.splitlines()) == 4  # headers, rule, two audits
