"""The terminal keeps what matters (issue 26 item 5): at 80 and 120 columns `check` keeps
`file:line` and what was found, the name and location shrink first; estimate, catalog lookup and
history list fit like the scan table; every column has a header."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from gpu_audit.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
JOBS = str(ROOT / "fixtures" / "jobs" / "skypilot")
DEMO = str(ROOT / "fixtures" / "inventory")


def _out(width: int, *args: str) -> str:
    result = CliRunner().invoke(main, list(args), env={"COLUMNS": str(width), "NO_COLOR": "1"})
    assert result.exit_code in (0, 1), result.output
    return result.stdout


def _tables(text: str) -> list[list[str]]:
    """Each table: the header line, the rule line and the rows up to a blank line."""
    lines, found = text.splitlines(), []
    for index, line in enumerate(lines):
        if (
            index + 1 < len(lines)
            and set(lines[index + 1]) <= {"-", " "}
            and "--" in lines[index + 1]
        ):
            block = [line, lines[index + 1]]
            for row in lines[index + 2 :]:
                if not row.strip() or row.startswith("["):
                    break
                block.append(row)
            found.append(block)
    return found


@pytest.mark.parametrize("width", [80, 120])
def test_check_keeps_file_line_and_found(width: int) -> None:
    text = _out(width, "check", JOBS, "--format", "table", "--fail-on", "none")
    for table in _tables(text):
        assert max(map(len, table)) <= width
        header = table[0].split()
        assert "resource" in header and "found" in header, header
        cells = "\n".join(table[2:])
        found = header.index("found")
        assert min(len(r.split("  ")[-1].strip()) for r in table[2:]) >= 14 or width > 80
        assert ".yaml:" in cells  # the file:line stays
        assert found == len(header) - 1
    if width >= 120:
        assert "capacity = on-demand\n" in text + "\n"


@pytest.mark.parametrize("width", [80, 120])
def test_the_scan_table_clips_the_name_before_what_was_found(width: int) -> None:
    text = _out(width, "scan", "--inventory", f"{DEMO}/demo.yaml", "--format", "table",
                "--fail-on", "none")  # fmt: skip
    tables = _tables(text)
    assert tables
    for table in tables:
        assert max(map(len, table)) <= width
    assert "capacity = on-demand" in text


@pytest.mark.parametrize("width", [80, 120])
@pytest.mark.parametrize(
    "args",
    [
        ("estimate", "--gpu", "A100:8", "--hours", "3", "--format", "table"),
        ("estimate", f"{ROOT}/fixtures/jobs/sagemaker/tuning-no-early-stopping.yaml",
         "--format", "table"),
        ("catalog", "lookup", "p4d.24xlarge", "nvidia-tesla-a100", "Standard_NC24ads_A100_v4"),
    ],
)  # fmt: skip
def test_other_tables_fit_the_terminal(width: int, args: tuple[str, ...]) -> None:
    text = _out(width, *args)
    tables = _tables(text)
    assert tables
    for table in tables:
        assert max(map(len, table)) <= width, table[0]
        assert all(h.strip() for h in table[0].split("  ") if h)  # every column has a header


def test_catalog_sources_are_footnotes() -> None:
    text = _out(80, "catalog", "lookup", "p4d.24xlarge")
    assert "[1]" in text.splitlines()[2]
    assert any(line.startswith("[1] as of ") for line in text.splitlines())
    assert max(map(len, text.splitlines())) <= 80


def test_history_list_fits_and_the_new_column_has_a_header(tmp_path: Path) -> None:
    db = str(tmp_path / "a.db")
    common = ["scan", "--policy", f"{DEMO}/demo-policy.yaml", "--history", db, "--fail-on", "none"]
    assert (
        CliRunner().invoke(main, [*common, "--inventory", f"{DEMO}/demo.yaml", "-q"]).exit_code == 0
    )
    text = _out(80, *common, "--inventory", f"{DEMO}/demo-next.yaml", "--format", "table")
    assert _tables(text)[0][0].startswith("change ")
    listed = _out(80, "history", "list", "--history", db)
    assert max(map(len, listed.splitlines())) <= 80
    assert "spend/mo" in listed.splitlines()[0] and "$600,020" in listed


def test_two_files_never_show_the_same_clipped_name(tmp_path: Path) -> None:
    """Issue 38.4: `…/skypilot-no-cap-long-name.yaml:2` for two folders read the same."""
    job = (ROOT / "fixtures" / "estimate" / "skypilot-no-cap.yaml").read_text()
    paths = []
    for team in ("alpha", "bravo"):
        path = tmp_path / f"team-{team}" / "training" / "skypilot-no-cap-long-name.yaml"
        path.parent.mkdir(parents=True)
        path.write_text(job.replace("name: h100-sweep", f"name: sweep-{team}"))
        paths.append(str(path))
    out = _out(80, "check", *paths, "--format", "table")
    [high, *_] = _tables(out)
    shown = [row.split()[2] for row in high[2:] if row.startswith("spot-for-training")]
    assert len(shown) == 2 and shown[0] != shown[1], shown
    assert all("…" in cell and cell.endswith("ame.yaml:2") for cell in shown)
    assert all(len(line) <= 80 for line in high)
