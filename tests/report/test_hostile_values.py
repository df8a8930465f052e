"""A hostile value through every format of `check`, `scan`, `estimate`, `diff` and `history`:
nothing in it survives (`merge` renders through the same reporters as `scan`; its inputs need a
live scan, tests/collectors/test_shard_reports.py).

The name carries a Markdown link, an HTML tag, a right-to-left override, a CSV formula start and
a pair of `$` (GitHub's inline math). Each output is read by the reader it is for: Markdown is
rendered by markdown-it (no link, no HTML, no math from the value), CSV by the csv module (no
cell starts a formula), JSON by json (the value exact, as data), text and tables as a terminal
would show them (no raw bidi or control character).
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from markdown_it import MarkdownIt

from gpu_audit.cli.main import main
from gpu_audit.estimate import FORMATS as ESTIMATE_FORMATS
from gpu_audit.report.escape import UNSAFE
from gpu_audit.report.registry import REPORTERS

HOSTILE = "[x](https://evil.example) <img src=x onerror=alert(1)> \u202eexe.txt $1 $2 =1+2"
FORMULA = "=HYPERLINK(1)"
JOB = f"""\
name: {json.dumps(HOSTILE)}
resources:
  accelerators: H100:8
  use_spot: false
  labels:
    team: {json.dumps(FORMULA)}
run: python train.py
"""


# A file name can carry all of it but the `//` of a URL.
HOSTILE_NAME = "[x](evil.example) <img src=x onerror=alert(1)> \u202eexe $1 $2 =1+2.sky.yaml"


@pytest.fixture
def job(tmp_path: Path) -> Path:
    path = tmp_path / HOSTILE_NAME
    path.write_text(JOB, encoding="utf-8")
    return path


def _survivors(fmt: str, output: str, shown: bool = True) -> list[str]:
    """What of the hostile value is live in this output, read as its reader reads it (and
    whether it is there at all: a test of an output that never shows it would prove nothing;
    `shown=False` for the summaries that name no resource)."""
    marks = ("onerror", "evil", "exe", "=1+2")  # a table clips a value, keeping one of them
    found = [] if not shown or any(m in output for m in marks) else ["the value is not shown"]
    if fmt in ("json", "sarif"):
        json.loads(output)  # valid JSON: the value is data, escaped by the encoder
        return found
    raw = UNSAFE.search(output.replace("\r\n", "").replace("\n", ""))  # lines are fine
    if raw:
        found.append(f"a raw control or bidi character {raw.group()!r}")
    if fmt == "markdown":
        html = MarkdownIt("commonmark").enable("table").render(output)
        if 'href="https://evil.example' in html:
            found.append("a link")
        if "<img" in html:
            found.append("an HTML tag")
        for line in output.splitlines():
            unescaped = line.replace("\\$", "")
            if unescaped.count("$") >= 2 and "$1" in unescaped:
                found.append(f"inline math: {line}")
    if fmt == "csv":
        for row in csv.reader(io.StringIO(output)):
            found += [f"a formula cell {cell!r}" for cell in row if cell[:1] in ("=", "+", "@")]
    return found


@pytest.mark.parametrize("fmt", list(REPORTERS))
def test_check_escapes_the_value_in_every_format(job: Path, fmt: str) -> None:
    result = CliRunner().invoke(main, ["check", str(job), "--format", fmt, "--fail-on", "none"])
    assert result.exit_code == 0, result.output
    assert _survivors(fmt, result.stdout) == []


@pytest.mark.parametrize("fmt", list(ESTIMATE_FORMATS))
def test_estimate_escapes_the_value_in_every_format(job: Path, fmt: str) -> None:
    result = CliRunner().invoke(main, ["estimate", str(job), "--hours", "2", "--format", fmt])
    assert result.exit_code == 0, result.output
    assert _survivors(fmt, result.stdout) == []
    if fmt == "json":
        (estimate,) = json.loads(result.stdout)["jobs"]
        assert estimate["job"] == HOSTILE  # data, exactly as written


INVENTORY = f"""\
version: 1
captured_at: '2026-11-20T06:00:00Z'
resources:
- provider: aws
  id: {json.dumps("i-" + HOSTILE)}
  name: {json.dumps(HOSTILE)}
  account: '111122223333'
  region: us-east-1
  instance_type: p4d.24xlarge
  state: running
  capacity: on-demand
  launched_at: '2026-11-14T06:00:00Z'
  workload: training
  tags:
    team: {json.dumps(FORMULA)}
    owner: {json.dumps(HOSTILE)}
"""


@pytest.fixture
def audits(tmp_path: Path) -> tuple[Path, Path]:
    """A hostile inventory and a history that recorded its audit."""
    inventory = tmp_path / "inventory.yaml"
    inventory.write_text(INVENTORY, encoding="utf-8")
    history = tmp_path / "audits.db"
    args = ["scan", "--inventory", str(inventory), "--fail-on", "none", "--history", str(history)]
    result = CliRunner().invoke(main, [*args, "--format", "json"])
    assert result.exit_code == 0, result.output
    return inventory, history


@pytest.mark.parametrize("fmt", list(REPORTERS))
def test_scan_and_history_show_escape_the_value_in_every_format(
    audits: tuple[Path, Path], fmt: str
) -> None:
    inventory, history = audits
    scan = ["scan", "--inventory", str(inventory), "--fail-on", "none", "--format", fmt]
    shown = ["history", "show", "1", "--history", str(history), "--format", fmt]
    for args in (scan, shown):
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 0, result.output
        assert _survivors(fmt, result.stdout) == [], args[0]


@pytest.mark.parametrize("command", ["list", "trend"])
def test_history_tables_escape_the_value(audits: tuple[Path, Path], command: str) -> None:
    for fmt in ("table", "json"):
        args = ["history", command, "--history", str(audits[1]), "--format", fmt]
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 0, result.output
        assert _survivors("json" if fmt == "json" else "text", result.stdout, False) == []


DIFF_FORMATS = ["table", "text", "markdown", "json", "csv", "sarif"]


@pytest.mark.parametrize("fmt", DIFF_FORMATS)
def test_diff_escapes_the_value_in_every_format(
    tmp_path: Path, fmt: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import subprocess

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    git("init", "-q")
    (tmp_path / "job.sky.yaml").write_text(JOB.replace(json.dumps(HOSTILE), '"plain"', 1))
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "base")
    (tmp_path / "job.sky.yaml").write_text(JOB, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["diff", "--base", "HEAD", "--format", fmt])
    assert result.exit_code in (0, 1), result.output
    assert _survivors(fmt, result.stdout) == []


BILLING_FORMATS = ["table", "json", "csv", "markdown"]


@pytest.fixture(scope="module")
def hostile_bill(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo's GCP FOCUS export with a hostile project and resource id (real Parquet)."""
    duckdb = pytest.importorskip("duckdb")
    folder = tmp_path_factory.mktemp("bill") / "gcp"
    folder.mkdir()
    source = Path(__file__).resolve().parents[2] / "fixtures" / "billing" / "demo" / "gcp"
    for part in sorted(source.glob("*.parquet")):
        query = (
            "COPY (SELECT * REPLACE (? AS SubAccountId, ? || ResourceId AS ResourceId) "
            f"FROM read_parquet('{part}')) TO '{folder / part.name}' (FORMAT parquet)"
        )
        duckdb.execute(query, [HOSTILE, FORMULA])
    return folder


@pytest.mark.parametrize("fmt", BILLING_FORMATS)
def test_billing_escapes_the_value_in_every_format(hostile_bill: Path, fmt: str) -> None:
    args = ["billing", str(hostile_bill), "--period", "2026-Q3", "--now", "2026-10-05T08:00:00Z"]
    result = CliRunner().invoke(main, [*args, "--format", fmt])
    assert result.exit_code in (0, 1), result.output
    assert _survivors(fmt, result.stdout, fmt != "table") == []  # the table: totals only
    if fmt == "json":
        assert HOSTILE in result.stdout or json.dumps(HOSTILE)[1:-1] in result.stdout


def test_the_reader_checks_can_fail() -> None:
    """Each check above finds the raw value: the test would fail on an unescaped output."""
    assert _survivors("text", "plain") == ["the value is not shown"]
    raw = f"| {HOSTILE} |\n"
    assert {s.split(" ")[1] for s in _survivors("markdown", raw)} >= {"raw", "link", "HTML"}
    assert any("math" in s for s in _survivors("markdown", raw))
    formula = f"job,team\nonerror,{FORMULA}\n"
    assert _survivors("csv", formula) == [f"a formula cell {FORMULA!r}"]
    assert _survivors("text", HOSTILE) != []
