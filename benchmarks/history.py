"""Benchmark: what `--history` adds to a scan of 100,000 resources (~200,000 findings).

Run with `.venv/bin/python benchmarks/history.py [--resources N] [--repeat R]`. Two saved
inventories of the synthetic fleet of `benchmarks/engine.py` are written once (the second a
quarter later: 5% of instances gone, 5% new, 10% moved to spot). The database holds the first
audit. Each repeat then runs, as fresh processes, alternating, on the second inventory:
`gpu-audit scan` without a history and with `--history` (a copy of that database, so it
compares with the first audit and records the second). Reported: median wall time, CPU time
and peak resident memory of each, and what the history adds.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from engine import NOW, fleet  # type: ignore[import-not-found]

from gpu_audit.core.canonical import to_mapping
from gpu_audit.core.resource import Capacity
from gpu_audit.history.documents import decode_lines

GPU_AUDIT = [sys.executable, "-m", "gpu_audit"]


def write_inventories(directory: Path, count: int) -> tuple[Path, Path]:
    rng = random.Random(11)
    first = fleet(count)
    second = []
    for resource in first:
        roll = rng.random()
        if roll < 0.05:
            continue  # terminated since
        if roll < 0.15:
            resource = replace(resource, capacity=Capacity.SPOT)
        second.append(resource)
    second += [replace(r, id=r.id.replace("i-", "i-new-")) for r in fleet(count // 20, seed=99)]
    paths = []
    for name, resources, when in (("q1", first, "2026-08-20"), ("q2", second, "2026-11-20")):
        path = directory / f"{name}.json"
        body = {"version": 1, "captured_at": f"{when}T06:00:00Z"}
        body["resources"] = [to_mapping(r) for r in resources]  # type: ignore[assignment]
        path.write_text(json.dumps(body))
        paths.append(path)
    return paths[0], paths[1]


def run(args: list[str]) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds (user + system) and peak RSS (MiB) of one gpu-audit process."""
    start = time.perf_counter()
    process = subprocess.Popen([*GPU_AUDIT, *args], stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode not in (0, 1):
        raise SystemExit(f"gpu-audit {' '.join(args)}: exit {process.returncode}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resources", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--format", default="none", help="the report the scan writes (none: `-q`, the summary line)"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        q1, q2 = write_inventories(directory, args.resources)
        seed = directory / "seed.db"
        report = str(directory / "report")
        common = ["--fail-on", "none", "-q"]
        if args.format != "none":
            common += ["--format", args.format, "--output", report]
        run(["scan", "--inventory", str(q1), "--history", str(seed), *common])
        plain, remembered = [], []
        for _ in range(args.repeat):
            plain.append(run(["scan", "--inventory", str(q2), *common]))
            db = directory / "history.db"
            shutil.copyfile(seed, db)
            remembered.append(run(["scan", "--inventory", str(q2), "--history", str(db), *common]))
        size = (directory / "history.db").stat().st_size / 2**20
        conn = sqlite3.connect(directory / "history.db")
        (fingerprints,) = conn.execute(
            "SELECT body FROM documents WHERE audit_id = 2 AND name = 'fingerprints'"
        ).fetchone()
        findings = len(decode_lines(fingerprints))
        conn.close()
    wall0, wall1 = (statistics.median(r[0] for r in runs) for runs in (plain, remembered))
    cpu0, cpu1 = (statistics.median(r[1] for r in runs) for runs in (plain, remembered))
    rss0, rss1 = (statistics.median(r[2] for r in runs) for runs in (plain, remembered))
    print(f"python {sys.version.split()[0]}; {args.resources:,} resources; {args.format} report")
    print(f"second audit: {findings:,} findings recorded and compared; median of {args.repeat}")
    print(f"scan:            {wall0:6.2f} s wall, {cpu0:6.2f} s CPU, {rss0:5.0f} MiB peak RSS")
    print(f"scan --history:  {wall1:6.2f} s wall, {cpu1:6.2f} s CPU, {rss1:5.0f} MiB peak RSS")
    added_wall = f"{wall1 - wall0:6.2f} s wall ({(wall1 / wall0 - 1) * 100:+.0f}%)"
    added_cpu = f"{cpu1 - cpu0:6.2f} s CPU ({(cpu1 / cpu0 - 1) * 100:+.0f}%)"
    print(f"history adds:    {added_wall}, {added_cpu}, {rss1 - rss0:+.0f} MiB")
    print(f"database after two audits: {size:.0f} MiB; as of {NOW:%Y-%m-%d} fleet")


if __name__ == "__main__":
    main()
