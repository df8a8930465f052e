"""Property-based fuzzing of the fourth campaign's surfaces: FOCUS files of every layout, their
manifests, history databases, sweep files and the `since` settings.

- A FOCUS Parquet file (the GCP layout, an Azure run, an AWS part) or a plain one given as PATH,
  with one column replaced by a value of any type (non-finite and huge DOUBLEs and DECIMALs,
  infinite and out-of-range times, integers where text is due, lists, structs, hostile text), or a
  CSV cell: a report that validates against `billing-v1`, or one located line, exit 2.
- An AWS or Azure manifest whose data-file entry leaves the folder (`..`, absolute, a glob, a
  symlink out) or nests too deeply: refused in one line, and a FIFO laid outside the folder as a
  canary is never opened (`Canary`): nothing is read outside the inputs named.
- A recorded history with a cell rewritten, a blob corrupted or the file cut short: `history
  list|trend|reservations|show`, `scan --history` and `billing --history` keep every promise and
  never exit 4 (a crash).
- A W&B sweep's hyperband and caps, and the aws/gcp `since` settings, at hostile values.
- `merge` of shards that read one sweep and one resource twice: the same report in any order.

Findings are raised in the suite and logged in a campaign (`make fuzz`), as test_promises.py does.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
import tempfile
import threading
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import FIXTURES, ROOT
from tests.fuzz.promises import Broken, check_run, invoke, write
from tests.fuzz.test_promises import _kept

pytestmark = pytest.mark.slow

_CAMPAIGN = int(os.environ.get("GPU_AUDIT_FUZZ_EXAMPLES", "0") or 0) // 8  # each test an eighth
_SMALL = settings(
    max_examples=_CAMPAIGN or 12,
    derandomize=not _CAMPAIGN,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)
DEMO = FIXTURES / "billing" / "demo"
SCHEMA = json.loads((ROOT / "src/gpu_audit/billing/billing-v1.schema.json").read_text())
NOW = ("--now", "2026-10-05T08:00:00Z")


class Canary:
    """A FIFO outside every input: a reader that opens it is seen (a writer waits on it)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        os.mkfifo(path)
        self.opened = False
        self._closing = False
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        with open(self.path, "w", encoding="utf-8") as writer:  # blocks until a reader comes
            if not self._closing:
                self.opened = True
            with contextlib.suppress(BrokenPipeError):
                writer.write("canary\n")

    def close(self) -> bool:
        """Release the waiting writer; True when something else opened the FIFO first."""
        self._closing = True
        descriptor = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK)
        try:
            self._thread.join(5)
        finally:
            os.close(descriptor)
        return self.opened


def _billing(paths: list[str], fmt: str = "json", *extra: str) -> Any:
    return invoke(["billing", *paths, "--period", "2026-Q3", *NOW, "--format", fmt, *extra])


def _bill_promises(result: Any, where: str) -> None:
    shown = f"\n--- case ---\n{where[:1500]}\n--- stderr ---\n{result.stderr[:1500]}"
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise Broken(f"exception escaped: {result.exception!r}{shown}")
    if result.exit_code not in (0, 2):
        raise Broken(f"exit {result.exit_code}{shown}")
    if result.exit_code == 2:
        lines = result.stderr.strip().splitlines()
        if len(lines) != 1 or not lines[0].startswith("gpu-audit: error: "):
            raise Broken(f"not one error line{shown}")
        if "LINE " in lines[0] or "SELECT " in lines[0]:
            raise Broken(f"the engine's SQL leaked{shown}")
        return
    try:
        jsonschema.validate(json.loads(result.stdout), SCHEMA)
    except (ValueError, jsonschema.ValidationError) as exc:
        raise Broken(f"report not valid: {str(exc)[:300]}{shown}") from None


# -- FOCUS Parquet and plain files -------------------------------------------------------------

_LITERALS = st.sampled_from(
    [
        "NULL", "CAST('inf' AS DOUBLE)", "CAST('-inf' AS DOUBLE)", "CAST('nan' AS DOUBLE)",
        "CAST(1e300 AS DOUBLE)", "CAST(-1e16 AS DOUBLE)", "CAST(1e28 AS DECIMAL(38, 9))",
        "CAST(0 AS DECIMAL(38, 9))", "CAST('infinity' AS TIMESTAMPTZ)",
        "CAST('-infinity' AS TIMESTAMPTZ)", "CAST('10000-01-01 00:00:00+00' AS TIMESTAMPTZ)",
        "CAST('0999-06-01 00:00:00+00' AS TIMESTAMPTZ)", "CAST('2026-08-01' AS DATE)", "42",
        "true", "[1, 2]", "{'Key': 'team', 'Value': 'x'}", "[{'Key': 'team', 'Value': 'a\rb'}]",
        "'text'", "''", "'1e400'", "'{bad'", "'\x1b[2J'", "'a' || chr(8238) || 'b'", "'Usage'",
        "'Correction'", "'EUR'", "'Dynamic'", "'=cmd()'",
    ]
)  # fmt: skip
_LAYOUTS = ["gcp", "azure", "aws", "plain-parquet", "plain-csv"]


def _target(folder: Path, layout: str) -> tuple[Path, str, str]:
    """The file to change, how to read it, and the COPY options that write it back."""
    if layout == "azure":  # the demo's Azure runs are gzip CSV
        found = sorted(folder.rglob("*.csv.gz"))[-1]
        return found, f"read_csv('{found}', all_varchar = true)", "FORMAT csv, COMPRESSION gzip"
    found = sorted(folder.rglob("*.parquet"))[0 if layout != "aws" else -1]
    return found, f"read_parquet('{found}')", "FORMAT parquet"


@_SMALL
@given(
    layout=st.sampled_from(_LAYOUTS),
    column=st.integers(0, 60),
    literal=_LITERALS,
    every_row=st.booleans(),
)
def test_a_focus_file_with_a_column_of_any_type(
    layout: str, column: int, literal: str, every_row: bool
) -> None:
    duckdb = pytest.importorskip("duckdb")
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        cloud = "gcp" if layout.startswith("plain") else layout
        folder = base / cloud
        shutil.copytree(DEMO / cloud, folder)
        target, source, options = _target(folder, layout)
        conn = duckdb.connect()
        conn.execute("SET TimeZone = 'UTC'")
        names = [row[0] for row in conn.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()]
        name = names[column % len(names)]
        quoted = '"' + name.replace('"', '""') + '"'
        value = literal if every_row else f"CASE WHEN n = 1 THEN {literal} END"
        changed = base / ("changed.csv.gz" if layout == "azure" else "changed.parquet")
        try:
            conn.execute(
                f"COPY (SELECT * EXCLUDE (n) REPLACE ({value} AS {quoted}) FROM (SELECT *, "
                f"row_number() OVER () AS n FROM {source})) TO '{changed}' ({options})"
            )
        except duckdb.Error:  # a value CSV cannot hold (a struct): no such file can be written
            return
        paths = [str(folder)]
        if layout == "plain-parquet":
            paths = [str(changed)]
        elif layout == "plain-csv":
            plain = base / "plain.csv"
            conn.execute(f"COPY (SELECT * FROM '{changed}') TO '{plain}' (HEADER, DELIMITER ',')")
            paths = [str(plain)]
        else:
            shutil.move(changed, target)
        conn.close()
        result = _billing(paths)
        _kept(lambda: _bill_promises(result, f"{layout}: {name} = {literal} ({every_row})"))


# -- manifests: nothing read outside -----------------------------------------------------------

_ENTRIES = st.sampled_from(
    [
        "../outside/part_0_0001.csv.gz", "../../outside/part_0_0001.csv.gz",
        "{outside}/part_0_0001.csv.gz", "*", "**/*.csv.gz", "focus/[a-z]*/x.csv.gz",
        "focus/../../outside/part_0_0001.csv.gz", "s3://bucket/x/data/BILLING_PERIOD=2026-07/../../../outside/f.parquet",
        "data/BILLING_PERIOD=2026-07/../../../outside/part_0_0001.csv.gz", "link/part_0_0001.csv.gz",
        "", "/", ".", "..", "\x00", "a\u202eb.csv.gz",
    ]
)  # fmt: skip


def _nest(depth: int) -> str:
    return "[" * depth + "]" * depth


@_SMALL
@given(
    cloud=st.sampled_from(["aws", "azure"]),
    entry=_ENTRIES,
    index=st.integers(0, 3),
    depth=st.sampled_from([0, 0, 0, 50, 5_000, 200_000]),
)
def test_a_manifest_naming_anything_reads_nothing_outside(
    cloud: str, entry: str, index: int, depth: int
) -> None:
    pytest.importorskip("duckdb")
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        folder = base / cloud
        shutil.copytree(DEMO / cloud, folder)
        (base / "outside").mkdir()
        canary = Canary(base / "outside" / "part_0_0001.csv.gz")
        os.symlink(base / "outside", folder / "link")
        entry = entry.replace("{outside}", str(base / "outside"))
        pattern = "*-Manifest.json" if cloud == "aws" else "manifest.json"
        manifests = sorted(folder.rglob(pattern))
        manifest = manifests[index % len(manifests)]
        body = json.loads(manifest.read_text())
        if cloud == "aws":
            body["dataFiles"] = [*body["dataFiles"][:1], entry]
        else:
            body["blobs"][0]["blobName"] = entry
        manifest.write_text(_nest(depth) if depth else json.dumps(body))
        try:
            result = _billing([str(folder)])
        finally:
            opened = canary.close()

        def promises() -> None:
            if opened:
                raise Broken(f"read outside the export folder: {cloud} {entry!r}")
            _bill_promises(result, f"{cloud}: {entry!r} depth {depth}")

        _kept(promises)


# -- history databases -------------------------------------------------------------------------

_HISTORY_POLICY = FIXTURES / "inventory" / "demo-policy.yaml"
_INVENTORIES = [FIXTURES / "inventory" / "demo.yaml", FIXTURES / "inventory" / "demo-next.yaml"]
_CELLS = st.sampled_from(
    [None, "", "{bad", "[", "null", "{}", "[]", '{"x": 1}', "9999-99-99", "soon", -1, 2**62,
     1e308, b"", b"\x00\xff", b"x\x9c\x03\x00", "\x1b[2J"]
)  # fmt: skip
_COMMANDS = [
    ["history", "list"], ["history", "list", "--format", "json"], ["history", "trend"],
    ["history", "reservations"], ["history", "show", "1"], ["history", "show", "2"],
    ["scan"], ["billing"],
]  # fmt: skip


@pytest.fixture(scope="module")
def recorded_history(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("history") / "audits.db"
    for inventory in _INVENTORIES:
        invoke(
            ["scan", "--inventory", str(inventory), "--policy", str(_HISTORY_POLICY),
             "--history", str(path), "--fail-on", "none", "-q"]
        )  # fmt: skip
    reserved = FIXTURES / "inventory" / "reservations.yaml"  # rows in the reservations table
    invoke(["scan", "--inventory", str(reserved), "--history", str(path), "--fail-on", "none"])
    return path


def _damage(path: Path, table: str, column: int, cell: Any, cut: int | None) -> str:
    if cut is not None:
        data = path.read_bytes()
        path.write_bytes(data[: cut % max(len(data), 1)])
        return f"cut at {cut % max(len(data), 1)} of {len(data)} bytes"
    conn = sqlite3.connect(path)
    try:
        names = [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]
        if not names:
            return "no such table"
        name = names[column % len(names)]
        conn.execute(f'UPDATE {table} SET "{name}" = ?', (cell,))
        conn.commit()
        return f"{table}.{name} = {cell!r}"
    except sqlite3.Error as exc:  # a NOT NULL or key constraint: the damage cannot be made
        return f"{table}: {exc}"
    finally:
        conn.close()


@_SMALL
@given(
    table=st.sampled_from(["audits", "documents", "reservations", "sweeps", "resources"]),
    column=st.integers(0, 30),
    cell=_CELLS,
    cut=st.one_of(st.none(), st.none(), st.integers(0, 400_000)),
    command=st.sampled_from(_COMMANDS),
)
def test_a_damaged_history_keeps_every_promise(
    recorded_history: Path, table: str, column: int, cell: Any, cut: int | None, command: list[str]
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "audits.db"
        shutil.copy(recorded_history, path)
        how = _damage(path, table, column, cell, cut)
        db = str(path)
        if command == ["scan"]:
            args = ["scan", "--inventory", str(_INVENTORIES[1]), "--policy", str(_HISTORY_POLICY),
                    "--history", db, "--fail-on", "none", "--format", "json"]  # fmt: skip
        elif command == ["billing"]:
            pytest.importorskip("duckdb")
            args = ["billing", str(DEMO / "gcp"), "--period", "2026-Q3", *NOW, "--format", "json",
                    "--history", db]  # fmt: skip
        else:
            args = [*command, "--history", db]
        result = invoke(args)

        def promises() -> None:
            if result.exit_code == 4 or "internal error" in result.stderr:
                raise Broken(f"crash on a damaged history ({how}): {result.stderr[:800]}")
            fmt = "json" if command in (["scan"],) else None
            check_run(result, [db, *(str(p) for p in _INVENTORIES)], fmt, how)

        _kept(promises)


# -- sweeps and settings -----------------------------------------------------------------------

_HYPERBAND = (FIXTURES / "jobs" / "wandb" / "hyperband-run-cap.yaml").read_text()
_NUMBERS = st.sampled_from(
    ["0", "1", "-1", "0.5", "2", "3", "1e9", "1e308", "-1e308", ".inf", ".nan", "1e-308", "~",
     "'3'", "[3]", "{a: 1}", "true", "99999999999999999999999"]
)  # fmt: skip


@_SMALL
@given(
    key=st.sampled_from(["eta", "s", "max_iter", "min_iter", "run_cap"]),
    value=_NUMBERS,
    command=st.sampled_from(["check", "estimate"]),
)
def test_a_wandb_sweep_at_any_limit(key: str, value: str, command: str) -> None:
    if key == "run_cap":
        text = _HYPERBAND.replace("run_cap: 60", f"run_cap: {value}")
    elif key == "min_iter":
        text = _HYPERBAND.replace("  max_iter: 27", f"  max_iter: 27\n  min_iter: {value}")
    else:
        text = _HYPERBAND.replace(f"  {key}: ", f"  {key}: {value} #", 1)
    with tempfile.TemporaryDirectory() as tmp:
        path = write(Path(tmp), "sweep.yaml", text)
        result = invoke([command, path, "--format", "json"])
        _kept(lambda: check_run(result, [path], "json" if command == "check" else None, text))


_SINCE = st.one_of(
    st.sampled_from(
        ["~", "''", "0001-01-01T00:00:00+05:00", "0001-01-01", "9999-12-31T23:00:00-14:00",
         "9999-12-31", "2026-09-01", "2005-12-31", "soon", "2026-02-30", "1e308", "[2026]",
         "'2026-09-01T00:00:00+25:00'", "'\x1b[2J'"]
    ),
    st.datetimes().map(lambda d: f"'{d.isoformat()}'"),
)  # fmt: skip


@_SMALL
@given(provider=st.sampled_from(["aws", "gcp"]), since=_SINCE, flag=st.booleans())
def test_a_since_setting_at_any_time(provider: str, since: str, flag: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        config = write(Path(tmp), "settings.yaml", f"{provider}:\n  since: {since}\n")
        demo = str(FIXTURES / "inventory" / "demo.yaml")
        args = ["scan", "--config", config, "--inventory", demo, "--format", "json", "-q"]
        if flag:  # the flag, with a provider and no credentials: refused or a coverage gap
            args = ["scan", "--config", config, "--provider", provider, "--since",
                    since.strip("'"), "-q"]  # fmt: skip
        result = invoke(args)

        def promises() -> None:
            if result.exit_code == 4 or "internal error" in result.stderr:
                raise Broken(f"crash on since {since!r}: {result.stderr[:500]}")
            if not flag:
                check_run(result, [config, demo], None, since)
            elif result.exit_code == 2 and not result.stderr.startswith("gpu-audit: error: "):
                raise Broken(f"since {since!r}: {result.stderr[:300]!r}")

        _kept(promises)


# -- merge: the order of the shards ------------------------------------------------------------


@pytest.fixture(scope="module")
def overlapping_shards(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """Three shards; the first two read one sweep (at two times) and one resource (as two)."""
    from tests.test_written_then_read import _shards

    return _shards(tmp_path_factory.mktemp("shards"))


@_SMALL
@given(order=st.permutations([0, 1, 2]), fmt=st.sampled_from(["json", "csv", "markdown"]))
def test_merge_is_the_same_in_any_shard_order(
    overlapping_shards: list[str], order: list[int], fmt: str
) -> None:
    named = [overlapping_shards[i] for i in order]
    base = invoke(["merge", *overlapping_shards, "--format", fmt])
    result = invoke(["merge", *named, "--format", fmt])

    def promises() -> None:
        check_run(result, named, fmt if fmt == "json" else None, " ".join(named))
        if fmt == "json":  # the scope lists the files as named: the rest is the same
            ours, theirs = json.loads(result.stdout), json.loads(base.stdout)
            ours["scope"]["files"] = theirs["scope"]["files"]
            same = ours == theirs
        else:
            same = _without_files(result.stdout, named) == _without_files(base.stdout, named)
        if not same:
            raise Broken(f"merge of {order} differs from the named order's ({fmt})")

    _kept(promises)


def _without_files(text: str, paths: list[str]) -> str:
    """The report without what names the shards as given (the command, the files read)."""
    kept = [line for line in text.splitlines() if not line.startswith(("| Command |", "| Files |"))]
    out = "\n".join(kept)
    for path in paths:
        out = out.replace(path, "SHARD")
    return out
