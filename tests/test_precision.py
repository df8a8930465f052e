"""The labelled set's per-rule precision and recall (tests/precision.py, docs/pre-commit.md)."""

from __future__ import annotations

from tests.precision import FAILING, ROOT, measure, table


def test_high_severity_rules_are_right_nine_times_in_ten_and_miss_little() -> None:
    result = measure()
    high = [s for s in result.scores if s.severity in FAILING]
    assert {s.rule for s in high} >= {"spot-for-training", "checkpoint-on-spot", "retired-gpu"}
    for score in high:
        assert score.precision is None or score.precision >= 0.9, table(result)
        assert score.recall is None or score.recall >= 0.9, table(result)


def test_every_rule_keeps_its_recall_and_fewer_than_half_the_files_fail_ci() -> None:
    result = measure()
    for score in result.scores:
        assert score.recall is None or score.recall >= 0.9, table(result)
    assert result.failing_share < 0.5, table(result)


def test_the_published_table_is_the_measured_one() -> None:
    docs = (ROOT / "docs" / "pre-commit.md").read_text(encoding="utf-8")
    assert table(measure()) in docs, "rerun `python -m tests.precision` and paste the table"
