"""Each sweep file `check --history` saw, with its GPU-hours bound and the commit it was read at;
`scan --since --history` holds a finished sweep's GPU-hours to the latest one of its name."""

from __future__ import annotations

import os
import sqlite3
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import replace
from datetime import datetime

from gpu_audit.catalog.sweep import bound, is_sweep, sweep_gpu_hours
from gpu_audit.core.frozen import record
from gpu_audit.core.resource import Resource
from gpu_audit.core.runs import Sweep

TABLE = """
CREATE TABLE sweep_estimates (
    audit_id INTEGER NOT NULL,  -- the check that read the file
    name TEXT NOT NULL,  -- the sweep's name in its file (the tuning job's name, displayName)
    format TEXT NOT NULL,  -- the job format: sagemaker, vertex, katib, …
    path TEXT NOT NULL,
    line INTEGER,
    git_commit TEXT,  -- HEAD of the file's checkout (null outside a git repository)
    gpu_hours REAL,  -- the GPU-hours bound (`estimate`'s), null: unbounded or no GPU count
    checked_at TEXT NOT NULL
);
CREATE INDEX sweep_estimates_by_name ON sweep_estimates (name, format, checked_at)
"""

# A job format's sweeps, as `scan --since` reads them back: (provider, service).
FINISHED_AS = {"sagemaker": ("aws", "sagemaker"), "vertex": ("gcp", "vertex")}
PRUNE = "DELETE FROM sweep_estimates WHERE audit_id = ?"
_GIT_SECONDS = 10.0
_GIT_ENV = {"GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0"}


@record
class SweepEstimate:
    """One sweep file as a check read it."""

    name: str
    format: str
    path: str
    line: int | None
    commit: str | None
    gpu_hours: float | None
    checked_at: str  # ISO time of the check


def estimates(resources: Iterable[Resource], checked_at: str) -> list[SweepEstimate]:
    """The named sweeps among a check's jobs, each with its bound and its checkout's commit."""
    commits: dict[str, str | None] = {}
    found = []
    for resource in resources:
        if not resource.name or not is_sweep(resource.hpo):
            continue
        path = resource.source.path or ""
        directory = os.path.dirname(os.path.abspath(path)) if path else os.getcwd()
        if directory not in commits:
            commits[directory] = head_commit(directory)
        limits = bound(resource.hpo, resource.limits, resource.provider)
        found.append(
            SweepEstimate(
                name=resource.name,
                format=resource.provider,
                path=path,
                line=resource.source.line,
                commit=commits[directory],
                gpu_hours=sweep_gpu_hours(limits, resource.gpu.count),
                checked_at=checked_at,
            )
        )
    return found


def head_commit(directory: str) -> str | None:
    """`git rev-parse HEAD` in `directory`, or None: not a repository, no git, no commit yet."""
    try:
        done = subprocess.run(
            ["git", "-C", directory, "rev-parse", "--verify", "-q", "HEAD"],
            capture_output=True,
            timeout=_GIT_SECONDS,
            env={**os.environ, **_GIT_ENV},
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    text = done.stdout.decode("ascii", "replace").strip()
    return text if done.returncode == 0 and text.isalnum() else None


def insert(conn: sqlite3.Connection, audit_id: int, found: Sequence[SweepEstimate]) -> None:
    """Record the sweep estimates this check made (name, format, file, line, commit, GPU-hours)."""
    conn.executemany(
        "INSERT INTO sweep_estimates VALUES (?,?,?,?,?,?,?,?)",
        (
            (audit_id, e.name, e.format, e.path, e.line, e.commit, e.gpu_hours, e.checked_at)
            for e in found
        ),
    )


def latest(conn: sqlite3.Connection, names: Iterable[str]) -> dict[tuple[str, str], SweepEstimate]:
    """The latest estimate of each (name, format) among `names`."""
    found: dict[tuple[str, str], SweepEstimate] = {}
    for name in set(names):
        rows = conn.execute(
            "SELECT name, format, path, line, git_commit, gpu_hours, checked_at "
            "FROM sweep_estimates WHERE name = ? ORDER BY checked_at, rowid",
            (name,),
        ).fetchall()
        for row in rows:  # oldest first: the latest of each format is kept
            found[(row[0], row[1])] = SweepEstimate(*row)
    return found


def no_estimate(sweep: Sweep) -> str:
    """The note for a finished sweep the history has no estimate of."""
    return f"no estimate of a sweep named '{sweep.name}' ({sweep.service}) in the history"


def with_ceilings(
    sweeps: Sequence[Sweep], known: dict[tuple[str, str], SweepEstimate]
) -> list[Sweep]:
    """Each tuning sweep with the GPU-hours its file allowed, or why there is no such figure."""
    by_family = {family: name for name, family in FINISHED_AS.items()}
    joined = []
    for sweep in sweeps:
        file_format = by_family.get((sweep.provider, sweep.service))
        if sweep.kind != "tuning" or file_format is None:
            joined.append(sweep)
            continue
        found = known.get((sweep.name, file_format))
        if found is None:
            joined.append(replace(sweep, ceiling_note=no_estimate(sweep)))
            continue
        where = f"{found.path} at commit {short(found.commit)}"
        note = None
        if found.gpu_hours is None:
            note = f"{where} has no GPU-hours bound (no trial or per-trial cap, or no GPU count)"
        joined.append(
            replace(
                sweep,
                ceiling_gpu_hours=found.gpu_hours,
                ceiling_commit=found.commit,
                ceiling_file=found.path,
                ceiling_note=note,
            )
        )
    return joined


def short(commit: str | None) -> str:
    """A commit abbreviated to 7 characters, or words saying it is unknown (not a git checkout)."""
    return "unknown (not a git checkout)" if commit is None else commit[:7]


def checked_at(now: datetime) -> str:
    """The check's time as stored: ISO 8601 with a `Z` for UTC."""
    return now.isoformat().replace("+00:00", "Z")
