"""What the reports say with a history or a baseline: JSON (schema-valid), Markdown (parsed as
GitHub renders it), table, text, SARIF; and --fail-on-new for scan and check."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jsonschema

from tests.history.conftest import DATES, run
from tests.report.test_json_schema import schema
from tests.report.test_markdown import headings, parse, table_shapes, walk


def _scan(policy: Path, inventory: Path, *args: object, when: str) -> tuple[int, str, str]:
    return run("scan", "--inventory", inventory, "--policy", policy, "--now", when, *args)


def _history_json(quarters: tuple[Path, list[Path]], tmp_path: Path) -> list[dict[str, Any]]:
    policy, paths = quarters
    db = tmp_path / "history.db"
    out = []
    for path, when in zip(paths, DATES, strict=True):
        code, text, err = _scan(policy, path, "--history", db, "--format", "json",
                                "--fail-on", "none", when=when)  # fmt: skip
        assert code == 0, err
        out.append(json.loads(text))
    return out


def _validate(document: dict[str, Any]) -> None:
    validator = jsonschema.Draft202012Validator(
        schema(), format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )
    validator.validate(document)


def _by_key(document: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    listed = document["resources"]
    return {(f["rule_id"], listed[f["resource"]]["id"]): f for f in document["findings"]}


def test_json_carries_the_comparison_and_validates(
    quarters: tuple[Path, list[Path]], tmp_path: Path
) -> None:
    first, second, third = _history_json(quarters, tmp_path)
    for document in (first, second, third):
        _validate(document)
    assert first["summary"]["since"]["previous_at"] is None
    assert {f["change"] for f in first["findings"]} == {"new"}
    since = second["summary"]["since"]
    assert (since["new"], since["persisting"], since["resolved"], since["removed"]) == (1, 2, 2, 1)
    assert since["previous_at"] == DATES[0]
    assert since["monthly_cost_usd"] == {
        "then": first["summary"]["monthly_cost_usd"],
        "now": second["summary"]["monthly_cost_usd"],
    }
    b_spot = _by_key(first)[("spot-for-training", "i-b")]
    assert since["savings_realised_usd"] == b_spot["monthly_savings_usd"]
    assert {(r["rule_id"], r["resource_id"]) for r in since["resolved_findings"]} == {
        ("spot-for-training", "i-b"), ("owner-tag", "i-c"),
    }  # fmt: skip
    a_spot = _by_key(third)[("spot-for-training", "i-a")]
    assert (a_spot["change"], a_spot["first_seen"], a_spot["audits_open"]) == (
        "persisting", DATES[0], 3,
    )  # fmt: skip
    assert a_spot["fingerprint"] == _by_key(first)[("spot-for-training", "i-a")]["fingerprint"]
    assert [p["generated_at"] for p in third["summary"]["since"]["trend"]] == list(DATES)


def test_a_baseline_gives_the_same_comparison(
    quarters: tuple[Path, list[Path]], tmp_path: Path
) -> None:
    policy, paths = quarters
    remembered = _history_json(quarters, tmp_path)
    previous = None
    for index, (path, when) in enumerate(zip(paths, DATES, strict=True)):
        args: list[object] = ["--format", "json", "--fail-on", "none"]
        if previous is not None:
            args += ["--baseline", previous]
        code, text, err = _scan(policy, path, *args, when=when)
        assert code == 0, err
        document = json.loads(text)
        _validate(document)
        if index:
            since, expected = document["summary"]["since"], remembered[index]["summary"]["since"]
            assert since["source"] == f"baseline {previous.name}"  # no machine path
            assert {**since, "source": None} == {**expected, "source": None}
            assert document["findings"] == remembered[index]["findings"]
        previous = tmp_path / f"q{index + 1}-report.json"
        previous.write_text(text)


def test_markdown_opens_with_what_changed_and_renders(
    quarters: tuple[Path, list[Path]], tmp_path: Path
) -> None:
    policy, paths = quarters
    db = tmp_path / "history.db"
    for path, when in zip(paths[:2], DATES[:2], strict=True):
        assert _scan(policy, path, "--history", db, "-q", "--fail-on", "none", when=when)[0] == 0
    code, text, _ = _scan(policy, paths[2], "--history", db, "--format", "markdown",
                          "--fail-on", "none", when=DATES[2])  # fmt: skip
    assert code == 0
    tokens = parse(text)
    found = headings(tokens)
    summary = found.index(("h2", "Executive summary"))
    assert found[summary + 1] == ("h3", f"Since the last audit ({DATES[1][:10]})")
    fences = [t for t in walk(tokens) if t.type == "fence" and t.info == "mermaid"]
    (chart,) = [f.content for f in fences if "\nxychart-beta\n" in f.content]
    init, chart = chart.split("\n", 1)  # a palette whose line is dark on either theme
    assert init.startswith("%%{init: ") and '"plotColorPalette": "#1f2937' in init
    labels = ", ".join(f'"{d[:10]}"' for d in DATES)
    assert f"x-axis [{labels}]" in chart
    # spend a line, savings found bars; realised (nothing at the first audit) a line: a $0 bar
    # is a sliver in Mermaid
    assert chart.count("\n    bar [") == 1 and chart.count("\n    line [") == 2
    assert re.search(r"\n    line \[0, \d+, \d+\]", chart)
    lines = text.splitlines()
    persisting = lines.index("**Oldest persisting findings**")
    rows = [line for line in lines[persisting + 4 :] if line.startswith("| ")][:3]
    assert "open for 3 audits since 2026-05-31" in rows[0]
    assert "open for 2 audits since 2026-08-31" in rows[-1]
    trend = lines.index("| Audit | GPU spend | Savings found | Savings realised | Open findings |")
    assert [line.split(" | ")[0] for line in lines[trend + 2 : trend + 5]] == [
        f"| {d[:10]}" for d in DATES
    ]
    every = list(walk(tokens))
    ours = ("<wbr>",)  # a break opportunity the report writes in long names and rule ids
    html = ("html_block", "html_inline", "link_open")
    assert not [t for t in every if t.type in html and t.content not in ours]
    for shape in table_shapes(tokens):
        assert len(set(shape)) == 1, f"rows with differing cell counts: {shape}"
    assert {t.info for t in tokens if t.type == "fence"} == {"mermaid"}
    for line in chart.splitlines()[1:]:  # what GitHub's Mermaid accepts: numbers and quoted labels
        assert re.fullmatch(r'    (title "[^"]*"|x-axis \[("[0-9-]+"(, )?)+\]|'
                            r'y-axis "[^"]*" 0 --> \d+|(line|bar) \[(\d+(, )?)+\])', line), line  # fmt: skip


def test_table_text_and_sarif_mark_what_is_new(
    quarters: tuple[Path, list[Path]], tmp_path: Path
) -> None:
    policy, paths = quarters
    baseline = tmp_path / "q1.json"
    _, text, _ = _scan(policy, paths[0], "--format", "json", "--fail-on", "none", when=DATES[0])
    baseline.write_text(text)
    common = ["--baseline", baseline, "--fail-on", "none", "--format"]
    _, table, _ = _scan(policy, paths[1], *common, "table", when=DATES[1])
    assert [line.split()[1] for line in table.splitlines() if line.startswith("new ")] == [
        "spot-for-training"
    ]
    assert "since 2026-05-31: 1 new, 2 persisting, 2 resolved (savings realised $" in table
    _, log, _ = _scan(policy, paths[1], *common, "text", when=DATES[1])
    new = [line for line in log.splitlines() if line.endswith(" [new]")]
    assert len(new) == 1 and "/i-d: high spot-for-training" in new[0]
    _, sarif, _ = _scan(policy, paths[1], *common, "sarif", when=DATES[1])
    _, report, _ = _scan(policy, paths[1], *common, "json", when=DATES[1])
    prints = [
        r["partialFingerprints"]["gpuAuditFinding/v1"]
        for r in json.loads(sarif)["runs"][0]["results"]
    ]
    assert prints == [f["fingerprint"] for f in json.loads(report)["findings"]]


def test_fail_on_new_fails_only_on_findings_not_in_the_baseline(
    quarters: tuple[Path, list[Path]], tmp_path: Path
) -> None:
    policy, paths = quarters
    baseline = tmp_path / "q1.json"
    _, text, _ = _scan(policy, paths[0], "--format", "json", "--fail-on", "none", when=DATES[0])
    baseline.write_text(text)
    assert _scan(policy, paths[0], "-q", when=DATES[0])[0] == 1  # high findings
    assert (
        _scan(policy, paths[0], "--baseline", baseline, "--fail-on-new", "-q", when=DATES[0])[0]
        == 0
    )
    assert (
        _scan(policy, paths[1], "--baseline", baseline, "--fail-on-new", "-q", when=DATES[1])[0]
        == 1
    )
    assert _scan(policy, paths[1], "--baseline", baseline, "--new-only", "--fail-on", "critical",
                 "-q", when=DATES[1])[0] == 0  # fmt: skip
    code, _, err = _scan(policy, paths[1], "--fail-on-new", "-q", when=DATES[1])
    assert code == 2 and "need --baseline REPORT.json or --history" in err
    code, _, err = _scan(policy, paths[1], "--baseline", tmp_path / "missing.json", when=DATES[1])
    assert code == 2 and err.count("\n") == 1
    (tmp_path / "junk.json").write_text('{"findings": []}')
    code, _, err = _scan(policy, paths[1], "--baseline", tmp_path / "junk.json", when=DATES[1])
    assert code == 2 and "not a gpu-audit JSON report" in err


JOBS = """\
name: pretrain
resources:
  accelerators: A100:8
  use_spot: false
run: python train.py
"""


def test_check_adopts_on_an_existing_repository(tmp_path: Path, monkeypatch: Any) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    job = repo / "jobs" / "train.sky.yaml"
    job.parent.mkdir()
    job.write_text(JOBS)
    monkeypatch.chdir(repo)
    code, text, _ = run("check", "jobs/train.sky.yaml", "--format", "json", "--fail-on", "none")
    assert code == 0 and json.loads(text)["findings"]
    (repo / "baseline.json").write_text(text)
    assert run("check", "jobs/train.sky.yaml")[0] == 1  # the existing findings fail a plain check
    assert (
        run("check", "jobs/train.sky.yaml", "--baseline", "baseline.json", "--fail-on-new")[0] == 0
    )
    job.write_text(JOBS + "---\n" + JOBS.replace("pretrain", "pretrain-2"))
    code, out, _ = run("check", str(job), "--baseline", "baseline.json", "--fail-on-new")
    assert code == 1  # the second document is new; the first is the same finding by any path
    findings = [line for line in out.splitlines() if line.startswith(str(job))]
    new = [line for line in findings if line.endswith(" [new]")]
    assert new and len(new) < len(findings)
    assert all(int(line.split(":")[1]) > 5 for line in new)  # only the second document's
