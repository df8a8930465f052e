"""A hostile value through every format of every command (the commands and formats of
report/formats.py: `test_every_command_and_format_is_here` fails on one left out): nothing in it
survives.

The name carries a Markdown link and image, an HTML tag, a `|` that would split a table cell,
terminal escapes (a CSI colour, an OSC 8 link, a bell), bidi controls (a right-to-left override
and the isolates U+2066-2069), a pair of `$` (GitHub's inline math) and a CSV formula; the tags
start with the other formula starts (`=`, `+`, `-`, `@`, tab, CR). Each output is read by the
reader it is for: Markdown is rendered by markdown-it (no link, no image, no HTML, no math from
the value, every row of a table as many cells as its header), CSV by the csv module (no cell
starts a formula), JSON by json (the value exact, as data), text and tables as a terminal would
show them (no raw control or bidi character).
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner
from markdown_it import MarkdownIt

from gpu_audit.cli.main import main
from gpu_audit.report.escape import UNSAFE
from gpu_audit.report.formats import COMMANDS

HOSTILE = (
    "[x](https://evil.example) ![i](https://evil.example/i.png) <img src=x onerror=alert(1)> "
    "a|b \x1b[31mred\x1b[0m \x1b]8;;https://evil.example\x07osc\x1b]8;;\x07 "
    "\u2066iso\u2069 \u2067r\u2069 \u2068f\u2069 \u202eexe.txt $1 $2 =1+2"
)
FORMULA = "=HYPERLINK(1)"
STARTS = ("+1+2", "-2+3", "@SUM(1)", "\t=1+2", "\r=1+2")  # the other formula starts
JOB = f"""\
name: {json.dumps(HOSTILE)}
resources:
  accelerators: H100:8
  use_spot: false
  labels:
    team: {json.dumps(FORMULA)}
    project: {json.dumps(STARTS[0])}
    owner: {json.dumps(STARTS[2])}
run: python train.py
"""


# A file name can carry all of it but the `/` of a URL.
HOSTILE_NAME = (
    "[x](evil.example) <img src=x onerror=alert(1)> a|b \x1b[31mred\x1b]8;;x\x07 "
    "\u2066iso\u2069 \u202eexe $1 $2 =1+2.sky.yaml"
)


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
    shown = output.replace("\r\n", "").replace("\n", "")  # lines are fine
    if fmt == "csv":  # and a tab or line break inside a quoted cell (RFC 4180)
        rows = csv.reader(io.StringIO(output))
        shown = "".join(c.translate({9: None, 10: None, 13: None}) for r in rows for c in r)
    raw = UNSAFE.search(shown)
    if raw:
        found.append(f"a raw control or bidi character {raw.group()!r}")
    if fmt == "markdown":
        html = MarkdownIt("commonmark").enable("table").render(output)
        if 'href="https://evil.example' in html:
            found.append("a link")
        if "<img" in html:
            found.append("an HTML tag")
        if "evil.example/i.png" in html and "<img" not in html and 'src="https://evil' in html:
            found.append("an image")
        for line in output.splitlines():
            unescaped = line.replace("\\$", "")
            if unescaped.count("$") >= 2 and "$1" in unescaped:
                found.append(f"inline math: {line}")
        found += _split_cells(output)
    if fmt == "csv":
        for row in csv.reader(io.StringIO(output)):
            found += [f"a formula cell {cell!r}" for cell in row if _formula(cell)]
    return found


def _quoted(output: str, *values: str) -> list[str]:
    """The formula values a CSV does not show quoted (`'=...`): each must be in it, quoted."""
    cells = {cell for row in csv.reader(io.StringIO(output)) for cell in row}
    return [v for v in values if not any(c.startswith("'" + v) for c in cells)]


def _texts(data: object) -> list[str]:
    """Every string in a JSON document, keys and values."""
    if isinstance(data, dict):
        return [t for k, v in data.items() for t in (k, *_texts(v))]
    if isinstance(data, list):
        return [t for v in data for t in _texts(v)]
    return [data] if isinstance(data, str) else []


def _formula(cell: str) -> bool:
    """A cell a spreadsheet runs (OWASP's CSV injection starts); a negative number is a number."""
    if cell[:1] == "-":
        try:
            float(cell.replace(",", ""))
        except ValueError:
            return True
        return False
    return cell[:1] in ("=", "+", "@", "\t", "\r")


def _split_cells(markdown: str) -> list[str]:
    """Rows of a Markdown table with more cells than its header: a `|` in a value split one."""
    found, width = [], 0
    for line in markdown.splitlines():
        if not line.startswith("|"):
            width = 0
            continue
        cells = len(re.findall(r"(?<!\\)\|", line))
        if not width:
            width = cells
        elif cells != width:
            found.append(f"a split table row: {line[:80]}")
    return found


@pytest.mark.parametrize("fmt", COMMANDS["check"])
def test_check_escapes_the_value_in_every_format(job: Path, fmt: str) -> None:
    result = CliRunner().invoke(main, ["check", str(job), "--format", fmt, "--fail-on", "none"])
    assert result.exit_code == 0, result.output
    assert _survivors(fmt, result.stdout) == []
    if fmt == "csv":
        assert _quoted(result.stdout, FORMULA, STARTS[0], STARTS[2]) == []


@pytest.mark.parametrize("fmt", COMMANDS["estimate"])
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
    project: {json.dumps(STARTS[1])}
    owner: {json.dumps(STARTS[3])}
- kind: reservation
  provider: aws
  id: {json.dumps("cr-" + HOSTILE)}
  name: {json.dumps(HOSTILE)}
  account: '111122223333'
  region: us-east-1
  zone: us-east-1a
  instance_type: p4d.24xlarge
  state: running
  capacity: reserved
  reservation: {{type: capacity-reservation, match: open, platform: Linux/UNIX, total: 4, used: 1}}
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


@pytest.mark.parametrize("fmt", COMMANDS["scan"])
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
        if fmt == "csv":
            assert _quoted(result.stdout, FORMULA, STARTS[1], STARTS[3]) == [], args[0]


@pytest.mark.parametrize("fmt", COMMANDS["history list"])
def test_history_list_escapes_the_value(audits: tuple[Path, Path], fmt: str) -> None:
    _history_listing("list", audits[1], fmt)


@pytest.mark.parametrize("fmt", COMMANDS["history trend"])
def test_history_trend_escapes_the_value(audits: tuple[Path, Path], fmt: str) -> None:
    _history_listing("trend", audits[1], fmt)


@pytest.mark.parametrize("fmt", COMMANDS["history reservations"])
def test_history_reservations_escapes_the_value(audits: tuple[Path, Path], fmt: str) -> None:
    """The hostile reservation is named, its id and name escaped."""
    _history_listing("reservations", audits[1], fmt, shown=True)


def _history_listing(command: str, history: Path, fmt: str, shown: bool = False) -> None:
    """A listing of audits names no resource (counts and money): nothing of the value may
    appear raw; one of reservations names them."""
    args = ["history", command, "--history", str(history), "--format", fmt]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert _survivors("json" if fmt == "json" else "text", result.output, shown) == []


@pytest.mark.parametrize("fmt", COMMANDS["merge"])
def test_merge_escapes_the_value_in_every_format(tmp_path: Path, fmt: str) -> None:
    """A shard report of the hostile inventory (as `scan --shard 1/1` writes one), merged."""
    from gpu_audit.audit import audit
    from gpu_audit.catalog.basis import price_basis
    from gpu_audit.collectors.inventory import load_inventory
    from gpu_audit.collectors.workitems import universe_digest
    from gpu_audit.core.results import Scope, ShardStamp
    from gpu_audit.policy.digest import policy_digest
    from gpu_audit.policy.loader import load_policy
    from gpu_audit.report import json as json_report

    inventory = tmp_path / "inventory.yaml"
    inventory.write_text(INVENTORY, encoding="utf-8")
    universe = ("aws:111122223333:us-east-1",)
    policy = load_policy(None)
    stamp = ShardStamp(
        index=1,
        count=1,
        universe_digest=universe_digest(universe),
        universe=universe,
        policy_digest=policy_digest(policy),
        price_basis=price_basis(),
    )
    scope = Scope(command="scan", providers=("aws",), shard=stamp)
    now = datetime(2026, 11, 20, 6, tzinfo=UTC)
    shard = tmp_path / "shard-1.json"
    shard.write_text(
        json_report.render(audit(load_inventory(str(inventory)).resources, policy, now, scope))
    )
    result = CliRunner().invoke(main, ["merge", str(shard), "--format", fmt, "--fail-on", "none"])
    assert result.exit_code == 0, result.output
    assert _survivors(fmt, result.stdout) == []
    if fmt == "json":
        assert HOSTILE in _texts(json.loads(result.stdout))  # data, exactly as written


@pytest.mark.parametrize("fmt", COMMANDS["catalog lookup"])
def test_catalog_lookup_escapes_the_name_it_does_not_know(fmt: str) -> None:
    result = CliRunner().invoke(
        main, ["catalog", "lookup", HOSTILE, "p4d.24xlarge", "--format", fmt]
    )
    assert result.exit_code == 2, result.output  # a name unknown: an error, said escaped
    assert _survivors(fmt, result.stdout, fmt == "json") == []
    assert _survivors("text", result.stderr, False) == []


@pytest.mark.parametrize("fmt", COMMANDS["catalog diff"])
def test_catalog_diff_escapes_the_type_and_region(tmp_path: Path, fmt: str) -> None:
    """A price file refuses a control character in a type (said escaped); the rest of the
    value, printable, is a new price in the diff."""
    printable = UNSAFE.sub("", HOSTILE)
    for name, said in ((HOSTILE, 2), (printable, 0)):
        row = {
            "provider": "aws", "type": name, "region": printable, "capacity": "on-demand",
            "usd_per_hour": 19.5, "effective": "2026-11-01", "fetched_at": "2026-11-25T10:12:03Z",
            "source": printable,
        }  # fmt: skip
        prices = tmp_path / "prices.json"
        body = {"gpu_audit_prices": 1, "generated_at": "2026-11-25T10:12:05Z", "rows": [row]}
        prices.write_text(json.dumps(body), encoding="utf-8")
        result = CliRunner().invoke(main, ["catalog", "diff", str(prices), "--format", fmt])
        assert result.exit_code == said, result.output
        if said == 0:
            assert _survivors(fmt, result.stdout) == []
        assert _survivors("text", result.stderr, False) == []


@pytest.mark.parametrize("fmt", COMMANDS["diff"])
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
        duckdb.execute(query, [HOSTILE, STARTS[4]])
    return folder


@pytest.mark.parametrize("fmt", COMMANDS["billing"])
def test_billing_escapes_the_value_in_every_format(hostile_bill: Path, fmt: str) -> None:
    args = ["billing", str(hostile_bill), "--period", "2026-Q3", "--now", "2026-10-05T08:00:00Z"]
    result = CliRunner().invoke(main, [*args, "--format", fmt])
    assert result.exit_code in (0, 1), result.output
    assert _survivors(fmt, result.stdout, fmt != "table") == []  # the table: totals only
    if fmt == "csv":
        assert _quoted(result.stdout, STARTS[4]) == []
    if fmt == "json":
        assert any(HOSTILE in text for text in _texts(json.loads(result.stdout)))


def test_the_reader_checks_can_fail() -> None:
    """Each check above finds the raw value: the test would fail on an unescaped output."""
    assert _survivors("text", "plain") == ["the value is not shown"]
    raw = f"| {HOSTILE} |\n"
    assert {s.split(" ")[1] for s in _survivors("markdown", raw)} >= {"raw", "link", "HTML"}
    assert any("math" in s for s in _survivors("markdown", raw))
    for start in (FORMULA, *STARTS):
        formula = f'job,team\r\nonerror,"{start}"\r\n'
        assert _survivors("csv", formula) == [f"a formula cell {start!r}"]
    assert _survivors("csv", "job,usd\r\nonerror,-12.50\r\n") == []  # a negative number
    split = "| job | usd |\n| --- | --- |\n| a|b onerror | $1 |\n"
    assert _survivors("markdown", split) == ["a split table row: | a|b onerror | $1 |"]
    assert _survivors("markdown", split.replace("a|b", "a\\|b")) == []
    for escape in ("\x1b[31m", "\x1b]8;;https://evil.example\x07", "\u2066", "\u2069", "\u202e"):
        assert _survivors("text", f"onerror {escape}") != [], repr(escape)
    assert _survivors("text", HOSTILE) != []


# Each command of report/formats.py and the test that renders its every format here.
TESTED: dict[str, Callable[..., None]] = {
    "check": test_check_escapes_the_value_in_every_format,
    "scan": test_scan_and_history_show_escape_the_value_in_every_format,
    "history show": test_scan_and_history_show_escape_the_value_in_every_format,
    "merge": test_merge_escapes_the_value_in_every_format,
    "estimate": test_estimate_escapes_the_value_in_every_format,
    "diff": test_diff_escapes_the_value_in_every_format,
    "billing": test_billing_escapes_the_value_in_every_format,
    "history list": test_history_list_escapes_the_value,
    "history trend": test_history_trend_escapes_the_value,
    "history reservations": test_history_reservations_escapes_the_value,
    "catalog lookup": test_catalog_lookup_escapes_the_name_it_does_not_know,
    "catalog diff": test_catalog_diff_escapes_the_type_and_region,
}


def test_every_command_and_format_is_here() -> None:
    """A command or format added to report/formats.py without a test here fails, by name."""
    assert sorted(TESTED) == sorted(COMMANDS), "add the command's test to TESTED"
    for command, test in TESTED.items():
        (mark,) = [m for m in getattr(test, "pytestmark", []) if m.name == "parametrize"]
        assert mark.args[0] == "fmt" and tuple(mark.args[1]) == COMMANDS[command], command
