"""Which files of an export folder count, the way each cloud writes them.

- AWS Data Exports: `metadata/BILLING_PERIOD=YYYY-MM/<export>-Manifest.json` lists the current
  data files (`dataFiles`, S3 URIs, resolved by their path from `data/` on); a file on the
  prefix that no manifest lists is superseded and never read.
- Azure Cost Management (`FocusCost`): one `manifest.json` per run; with `CreateNewReport` every
  run is a full month-to-date copy, so per `runInfo.startDate` only the latest `submittedTime`
  counts.
- GCP (the FOCUS table written with `EXPORT DATA`): no manifest, every Parquet file counts.
- Any other FOCUS dataset (`focus`): one plain file (CSV, CSV.gz, Parquet), or a folder of CSV
  files with no manifest, such as Oracle Cloud's FOCUS reports (gzip CSV, one folder per day):
  every file counts, and each row's provider is its own `ProviderName`.

Listing and reading go through the engine's file system (DuckDB's `glob` and `read_text`), so a
local folder and an `s3://`, `gs://` or `az://` prefix are read the same way.
"""

from __future__ import annotations

import json
import os
import posixpath
import stat
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from gpu_audit.billing.period import Period
from gpu_audit.core.frozen import record
from gpu_audit.errors import InputError

AZURE_VERSIONS = ("1.0", "1.0r2", "1.2-preview", "1.2")
_DATA_SUFFIXES = (".parquet", ".csv", ".csv.gz", ".csv.gzip")
PLAIN = "focus"  # a plain FOCUS dataset: each row's cloud is its own provider's


@record
class ExportFiles:
    """One PATH: its cloud, the data files that count (each with its format), and what was
    left unread as superseded."""

    path: str
    cloud: str  # aws | azure | gcp (the export folders) | focus (plain FOCUS files)
    files: tuple[str, ...]
    superseded: tuple[str, ...] = ()
    version: str | None = None  # the FOCUS version the export declares, where it does

    def by_format(self) -> dict[str, tuple[str, ...]]:
        """The export's files by data format (`parquet`, `csv`), each sorted."""
        groups: dict[str, list[str]] = {}
        for name in self.files:
            groups.setdefault(data_format(name), []).append(name)
        return {key: tuple(sorted(value)) for key, value in sorted(groups.items())}


class FileSystem:
    """What discovery needs of a file system: glob a pattern, read a small text file."""

    def __init__(self, glob: Callable[[str], list[str]], read_text: Callable[[str], str]) -> None:
        self.glob = glob
        self.read_text = read_text


def data_format(name: str) -> str:
    """`parquet` or `csv` from a file's suffix; InputError for any other file."""
    lowered = name.lower()
    if lowered.endswith(".parquet"):
        return "parquet"
    if any(lowered.endswith(suffix) for suffix in _DATA_SUFFIXES[1:]):
        return "csv"
    raise InputError(f"{name}: not a Parquet or CSV file")


def discover(path: str, fs: FileSystem, period: Period) -> ExportFiles:
    """The current files of one cloud's export folder for `period`, by its layout."""
    root = path.rstrip("/") or "/"
    if "://" not in root and os.path.exists(root) and not os.path.isdir(root):
        contained(root, root, root)  # PATH itself a FIFO or device: refused before it is read
    if root.lower().endswith(_DATA_SUFFIXES) and fs.glob(root) == [root]:
        return ExportFiles(path=root, cloud=PLAIN, files=(root,))
    # `**` matches no folder too: PATH may be the export itself or a folder of exports
    aws = _held(root, fs.glob(_join(root, "**/metadata/BILLING_PERIOD=*/*-Manifest.json")))
    if aws:
        exports: dict[str, list[str]] = {}
        for manifest in aws:
            exports.setdefault(manifest[: manifest.rfind("/metadata/BILLING_PERIOD=")], []).append(
                manifest
            )
        parts = [_aws(export, found, fs, period) for export, found in sorted(exports.items())]
        return ExportFiles(
            path=root,
            cloud="aws",
            files=tuple(f for part in parts for f in part.files),
            superseded=tuple(f for part in parts for f in part.superseded),
        )
    azure = _held(root, fs.glob(_join(root, "**/manifest.json")))
    if azure:
        return _azure(root, azure, fs, period)
    files = _held(root, fs.glob(_join(root, "**/*.parquet")))
    if files:
        return ExportFiles(path=root, cloud="gcp", files=tuple(sorted(files)))
    plain = sorted(
        {name for suffix in _DATA_SUFFIXES[1:] for name in fs.glob(_join(root, f"**/*{suffix}"))}
    )
    if plain:
        return ExportFiles(path=root, cloud=PLAIN, files=tuple(plain))
    raise InputError(
        f"{root}: no FOCUS export found (no AWS metadata/BILLING_PERIOD=*/…-Manifest.json, "
        "no Azure manifest.json, no Parquet, CSV or CSV.gz files)"
    )


def _held(root: str, names: list[str]) -> list[str]:
    for name in names:
        contained(root, name, name)
    return names


def _join(root: str, pattern: str) -> str:
    return posixpath.join(root, pattern)


def _load(fs: FileSystem, name: str) -> Any:  # Any: JSON of any shape
    try:
        text = fs.read_text(name)
    except InputError:
        raise
    try:
        return json.loads(text)
    except ValueError as exc:
        raise InputError(f"{name}: not a JSON manifest: {exc}") from None
    except RecursionError:
        raise InputError(f"{name}: not a JSON manifest: nested too deeply") from None


def _aws(root: str, manifests: Sequence[str], fs: FileSystem, period: Period) -> ExportFiles:
    months = set(period.months())
    first = min(months)
    present = set(fs.glob(_join(root, "data/**/*")))
    current: list[str] = []
    for manifest in sorted(manifests):
        month = _partition(manifest)
        # A later billing period may deliver corrections to this one: read every period from
        # the first month on (rows are kept by their own charge period).
        if month is not None and month < first:
            continue
        body = _load(fs, manifest)
        files = body.get("dataFiles") if isinstance(body, dict) else None
        if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
            raise InputError(f"{manifest}: key 'dataFiles': expected a list of S3 URIs")
        for uri in files:
            local = _below_export(root, uri)
            if local is None:
                raise InputError(
                    f"{manifest}: dataFiles entry {uri[:200]!r} has no 'data/' part to resolve"
                )
            contained(root, local, f"{manifest}: dataFiles entry {uri[:200]!r}")
            if local not in present:
                raise InputError(f"{manifest}: names a missing data file {local}")
            data_format(local)
            current.append(local)
    listed = set(current)
    superseded = sorted(
        name
        for name in present
        if name not in listed
        and name.lower().endswith(_DATA_SUFFIXES)
        and (_partition(name) or first) >= first
    )
    return ExportFiles(
        path=root, cloud="aws", files=tuple(sorted(listed)), superseded=tuple(superseded)
    )


def contained(root: str, name: str, entry: str) -> None:
    """Refuse a file the export names that lies outside PATH (`..`, a glob, a symlink leading
    out) or is no regular file (a FIFO would block the read): nothing is read but the inputs."""
    if "\x00" in name:  # no file system takes one (os.path would raise)
        raise InputError(f"{entry}: a NUL byte in the name; refused")
    below = name[len(root) :] if name.startswith(root) else name
    if ".." in below.replace("\\", "/").split("/"):
        raise InputError(f"{entry}: leaves the export folder {root}; refused")
    if any(char in below for char in "*?[{"):  # the engine would read every file it matches
        raise InputError(f"{entry}: a pattern, not a file name; refused")
    if "://" in root:
        return
    real, folder = os.path.realpath(name), os.path.realpath(root)
    if real != folder and not real.startswith(folder.rstrip(os.sep) + os.sep):
        raise InputError(f"{entry}: resolves to {real}, outside the export folder {root}; refused")
    try:
        mode = os.stat(real).st_mode
    except OSError:
        return  # a missing file is said by the caller, naming what is missing
    if not stat.S_ISREG(mode):
        raise InputError(f"{entry}: not a regular file; refused")


def _partition(name: str) -> str | None:
    marker = "BILLING_PERIOD="
    at = name.find(marker)
    return name[at + len(marker) : at + len(marker) + 7] if at >= 0 else None


def _below_export(root: str, uri: str) -> str | None:
    """`s3://bucket/prefix/<export>/data/BILLING_PERIOD=…/f.parquet` → `<root>/data/…/f.parquet`."""
    at = uri.rfind("/data/BILLING_PERIOD=")
    if at < 0:
        return None
    return _join(root, uri[at + 1 :])


def _azure(root: str, manifests: Sequence[str], fs: FileSystem, period: Period) -> ExportFiles:
    first = min(period.months())
    runs: dict[tuple[str, str], tuple[datetime, str, list[str]]] = {}
    versions: set[str] = set()
    every: list[str] = []
    for manifest in sorted(manifests):
        body = _load(fs, manifest)
        config = _section(manifest, body, "exportConfig")
        run = _section(manifest, body, "runInfo")
        kind = str(config.get("type", ""))
        if kind.lower() != "focuscost":
            raise InputError(
                f"{manifest}: key 'exportConfig.type': {kind[:40]!r} is not a FOCUS export "
                "(export the FocusCost dataset)"
            )
        version = str(config.get("dataVersion", ""))
        if version not in AZURE_VERSIONS:
            raise InputError(
                f"{manifest}: key 'exportConfig.dataVersion': unknown FOCUS version "
                f"{version[:40]!r} (read: {', '.join(AZURE_VERSIONS)})"
            )
        versions.add(version)
        start = _time(manifest, "runInfo.startDate", run.get("startDate"))
        submitted = _time(manifest, "runInfo.submittedTime", run.get("submittedTime"))
        blobs = body.get("blobs")
        if not isinstance(blobs, list):
            raise InputError(f"{manifest}: key 'blobs': expected a list")
        month = f"{start.year:04d}-{start.month:02d}"
        if month < first:  # before the period (a later month's run may still correct it: kept)
            continue
        files = [_blob(root, manifest, blob, fs) for blob in blobs]
        every.extend(files)
        key = (str(config.get("exportName", "")), start.isoformat())
        if key not in runs or submitted > runs[key][0]:
            runs[key] = (submitted, manifest, files)
    current = sorted({name for _, _, files in runs.values() for name in files})
    superseded = sorted(set(every) - set(current))
    return ExportFiles(
        path=root,
        cloud="azure",
        files=tuple(current),
        superseded=tuple(superseded),
        version=", ".join(sorted(versions)) or None,
    )


def _section(manifest: str, body: Any, key: str) -> dict[str, Any]:
    value = body.get(key) if isinstance(body, dict) else None
    if not isinstance(value, dict):
        raise InputError(f"{manifest}: key '{key}': missing or not an object")
    return value


def _time(manifest: str, key: str, value: Any) -> datetime:
    try:
        parsed = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        raise InputError(f"{manifest}: key '{key}': not a time: {str(value)[:40]!r}") from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _blob(root: str, manifest: str, blob: Any, fs: FileSystem) -> str:
    name = blob.get("blobName") if isinstance(blob, dict) else None
    if not isinstance(name, str) or not name:
        raise InputError(f"{manifest}: key 'blobs[].blobName': missing")
    # blobName is relative to the container; PATH may be the container or a folder below it,
    # so the blob is looked for there and beside its manifest (where Azure writes it).
    candidates = [
        _join(root, name.lstrip("/")),
        _join(posixpath.dirname(manifest), posixpath.basename(name)),
    ]
    for candidate in candidates:
        contained(root, candidate, f"{manifest}: blobName {name[:200]!r}")
        if fs.glob(candidate):
            data_format(candidate)
            return candidate
    raise InputError(f"{manifest}: names a missing data file {name[:200]}")
