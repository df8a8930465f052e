"""Benchmark: peak memory of sharded scans and of `merge` for a fake universe of 2,000 accounts.

Scan: a moto server (own process, 127.0.0.1) holds an AWS Organization of `--accounts` accounts,
a few of them with GPU instances; `gpu-audit scan --provider aws --org-role audit --service ec2`
over 4 regions runs as a fresh process for shards 1/64 and 1/16 of that universe, and its peak
resident memory (`ru_maxrss` of the child) is read. Every shard lists the whole organisation
(the universe), but scans only its own (account × region) items.

Merge: `--shards` shard reports are written through the real JSON reporter, each stamped with the
scan's universe (taken from the shard 1/64 report) and holding the GPU instances of its own work
items (`--instances` synthetic instances spread over the accounts); then `gpu-audit merge` runs
as a fresh process and its peak RSS is read beside the shard files' total size.

    .venv/bin/python benchmarks/org_memory.py [--accounts 2000] [--shards 64] [--instances 4000]
        [--scan-shards 64 16]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import boto3

sys.path.insert(0, str(Path(__file__).resolve().parent))
from org_scan import CREDENTIALS, GPU_AUDIT, MOTO, REGIONS, free_port, wait_for

from gpu_audit.audit import audit
from gpu_audit.collectors.workitems import Shard, shard_of
from gpu_audit.core.resource import Capacity, Kind, Resource, State
from gpu_audit.core.results import Scope, ShardStamp
from gpu_audit.policy.loader import load_policy
from gpu_audit.report import write_report


def child(command: list[str], env: dict[str, str]) -> tuple[float, float, int]:
    """Wall, CPU and peak RSS (MiB) of one fresh process (`wait4`: that child's own usage)."""
    started = time.perf_counter()
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert process.stderr is not None
    errors = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - started
    if process.returncode not in (0, 1, 3):
        raise SystemExit(errors.decode())
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss // 1024


def organisation(endpoint: str, accounts: int) -> None:
    keys = {"aws_access_key_id": CREDENTIALS["AWS_ACCESS_KEY_ID"],
            "aws_secret_access_key": CREDENTIALS["AWS_SECRET_ACCESS_KEY"]}  # fmt: skip
    org = boto3.client("organizations", "us-east-1", endpoint_url=endpoint, **keys)
    org.create_organization(FeatureSet="ALL")
    for n in range(accounts - 1):
        org.create_account(AccountName=f"team-{n}", Email=f"team-{n}@example.com")


def shard_reports(stamp: dict[str, object], count: int, instances: int, work: Path) -> list[str]:
    """`count` shard reports of one run, each holding the synthetic instances of its items."""
    universe = tuple(str(k) for k in stamp["universe"])  # type: ignore[attr-defined]
    accounts = sorted({key.split(":")[1] for key in universe})
    policy = load_policy(None)
    now = datetime(2026, 11, 25, tzinfo=UTC)
    rng = random.Random(3)
    held: dict[int, list[Resource]] = {k: [] for k in range(1, count + 1)}
    for n in range(instances):
        account, region = rng.choice(accounts), rng.choice(REGIONS)
        held[shard_of(f"aws:{account}:{region}", count)].append(
            Resource(
                kind=Kind.INSTANCE,
                provider="aws",
                service="ec2",
                id=f"i-{n:017x}",
                account=account,
                region=region,
                instance_type=rng.choice(("p4d.24xlarge", "g5.xlarge", "g6.xlarge")),
                state=State.RUNNING,
                capacity=rng.choice((Capacity.SPOT, Capacity.ON_DEMAND)),
                launched_at=now - timedelta(hours=rng.randint(1, 900)),
            )
        )
    base = ShardStamp(
        index=1,
        count=count,
        universe_digest=str(stamp["universe_digest"]),
        universe=universe,
        policy_digest=str(stamp["policy_digest"]),
        price_basis=str(stamp["price_basis"]),
    )
    paths = []
    for index, resources in held.items():
        scope = Scope(command="scan", providers=("aws",), shard=replace(base, index=index))
        result = audit(resources, policy, now, scope)
        path = work / f"shard-{index}.json"
        with open(path, "w", encoding="utf-8") as stream:
            write_report("json", result, stream)
        paths.append(str(path))
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--accounts", type=int, default=2000)
    parser.add_argument("--shards", type=int, default=64)
    parser.add_argument("--instances", type=int, default=4000)
    parser.add_argument("--scan-shards", type=int, nargs="+", default=[64, 16])
    options = parser.parse_args()
    port = free_port()
    moto = subprocess.Popen([str(MOTO), "-H", "127.0.0.1", "-p", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    endpoint = f"http://127.0.0.1:{port}"
    env = {
        **os.environ,
        **CREDENTIALS,
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_EC2_METADATA_DISABLED": "1",
    }
    try:
        wait_for(f"{endpoint}/moto-api/")
        organisation(endpoint, options.accounts)
        with tempfile.TemporaryDirectory() as work:
            args = [str(GPU_AUDIT), "scan", "--provider", "aws", "--org-role", "audit"]
            args += ["--service", "ec2", "--fail-on", "none", "--run-id", "bench"]
            args += [a for region in REGIONS for a in ("--region", region)]
            print(f"universe: {options.accounts} accounts × {len(REGIONS)} regions")
            print("| run | work items scanned | wall | CPU | peak RSS |")
            print("|---|---:|---:|---:|---:|")
            first = None
            for shard in (Shard(1, n) for n in options.scan_shards):
                out = Path(work, f"scan-{shard.count}.json")
                wall, cpu, rss = child([*args, "--shard", str(shard), "-o", str(out)], env)
                stamp = json.loads(out.read_text())["scope"]["shard"]
                first = first or stamp
                items = sum(1 for key in stamp["universe"] if shard.holds(key))
                print(
                    f"| scan --shard {shard} | {items} | {wall:.1f} s | {cpu:.1f} s | {rss} MiB |"
                )
            assert first is not None
            paths = shard_reports(first, options.shards, options.instances, Path(work))
            size = sum(os.path.getsize(p) for p in paths) / 2**20
            merged = Path(work, "merged.json")
            wall, cpu, rss = child([str(GPU_AUDIT), "merge", *paths, "-o", str(merged)], env)
            report = json.loads(merged.read_text())
            assert len(report["resources"]) == options.instances and not report["partial"]
            what = (
                f"merge {options.shards} shards ({size:.0f} MiB of JSON, {options.instances} GPUs)"
            )
            print(f"| {what} | all | {wall:.1f} s | {cpu:.1f} s | {rss} MiB |")
    finally:
        moto.terminate()
        try:
            moto.wait(timeout=10)
        except subprocess.TimeoutExpired:
            moto.kill()
            moto.wait()


if __name__ == "__main__":
    main()
