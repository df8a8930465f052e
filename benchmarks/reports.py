"""Benchmark: `gpu-audit scan --inventory` of 100,000 resources in every format, against json.

Run with `.venv/bin/python benchmarks/reports.py [--resources N] [--repeat R] [--format F]`.
It writes a deterministic inventory (seeded; eight GPU types on AWS and GCP, tags, metrics,
data regions) to a temp folder, then times each format end to end in a fresh process
(`gpu-audit scan --inventory inv.json --format F -o out --fail-on none`) and the baseline, a
fresh process that loads the same file with the standard `json` module and dumps it again with
`indent=2`. Wall time and peak resident memory (`ru_maxrss` of the child, from `wait4`) are
the medians of the repeats; the two sides alternate.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

FORMATS = ("json", "sarif", "csv", "text", "markdown", "table")
WALL_RATIO, MEMORY_RATIO = 3.0, 2.5
NOW = datetime(2026, 11, 20, 6, 0, tzinfo=UTC)
TYPES = [
    ("aws", "p4d.24xlarge", "us-east-1"),
    ("aws", "p5.48xlarge", "us-west-2"),
    ("aws", "g5.xlarge", "us-east-1"),
    ("aws", "g4dn.xlarge", "eu-west-1"),
    ("aws", "g6.12xlarge", "us-west-2"),
    ("gcp", "a2-highgpu-8g", "us-central1"),
    ("gcp", "a3-highgpu-8g", "us-east4"),
    ("gcp", "g2-standard-8", "us-central1"),
]
TAG_SETS = [
    {"team": "nlp", "project": "llm", "owner": "a@example.com"},
    {"team": "vision", "owner": "b@example.com"},
    {},
]
# What `scan --inventory F --format X -o OUT --fail-on none` does, with the report streamed to
# the file through `write_atomic(path, partial(report.write, ...))` instead of rendered whole.
STREAMED = (
    "import sys\n"
    "from functools import partial\n"
    "from gpu_audit.audit import audit\n"
    "from gpu_audit.collectors.inventory import load_inventory\n"
    "from gpu_audit.core.results import Scope\n"
    "from gpu_audit.policy.loader import load_policy\n"
    "from gpu_audit.report import write_report as write\n"
    "from gpu_audit.core.writer import write_atomic\n"
    "inv = load_inventory(sys.argv[1])\n"
    "scope = Scope(command='scan', providers=('aws', 'gcp'), files=(sys.argv[1],))\n"
    "result = audit(inv.resources, load_policy(None), inv.captured_at, scope)\n"
    "write_atomic(sys.argv[3], partial(write, sys.argv[2], result), inputs=[sys.argv[1]])\n"
)
BASELINE = (
    "import json, sys\n"
    "with open(sys.argv[1], encoding='utf-8') as f: data = json.load(f)\n"
    "with open(sys.argv[2], 'w', encoding='utf-8') as f: json.dump(data, f, indent=2)\n"
)


def inventory(count: int, seed: int = 7) -> dict[str, Any]:
    """A saved inventory (docs/inventory.md) of `count` GPU instances, the same for a seed."""
    rng = random.Random(seed)
    resources = []
    for index in range(count):
        provider, instance_type, region = rng.choice(TYPES)
        item: dict[str, Any] = {
            "provider": provider,
            "id": f"i-{index:08x}",
            "name": f"node-{index}",
            "account": "111122223333" if provider == "aws" else "acme-ml",
            "region": region,
            "instance_type": instance_type,
            "state": rng.choice(["running"] * 9 + ["stopped"]),
            "capacity": rng.choice(["on-demand", "spot", "reserved"]),
            "launched_at": (NOW - timedelta(hours=rng.randint(1, 24 * 60)))
            .isoformat()
            .replace("+00:00", "Z"),
            "workload": rng.choice(["training", "inference", "notebook", "unknown"]),
            "tags": rng.choice(TAG_SETS),
        }
        if rng.random() < 0.8:
            item["utilization"] = {
                "gpu_avg": round(rng.uniform(0, 100), 1),
                "gpu_p95": round(rng.uniform(0, 100), 1),
                "window_hours": 24,
            }
        if rng.random() < 0.5:
            item["data"] = {
                "uris": ["s3://bucket"],
                "regions": [rng.choice(["us-east-1", "us-west-2"])],
            }
        resources.append(item)
    return {"version": 1, "captured_at": "2026-11-20T06:00:00Z", "resources": resources}


def measure(argv: list[str], env: dict[str, str] | None = None) -> tuple[float, float, float]:
    """Wall seconds, peak RSS (MiB) and CPU seconds (user + system) of one child process."""
    start = time.perf_counter()
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, env=env)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(argv)}: exit {process.returncode}")
    return wall, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resources", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--format", dest="formats", action="append", choices=FORMATS)
    parser.add_argument(
        "--streamed",
        action="store_true",
        help="run the scan in a small driver that streams the report (see STREAMED), not the CLI",
    )
    parser.add_argument(
        "--against",
        metavar="SRC",
        help="also run each format with PYTHONPATH=SRC (another checkout's src/, e.g. from "
        "`git archive`), alternating with this one: before and after on the same load",
    )
    parser.add_argument(
        "--compact",
        action="store_true",
        help="write the inventory without indentation (a 1M inventory indented is ~520 MiB, "
        "past the reader's 512 MiB limit)",
    )
    parser.add_argument("--write-inventory", metavar="PATH", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.write_inventory:
        text = json.dumps(inventory(args.resources), indent=None if args.compact else 2)
        Path(args.write_inventory).write_text(text, encoding="utf-8")
        return
    formats = args.formats or list(FORMATS)
    cli = str(Path(sys.executable).with_name("gpu-audit"))
    with tempfile.TemporaryDirectory(prefix="gpu-audit-bench-") as folder:
        source = Path(folder, "inventory.json")
        # Built in a child: Linux carries a parent's RSS high-water mark into a forked child's
        # ru_maxrss, so a parent holding the 100k inventory made every run read ~490 MiB.
        write = [sys.executable, __file__, "--write-inventory", str(source)]
        compact = ["--compact"] if args.compact else []
        subprocess.run([*write, "--resources", str(args.resources), *compact], check=True)
        base = [sys.executable, "-c", BASELINE, str(source), str(Path(folder, "copy.json"))]
        names = [*formats, *(f"{name} (against)" for name in formats if args.against)]
        Run = tuple[float, float, float]
        runs: dict[str, list[Run]] = {name: [] for name in ["baseline", *names]}
        against = {**os.environ, "PYTHONPATH": args.against or ""}
        Path(folder, "against").mkdir()
        for _ in range(args.repeat):
            for name in formats:
                runs["baseline"].append(measure(base))
                out = str(Path(folder, f"report.{name}"))
                argv = [cli, "scan", "--inventory", str(source), "--format", name, "-o", out]
                argv += ["--fail-on", "none"]
                if args.streamed:
                    argv = [sys.executable, "-c", STREAMED, str(source), name, out]
                runs[name].append(measure(argv))
                seconds, mib, cpu = runs[name][-1]
                print(f"{name}: {seconds:.2f} s, {mib:.0f} MiB, CPU {cpu:.2f} s", file=sys.stderr)
                if args.against:
                    # The other checkout's own entry (its console script may differ), its
                    # report in a folder of its own under the same name (the extension counts).
                    elsewhere = str(Path(folder, "against", f"report.{name}"))
                    other = [*argv[:-1], elsewhere] if args.streamed else [*argv]
                    if not args.streamed:
                        other[:1] = [sys.executable, "-m", "gpu_audit"]
                        other[other.index("-o") + 1] = elsewhere
                    runs[f"{name} (against)"].append(measure(other, against))
                    seconds, mib, cpu = runs[f"{name} (against)"][-1]
                    print(f"{name} against: {seconds:.2f} s, {mib:.0f} MiB, CPU {cpu:.2f} s")
        sizes = {name: Path(folder, f"report.{name}").stat().st_size for name in formats}
        for name in formats:
            if args.against:
                sizes[f"{name} (against)"] = (
                    Path(folder, "against", f"report.{name}").stat().st_size
                )
    wall = {name: statistics.median(r[0] for r in rows) for name, rows in runs.items()}
    rss = {name: statistics.median(r[1] for r in rows) for name, rows in runs.items()}
    cpu = {name: statistics.median(r[2] for r in rows) for name, rows in runs.items()}
    entry = "streamed driver" if args.streamed else "gpu-audit CLI"
    print(
        f"python {sys.version.split()[0]}, {args.resources:,} resources, {entry}, "
        f"median of {args.repeat}"
    )
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")
    header = "| format | wall | peak RSS | CPU | wall ratio | RSS ratio | CPU ratio | output |"
    print(header + " within |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
    print(
        f"| json.load + dump | {wall['baseline']:.2f} s | {rss['baseline']:.0f} MiB "
        f"| {cpu['baseline']:.2f} s | 1 | 1 | 1 | | |"
    )
    for name in names:
        w, m = wall[name] / wall["baseline"], rss[name] / rss["baseline"]
        ok = "yes" if w <= WALL_RATIO and m <= MEMORY_RATIO else "NO"
        c = cpu[name] / cpu["baseline"]
        print(
            f"| {name} | {wall[name]:.2f} s | {rss[name]:.0f} MiB | {cpu[name]:.2f} s | {w:.2f}× "
            f"| {m:.2f}× | {c:.2f}× | {sizes[name] / 2**20:.0f} MiB | {ok} |"
        )


if __name__ == "__main__":
    main()
