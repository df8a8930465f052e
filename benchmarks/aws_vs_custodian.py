"""Benchmark: `gpu-audit scan --provider aws` against Cloud Custodian on the same moto fleet.

Two checks, written once for each tool:
- owner: running on-demand GPU instances without an `owner` tag;
- idle: running GPU instances whose CloudWatch agent metric (`CWAgent` /
  `nvidia_smi_utilization_gpu`) stays under 10% over the last day.

A moto server runs in its own process on 127.0.0.1; the fleet is built into it once per size with
boto3, then each tool runs as a fresh process (`gpu-audit scan ...`, `custodian run ...`), the two
alternating, with AWS_ENDPOINT_URL pointing at moto. Wall time is measured around the process and
client CPU is the child's user+system time (`RUSAGE_CHILDREN`); the moto server's CPU is not
counted for either tool. Medians over the repeats are printed as a Markdown table, and each tool's
answers are compared so that both measure the same result.

Cloud Custodian must be installed in its own virtualenv:

    python3 -m venv benchmarks/.work/c7n-venv && benchmarks/.work/c7n-venv/bin/pip install c7n
    .venv/bin/python benchmarks/aws_vs_custodian.py [--sizes 500 2000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import boto3

ROOT = Path(__file__).resolve().parents[1]
WORK = ROOT / "benchmarks" / ".work" / "aws"
GPU_AUDIT = ROOT / ".venv" / "bin" / "gpu-audit"
MOTO = ROOT / ".venv" / "bin" / "moto_server"
CUSTODIAN = ROOT / "benchmarks" / ".work" / "c7n-venv" / "bin" / "custodian"
REGIONS = ("us-east-1", "us-west-2", "eu-west-1", "ap-northeast-1")
GPU_TYPES = ("g4dn.xlarge", "g5.xlarge", "g6.xlarge", "p3.2xlarge", "p4d.24xlarge")
GPU_REGEX = r"^(p[0-9]|g[0-9]|gr[0-9])"
HOURS_OF_DATA = 6  # datapoints per instance, one an hour

GPU_AUDIT_RULES = {
    "owner": """
  - id: owner-tag
    severity: high
    targets: [instance]
    where: {state: running, capacity: on-demand}
    require: {tags.owner: {present: true}}
""",
    "idle": """
  - id: idle-gpu
    severity: high
    targets: [instance]
    where: {state: running}
    require: {utilization.gpu_p95: {gte: 10}}
""",
}

CUSTODIAN_POLICY = {
    "owner": f"""
  - name: owner
    resource: aws.ec2
    filters:
      - "State.Name": running
      - {{type: value, key: InstanceType, op: regex, value: "{GPU_REGEX}.*"}}
      - {{type: value, key: InstanceLifecycle, value: absent}}
      - "tag:owner": absent
""",
    "idle": f"""
  - name: idle
    resource: aws.ec2
    filters:
      - "State.Name": running
      - {{type: value, key: InstanceType, op: regex, value: "{GPU_REGEX}.*"}}
      - type: metrics
        namespace: CWAgent
        name: nvidia_smi_utilization_gpu
        statistics: Maximum
        days: 1
        value: 10
        op: less-than
""",
}

# What each benchmark row runs: both checks in one run of each tool, or the idle check alone.
CHECKS = {"both": ("owner", "idle"), "owner": ("owner",), "idle": ("idle",)}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Moto:
    """A moto server in its own process, so that its CPU is never charged to a tool."""

    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process = subprocess.Popen(
            [str(MOTO), "-H", "127.0.0.1", "-p", str(self.port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for _ in range(100):
            try:
                urllib.request.urlopen(f"{self.url}/moto-api/", timeout=1).close()
                return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("moto server did not start")

    def reset(self) -> None:
        request = urllib.request.Request(f"{self.url}/moto-api/reset", method="POST")
        urllib.request.urlopen(request, timeout=30).close()

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


def environment(moto: Moto, home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(
        AWS_ENDPOINT_URL=moto.url,
        AWS_ACCESS_KEY_ID="AKIABENCHMARK0000001",
        AWS_SECRET_ACCESS_KEY="benchmark-secret",
        AWS_DEFAULT_REGION="us-east-1",
        AWS_EC2_METADATA_DISABLED="true",
        AWS_CONFIG_FILE=str(home / "aws-config"),
        AWS_SHARED_CREDENTIALS_FILE=str(home / "aws-config"),
        HOME=str(home),
    )
    (home / "aws-config").write_text("")
    return env


def build_fleet(size: int, seed: int = 7) -> dict[str, int]:
    """`size` instances spread evenly over REGIONS; returns the expected answer of each check."""
    rng = random.Random(seed)
    now = datetime.now(UTC)
    expected = {"owner": 0, "idle": 0, "both": 0}
    per_region = size // len(REGIONS)
    for region in REGIONS:
        ec2 = boto3.client("ec2", region_name=region)
        cloudwatch = boto3.client("cloudwatch", region_name=region)
        datapoints: list[dict[str, Any]] = []
        for _ in range(per_region):
            gpu = rng.random() < 0.9
            spot = rng.random() < 0.3
            owner = rng.random() < 0.5
            idle = rng.random() < 0.3
            tags = [{"Key": "workload", "Value": rng.choice(["training", "inference"])}]
            if owner:
                tags.append({"Key": "owner", "Value": "ml-platform"})
            extra: dict[str, Any] = (
                {"InstanceMarketOptions": {"MarketType": "spot"}} if spot else {}
            )
            (instance,) = ec2.run_instances(
                ImageId="ami-12345678",
                MinCount=1,
                MaxCount=1,
                InstanceType=rng.choice(GPU_TYPES) if gpu else "m5.large",
                TagSpecifications=[{"ResourceType": "instance", "Tags": tags}],
                **extra,
            )["Instances"]
            if not gpu:
                continue
            expected["owner"] += not spot and not owner
            expected["idle"] += idle
            expected["both"] += (not spot and not owner) + idle
            for hour in range(HOURS_OF_DATA):
                value = rng.uniform(0, 5) if idle else rng.uniform(30, 95)
                datapoints.append(
                    {
                        "MetricName": "nvidia_smi_utilization_gpu",
                        "Dimensions": [{"Name": "InstanceId", "Value": instance["InstanceId"]}],
                        "Timestamp": now - timedelta(hours=hour + 1),
                        "Value": round(value, 1),
                        "Unit": "Percent",
                    }
                )
        for start in range(0, len(datapoints), 1000):
            cloudwatch.put_metric_data(
                Namespace="CWAgent", MetricData=datapoints[start : start + 1000]
            )
    return expected


def timed(command: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """Wall seconds, child CPU seconds (user + system) and stdout of one fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode not in (0, 1):
        raise RuntimeError(f"{command[0]} exited {done.returncode}: {done.stderr[-2000:]}")
    return wall, cpu, done.stdout


def run_gpu_audit(check: str, env: dict[str, str], work: Path) -> tuple[float, float, int]:
    policy = work / f"gpu-audit-{check}.yaml"
    policy.write_text("version: 1\nrules:" + "".join(GPU_AUDIT_RULES[c] for c in CHECKS[check]))
    command = [str(GPU_AUDIT), "scan", "--provider", "aws", "--policy", str(policy)]
    command += ["--format", "json", "--fail-on", "none"]
    for region in REGIONS:
        command += ["--region", region]
    wall, cpu, out = timed(command, env)
    findings = json.loads(out)["findings"]
    return wall, cpu, len(findings)


def run_custodian(check: str, env: dict[str, str], work: Path) -> tuple[float, float, int]:
    policy = work / f"custodian-{check}.yaml"
    policy.write_text("policies:" + "".join(CUSTODIAN_POLICY[c] for c in CHECKS[check]))
    output = work / "c7n-out"
    shutil.rmtree(output, ignore_errors=True)
    # A fresh cache file per run: resources are shared between policies in a run, not across runs.
    cache = work / f"c7n-{time.monotonic_ns()}.cache"
    command = [str(CUSTODIAN), "run", "-s", str(output), "--cache", str(cache)]
    for region in REGIONS:
        command += ["--region", region]
    command.append(str(policy))
    wall, cpu, _ = timed(command, env)
    matched = 0
    for found in output.rglob("resources.json"):
        matched += len(json.loads(found.read_text()))
    cache.unlink(missing_ok=True)
    return wall, cpu, matched


def measure(size: int, check: str, repeat: int, moto: Moto, env: dict[str, str]) -> dict[str, Any]:
    work = WORK / f"{size}-{check}"
    work.mkdir(parents=True, exist_ok=True)
    runs: dict[str, list[tuple[float, float, int]]] = {"gpu-audit": [], "custodian": []}
    for index in range(repeat):
        order = ["gpu-audit", "custodian"] if index % 2 == 0 else ["custodian", "gpu-audit"]
        for tool in order:
            runner = run_gpu_audit if tool == "gpu-audit" else run_custodian
            runs[tool].append(runner(check, env, work))
            print(f"  {size} {check} {tool}: {runs[tool][-1]}", file=sys.stderr)
    return {
        tool: {
            "wall": statistics.median(r[0] for r in results),
            "cpu": statistics.median(r[1] for r in results),
            "answers": sorted({r[2] for r in results}),
        }
        for tool, results in runs.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[500, 2000])
    parser.add_argument("--checks", nargs="+", default=["both", "idle"], choices=list(CHECKS))
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    for needed in (GPU_AUDIT, MOTO, CUSTODIAN):
        if not needed.exists():
            sys.exit(f"missing {needed}; see this file's docstring")
    moto = Moto()
    home = Path(tempfile.mkdtemp(prefix="gpu-audit-bench-"))
    env = environment(moto, home)
    os.environ.update({k: v for k, v in env.items() if k.startswith("AWS_")})
    rows = []
    try:
        for size in args.sizes:
            moto.reset()
            started = time.perf_counter()
            expected = build_fleet(size)
            print(f"fleet {size}: built in {time.perf_counter() - started:.1f}s", file=sys.stderr)
            for check in args.checks:
                result = measure(size, check, args.repeat, moto, env)
                rows.append((size, check, expected[check], result))
    finally:
        moto.stop()
        shutil.rmtree(home, ignore_errors=True)
    version = subprocess.run(
        [str(CUSTODIAN), "version"], capture_output=True, text=True, check=False
    ).stdout.strip()
    print(
        f"Custodian {version}; boto3 {boto3.__version__}; Python {platform.python_version()}; "
        f"{platform.machine()}, {os.cpu_count()} cores; median of {args.repeat} alternating runs.\n"
    )
    print(
        "| fleet | check | expected | gpu-audit wall | Custodian wall | wall ratio "
        "| gpu-audit CPU | Custodian CPU | CPU ratio | answers (gpu-audit / Custodian) |"
    )
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for size, check, expected, result in rows:
        ours, theirs = result["gpu-audit"], result["custodian"]
        print(
            f"| {size:,} | {check} | {expected} | {ours['wall']:.2f} s | {theirs['wall']:.2f} s "
            f"| {ours['wall'] / theirs['wall']:.2f}× | {ours['cpu']:.2f} s | {theirs['cpu']:.2f} s "
            f"| {ours['cpu'] / theirs['cpu']:.2f}× | {ours['answers']} / {theirs['answers']} |"
        )


if __name__ == "__main__":
    main()
