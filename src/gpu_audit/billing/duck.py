"""DuckDB as the engine: the exports' current files read in place, streamed and summed.

DuckDB reads Parquet and (gzip) CSV without loading them whole, aggregates out of core, and
returns only the groups. Remote prefixes (`s3://`, `gs://`, `az://`) work where DuckDB's
`httpfs`/`azure` extension is installed; nothing is downloaded here.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Sequence
from datetime import datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from gpu_audit.billing import query
from gpu_audit.billing.exports import PLAIN, ExportFiles, FileSystem, discover
from gpu_audit.billing.model import BilledGroup
from gpu_audit.billing.period import Period
from gpu_audit.billing.query import (
    GROUP_COLUMNS,
    MONEY,
    SUM_COLUMNS,
    Source,
    aggregate,
    literal,
    quote,
)
from gpu_audit.errors import ConfigError, InputError

if TYPE_CHECKING:  # duckdb is imported where a bill is read
    from duckdb import DuckDBPyConnection

_REMOTE = ("s3://", "gs://", "gcs://", "az://", "azure://", "abfss://", "http://", "https://")


def connect() -> DuckDBPyConnection:
    """An in-memory DuckDB connection in UTC, with no progress bar and no extension downloads;
    ConfigError when the billing extra is missing."""
    try:
        import duckdb  # the [billing] extra, maybe absent; off start-up
    except ImportError:
        raise ConfigError(
            "gpu-audit billing needs DuckDB: pip install 'gpu-audit[billing]'"
        ) from None
    conn = duckdb.connect(":memory:")
    conn.execute("SET TimeZone = 'UTC'")
    # DuckDB draws a progress bar on stdout for a query of over two seconds: the report is there
    conn.execute("SET enable_progress_bar = false")
    conn.execute("SET preserve_insertion_order = false")  # streams; order is not needed
    # An extension (httpfs for s3:// and gs://, azure for az://) is loaded where installed, never
    # downloaded by a report: a machine without it gets one line saying so.
    conn.execute("SET autoinstall_known_extensions = false")
    return conn


def file_system(conn: Any) -> FileSystem:
    """The export reader's file system through DuckDB (glob and read_text), so s3://, gs:// and
    az:// read as local paths do; a failed read raises a located InputError."""
    import duckdb  # keeps duckdb off start-up

    def glob(pattern: str) -> list[str]:
        try:
            return [
                row[0] for row in conn.execute("SELECT file FROM glob(?)", [pattern]).fetchall()
            ]
        except duckdb.Error as exc:
            raise InputError(_located(pattern, exc)) from None

    def read_text(name: str) -> str:
        try:
            row = conn.execute("SELECT content FROM read_text(?)", [name]).fetchone()
        except duckdb.Error as exc:
            raise InputError(_located(name, exc)) from None
        return str(row[0]) if row else ""

    return FileSystem(glob, read_text)


def _located(name: str, exc: Exception) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if name.startswith(_REMOTE) and "extension" in text.lower():
        needed = "azure" if name.startswith(("az://", "azure://", "abfss://")) else "httpfs"
        return (
            f"{name}: reading this prefix needs DuckDB's {needed} extension, which is not "
            f"installed here (python -c \"import duckdb; duckdb.sql('INSTALL {needed}')\"), "
            "or a local copy of the export folder"
        )
    return text if name in text else f"{name}: {text}"


def relation(files: Sequence[str], file_format: str) -> str:
    """The SQL table function reading `files` (Parquet, or RFC 4180 CSV read as text with `NULL` and
    empty cells null), columns unioned by name."""
    listed = "[" + ", ".join(literal(name) for name in files) + "]"
    if file_format == "parquet":
        return f"read_parquet({listed}, union_by_name = true)"
    # FOCUS CSV exports are RFC 4180: the dialect is stated, not sniffed (a sniffer that meets a
    # bad row may settle on another delimiter and read every row as one cell); a cell written
    # `NULL` (the FOCUS 1.0 sample's way) is null, as an empty one is
    return (
        f"read_csv({listed}, union_by_name = true, all_varchar = true, header = true, "
        "strict_mode = true, delim = ',', quote = '\"', escape = '\"', "
        "nullstr = ['NULL', ''])"
    )


def sources(conn: Any, exports: Sequence[ExportFiles]) -> list[Source]:
    """Each export's files as query sources with their column types; InputError naming the file when
    one does not read or lacks a FOCUS column."""
    import duckdb  # keeps duckdb off start-up

    found: list[Source] = []
    for export in exports:
        for file_format, files in export.by_format().items():
            rel = relation(files, file_format)
            try:
                described = conn.execute(f"DESCRIBE SELECT * FROM {rel}").fetchall()
            except duckdb.Error as exc:
                bad = csv_problem(files) if file_format == "csv" else None
                raise InputError(bad or _located(export.path, exc)) from None
            source = Source(export.cloud, rel, {row[0]: str(row[1]).upper() for row in described})
            if missing := source.missing():
                names = ", ".join(f"'{name}'" for name in missing)
                raise InputError(
                    f"{files[0]}: {'columns' if len(missing) > 1 else 'column'} {names} "
                    f"{'are' if len(missing) > 1 else 'is'} missing: not a FOCUS 1.0–1.3 export "
                    f"(columns are read by name; {len(source.columns)} found)"
                )
            if export.cloud == "gcp" and not _provider_is_google(conn, export.path, source):
                source = Source(PLAIN, rel, source.columns)
            found.append(source)
    return found


def _provider_is_google(conn: Any, path: str, source: Source) -> bool:
    """Parquet files with no manifest are read as GCP's export where they say Google, else as
    plain FOCUS files; the data files of an AWS export without its manifests would count
    superseded files and repeated runs, so they are refused."""
    names = [n for n in ("ServiceProviderName", "ProviderName") if n in source.columns]
    if not names:
        return True
    import duckdb  # keeps duckdb off start-up

    column = f"COALESCE({', '.join(f'CAST({quote(n)} AS VARCHAR)' for n in names)})"
    try:
        rows = conn.execute(
            f"SELECT DISTINCT {column} FROM {source.relation} WHERE {column} IS NOT NULL LIMIT 5"
        ).fetchall()
    except duckdb.Error as exc:
        raise InputError(_located(path, exc)) from None
    others = sorted(str(r[0]) for r in rows if "google" not in str(r[0]).lower())
    if others and "/data/BILLING_PERIOD=" in source.relation:
        raise InputError(
            f"{path}: Parquet files with no manifest are read as GCP's FOCUS export, but they "
            f"say provider {others[0][:40]!r}: give the AWS export folder (holding metadata/ "
            "and data/) or the Azure container (with its manifest.json files)"
        )
    return not others


def run(
    paths: Sequence[str],
    period: Period,
    tag_keys: Sequence[str],
    gpu_types: Sequence[tuple[str, str, str, int]],
    summed_first: bool = True,
) -> tuple[list[ExportFiles], list[BilledGroup]]:
    """Discover each PATH's current files, run the query, return the groups. `summed_first`
    (the default) sums alike rows before the per-row work (`query.summed_first`); False runs
    the plain query on every row, as Athena and BigQuery do."""

    conn = connect()
    try:
        fs = file_system(conn)
        exports = [discover(path, fs, period) for path in paths]
        found = sources(conn, exports)
        if not found:  # every manifest is of an earlier month
            raise InputError(no_export(paths, period))
        relations = (
            [query.summed_first(s, period, tag_keys) for s in found] if summed_first else found
        )
        sql = aggregate(relations, period, tag_keys, gpu_types)
        rows = fetch(conn, sql, exports, found, tag_keys)
        if not any(row[GROUP_COLUMNS.index("in_period")] for row in rows):
            raise InputError(_no_rows(paths, period, conn, found))
        return exports, [group(row, tag_keys) for row in rows]
    finally:
        conn.close()


def no_export(paths: Sequence[str], period: Period) -> str:
    """The line for exports none of whose runs or manifests reach the period."""
    return (
        f"{', '.join(paths)}: no rows charged in {period.name} (no export run or manifest is of "
        "that period or later)"
    )


def fetch(
    conn: Any,
    sql: str,
    exports: Sequence[ExportFiles],
    found: Sequence[Source],
    tag_keys: Sequence[str],
) -> list[tuple[Any, ...]]:
    """The aggregate's rows, every read of the bill's (the period's groups, the daily series):
    a cell DuckDB cannot read or a sum out of a report's bounds is one located line, no SQL."""
    import duckdb  # keeps duckdb off start-up

    try:
        rows: list[tuple[Any, ...]] = conn.execute(sql).fetchall()
    except duckdb.Error as exc:
        raise InputError(failure(conn, exc, exports, found)) from None
    if not all(in_bounds(row[len(GROUP_COLUMNS) + len(tag_keys) :]) for row in rows):
        raise InputError(locate_bad_value(conn, found, None))
    return rows


def failure(
    conn: Any, exc: Exception, exports: Sequence[ExportFiles], found: Sequence[Source]
) -> str:
    """The one line for an engine error in the aggregate: the cell, the CSV row, or its text."""
    import duckdb  # the duckdb extra: off check's start-up

    if isinstance(exc, (duckdb.ConversionException, duckdb.OutOfRangeException)):
        return locate_bad_value(conn, found, exc)
    csvs = [f for e in exports for f in e.by_format().get("csv", ())]
    malformed = "json" in str(exc).lower() and locate_bad_value(conn, found, None)
    return csv_problem(csvs) or malformed or _one_line(exc)


def _no_rows(paths: Sequence[str], period: Period, conn: Any, found: Sequence[Source]) -> str:
    """No row is charged in the period: say which months the exports do hold."""
    months: set[str] = set()
    for source in found:
        column = quote("ChargePeriodStart")
        query = (
            f"SELECT DISTINCT strftime(CAST({column} AS TIMESTAMPTZ), '%Y-%m') "
            f"FROM {source.relation} WHERE {column} IS NOT NULL"
        )
        if source.columns.get("ChargePeriodStart", "").startswith("VARCHAR"):
            query = query.replace(f"CAST({column} AS", f"CAST(NULLIF(TRIM({column}), '') AS")
        months.update(str(row[0]) for row in conn.execute(query).fetchall() if row[0])
    held = f"{min(months)} to {max(months)}" if months else "no rows at all"
    return f"{', '.join(paths)}: no rows charged in {period.name} (the exports hold {held})"


def csv_problem(files: Sequence[str]) -> str | None:
    """The first row of a CSV file whose cells do not match its header (file: line N), read
    with Python's csv module: the engine's own message may name neither (a rare, second pass)."""
    import gzip  # keeps gzip off `billing`'s start-up

    for name in files:
        if "://" in name:
            continue
        opener = gzip.open if name.lower().endswith((".gz", ".gzip")) else open
        try:
            with opener(name, "rt", encoding="utf-8", newline="") as handle:
                reader = csv.reader(handle, strict=True)
                header = next(reader, [])
                for row in reader:
                    if len(row) != len(header):
                        return (
                            f"{name}: line {reader.line_num}: {len(row)} cells where the header "
                            f"has {len(header)}"
                        )
        except (OSError, UnicodeDecodeError, csv.Error, EOFError) as exc:
            text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            return f"{name}: cannot be read as CSV: {text}"
    return None


def _one_line(exc: Exception) -> str:
    """The engine's message, first line, without the SQL text it quotes (`LINE 2: …`)."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    head = re.sub(r"\s*\(?LINE \d+:.*$", "", lines[0]) if lines else type(exc).__name__
    where = next((line for line in lines[1:] if re.match(r"(?i)(file|at)\b", line)), "")
    return f"{head} ({where})" if where else head


# An amount's cell is at most 10^15 (a quadrillion; DECIMAL(38,10) and the sums stay exact) and a
# time's year 1 to 9999 (what a report can write): outside them a cell is refused, located.
BOUND = Decimal(10) ** 15
_CHECKS = (
    ("BilledCost", MONEY),
    ("EffectiveCost", MONEY),
    ("ConsumedQuantity", MONEY),
    ("ChargePeriodStart", "TIMESTAMPTZ"),
    ("ChargePeriodEnd", "TIMESTAMPTZ"),
    ("Tags", "JSON"),
    ("x_SkuDetails", "JSON"),
    ("SkuPriceDetails", "JSON"),
)
_WHAT = {MONEY: "an amount (a number under 10^15)", "TIMESTAMPTZ": "a time (year 1 to 9999)"}


def in_bounds(sums: Sequence[Any]) -> bool:
    """A group's sums (`query.SUM_COLUMNS`) within the bounds a report can write."""
    named = dict(zip(SUM_COLUMNS, sums, strict=False))  # a daily read adds its day after them
    times = ("first_charge", "last_charge")
    amounts = [v for k, v in named.items() if k not in (*times, "rows")]
    if any(a is not None and not abs(a) < BOUND for a in amounts):
        return False
    return all(t is None or (isinstance(t, datetime) and t.tzinfo) for t in map(named.get, times))


def _bad(column: str, kind: str, target: str) -> str:
    """The condition on one raw cell that makes it unreadable."""
    name = quote(column)
    cell = f"NULLIF(TRIM(CAST({name} AS VARCHAR)), '')"
    if target == "JSON":
        return f"{cell} IS NOT NULL AND NOT json_valid({cell})"
    value = (
        f"TRY_CAST({cell} AS {target})"
        if kind.startswith("VARCHAR")
        else f"TRY_CAST({name} AS {target})"
    )
    if target == MONEY:
        return f"{name} IS NOT NULL AND ({value} IS NULL OR abs({value}) >= {BOUND})"
    return (
        f"{name} IS NOT NULL AND ({value} IS NULL OR NOT isfinite({value}) "
        f"OR year({value}) NOT BETWEEN 1 AND 9999)"
    )


def locate_bad_value(conn: Any, found: Sequence[Source], exc: Exception | None) -> str:
    """A value that does not convert, is out of bounds, or a JSON cell that is no JSON: find
    its file, row and column (a second, rare pass; rows are numbered in file order, so the files
    are read in order here)."""
    import duckdb  # keeps duckdb off start-up

    conn.execute("SET preserve_insertion_order = true")
    for source in found:
        for column, target in _CHECKS:
            kind = source.columns.get(column)
            if kind is None or (target == "JSON" and not kind.startswith("VARCHAR")):
                continue
            name = quote(column)
            probe = (
                f"SELECT filename, n, CAST({name} AS VARCHAR) FROM (SELECT filename, "
                f"row_number() OVER (PARTITION BY filename) AS n, {name} FROM "
                f"{source.relation[:-1]}, filename = true)) WHERE {_bad(column, kind, target)} "
                "LIMIT 1"
            )
            try:
                row = conn.execute(probe).fetchone()
            except duckdb.Error:
                continue
            if row:
                value = str(row[2])[:40]
                what = "not JSON" if target == "JSON" else f"not {_WHAT[target]}"
                return f"{row[0]}: row {row[1]}: column '{column}': {value!r} is {what}"
    if exc is None:
        return "a sum of the bill is out of range (10^15 dollars or GPU-hours or more)"
    return _one_line(exc)


def group(row: Sequence[Any], tag_keys: Sequence[str]) -> BilledGroup:
    """One result row of the billing query as a BilledGroup: its tag values by key (a null tag left
    out), null sums as 0."""
    fixed = dict(zip(GROUP_COLUMNS, row[: len(GROUP_COLUMNS)], strict=True))
    tag_values = row[len(GROUP_COLUMNS) : len(GROUP_COLUMNS) + len(tag_keys)]
    sums = dict(zip(SUM_COLUMNS, row[len(GROUP_COLUMNS) + len(tag_keys) :], strict=True))
    money: dict[str, Any] = {
        name: Decimal(0) if sums[name] is None else sums[name]
        for name in ("effective", "billed", "quantity", "gpu_hours", "corrections", "list")
    }
    return BilledGroup(
        **fixed,
        tags={k: str(v) for k, v in zip(tag_keys, tag_values, strict=True) if v is not None},
        **money,
        rows=int(sums["rows"]),
        first_charge=sums["first_charge"],
        last_charge=sums["last_charge"],
        over_list_rows=int(sums["over_list_rows"] or 0),
        negative_rows=int(sums["negative_rows"] or 0),
    )
