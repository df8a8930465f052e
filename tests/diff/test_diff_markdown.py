"""The diff's Markdown as a pull-request comment, rendered by markdown-it-py (CommonMark + GFM
tables): the marker, a title with the total, one table of six columns, findings collapsed,
the prices' date, and values from files that stay inert text."""

from __future__ import annotations

from markdown_it.token import Token

from gpu_audit.diff.markdown import MARKER
from tests.diff.conftest import (
    EVAL_L4,
    SWEEP_A10G,
    TRAIN_A100_SPOT,
    TRAIN_H100_ON_DEMAND,
    Repo,
    cli,
    diff_json,
)
from tests.report.test_markdown import parse, walk

HOSTILE_NAME = "x|y <img src=x onerror=alert(1)> [a](https://evil.example) `c` **b** \u202e"


def _rows(tokens: list[Token]) -> list[list[str]]:
    """Every table row's cells as rendered text (inline HTML kept, so it would show)."""
    rows: list[list[str]] = []
    for index, token in enumerate(tokens):
        if token.type == "tr_open":
            rows.append([])
        elif token.type in ("th_open", "td_open"):
            children = tokens[index + 1].children or []
            rows[-1].append("".join(t.content for t in walk(children)))
    return rows


def _markdown(repo: Repo) -> tuple[str, list[Token]]:
    code, out, err = cli("diff", "--base", "HEAD~1", "--format", "markdown")
    assert code == 0, err
    return out, parse(out)


def _changed(repo: Repo) -> Repo:
    # The removed job trains on spot with no checkpoint: its finding is the resolved one (an
    # evaluation run is batch inference, which the checkpoint rule does not judge).
    finetune = EVAL_L4.replace("python eval.py", "python finetune.py")
    repo.commit({"jobs/train.yaml": TRAIN_A100_SPOT, "jobs/eval.yaml": finetune}, "base")
    repo.commit(
        {
            "jobs/train.yaml": TRAIN_H100_ON_DEMAND,
            "jobs/eval.yaml": None,
            "jobs/sweep.yaml": SWEEP_A10G,
        }
    )
    return repo


def test_a_pull_request_comment_with_six_columns(repo: Repo) -> None:
    text, tokens = _markdown(_changed(repo))
    _, report = diff_json("--base", "HEAD~1")
    total = report["total"]
    assert text.splitlines()[0] == MARKER
    [heading] = [tokens[i + 1] for i, t in enumerate(tokens) if t.type == "heading_open"]
    title = "".join(t.content for t in walk(heading.children or []))
    assert f"+${total['delta_usd']:,.2f} per run ({total['delta_percent']:+,.1f}%)" in title
    assert sum(1 for t in tokens if t.type == "table_open") == 1
    rows = _rows(tokens)
    assert rows[0] == ["job", "change", "GPUs", "capacity", "runtime cap", "per run"]
    assert len(rows) == 1 + total["changed_jobs"] == 4
    assert all(len(row) == 6 for row in rows)
    # narrow: short middle cells; the first holds the job and its file, the last two amounts
    assert all(len(cell) <= 40 for row in rows for cell in row[1:5]), rows
    assert all(len(row[5]) <= 64 for row in rows), rows
    train = next(row for row in rows if "train-llm" in row[0])
    assert train[1:5] == ["modified", "A100-40GB × 8 → H100 × 8", "spot → on-demand", "10 h → 24 h"]
    assert "$50.93 → $1,320.96" in train[5] and "+$1,270.03 (+2,493.7%)" in train[5]
    assert "Prices as of 2026-" in text


def test_new_findings_are_in_a_collapsed_section(repo: Repo) -> None:
    text, tokens = _markdown(_changed(repo))
    blocks = [t.content for t in tokens if t.type == "html_block"]
    assert any(b.startswith("<details><summary>") and "new finding" in b for b in blocks)
    opened = text.index("new findings</summary>")
    closed = text.index("</details>", opened)
    assert "spot-for-training at jobs/train.yaml:4" in text[opened:closed]
    assert "fix: set \\`resources.use\\_spot: true\\`" in text[opened:closed]  # the file's key
    resolved = text.index("resolved finding</summary>")
    assert "checkpoint-on-spot at HEAD\\~1:jobs/eval.yaml:1" in text[resolved:]


def test_values_from_files_stay_text(repo: Repo) -> None:
    hostile = EVAL_L4.replace("name: eval", f"name: {HOSTILE_NAME!r}".replace("'", '"'))
    repo.commit({"jobs/eval.yaml": EVAL_L4}, "base")
    repo.commit({"jobs/eval.yaml": hostile.replace('"2"', '"3"')})
    text, tokens = _markdown(repo)
    rows = _rows(tokens)
    assert all(len(row) == 6 for row in rows) and len(rows) == 3  # removed eval, added hostile
    assert not {t.type for t in walk(tokens)} & {"link_open", "image", "code_inline", "em_open"}
    assert "<img" not in "".join(t.content for t in walk(tokens) if t.type.startswith("html"))
    assert "\u202e" not in text and "\\u202e" in text
    hostile_row = next(row for row in rows if "img" in row[0])
    assert "x|y <img src=x onerror=alert(1)>" in hostile_row[0]


def test_a_full_hash_base_is_shown_abbreviated(repo: Repo) -> None:
    _changed(repo)
    base = repo.git("rev-parse", "HEAD~1").strip()
    code, out, _ = cli("diff", "--base", base, "--head", "HEAD", "--format", "markdown")
    assert code == 0
    assert f"between {base[:12]} and HEAD:" in out and base not in out


def test_a_decrease_is_signed_and_a_resolved_finding_says_was(repo: Repo) -> None:
    """Issue 38.12: `−$1,270.03` (a minus sign, not a hyphen) and `was:` for the old state."""
    from tests.diff.conftest import TRAIN_A100_SPOT, TRAIN_H100_ON_DEMAND, cli

    repo.commit({"jobs/train.yaml": TRAIN_H100_ON_DEMAND}, "base")
    repo.write({"jobs/train.yaml": TRAIN_A100_SPOT})
    code, out, _ = cli("diff", "--base", "HEAD", "--format", "markdown")
    assert code == 0
    title = out.splitlines()[1]
    assert "\u2212\\$1,270.03 per run (\u221296.1%)" in title, title
    resolved = out[out.index("resolved finding") :]
    assert "spot-for-training at HEAD:jobs/train.yaml:4: was: Fault-tolerant" in resolved
