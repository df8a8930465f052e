"""Benchmark: an organisation scan through the latency proxy: wall, calls and client CPU per call.

A moto server and `../shared/perf/proxy.py` (a fixed delay per API call) run as their own processes
on 127.0.0.1. An AWS Organization of `--accounts` accounts (the management account and members
reached by AssumeRole into the `audit` role) is built in moto, with GPU instances in some
(account, region) pairs. Then `gpu-audit scan --provider aws --org-role audit` runs as a fresh
process against the proxy: once forwarded with recording on, then `--repeat` times replayed (moto's
own service time drops out). Wall time is measured around the process, client CPU is the child's
user+system time (`RUSAGE_CHILDREN`), API calls are the proxy's count; the replayed run must find
what the forwarded run found.

    .venv/bin/python benchmarks/org_scan.py [--accounts 20] [--delay-ms 50] [--workers 32]
        [--repeat 3] [--profile out.prof]

The ideal is `calls × delay ÷ workers`; the target is wall within 2× of it and client CPU at
most 3 ms per call.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import boto3

ROOT = Path(__file__).resolve().parents[1]
PROXY = ROOT.parent / "shared" / "perf" / "proxy.py"
GPU_AUDIT = ROOT / ".venv" / "bin" / "gpu-audit"
MOTO = ROOT / ".venv" / "bin" / "moto_server"
REGIONS = ("us-east-1", "us-west-2", "eu-west-1", "ap-northeast-1")
CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "AKIAORGBENCH00000001",
    "AWS_SECRET_ACCESS_KEY": "org-bench-secret",
    "AWS_DEFAULT_REGION": "us-east-1",
}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_for(url: str) -> None:
    for _ in range(200):
        try:
            urllib.request.urlopen(url, timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"{url} did not come up")


def control(proxy: str, path: str) -> Any:
    request = urllib.request.Request(f"{proxy}/__proxy__/{path}", method="POST")
    with urllib.request.urlopen(request, timeout=30) as answer:
        return json.loads(answer.read() or b"{}")


def stats(proxy: str) -> dict[str, Any]:
    with urllib.request.urlopen(f"{proxy}/__proxy__/stats", timeout=30) as answer:
        return dict(json.loads(answer.read()))


def build(endpoint: str, accounts: int) -> None:
    session = boto3.Session(aws_access_key_id=CREDENTIALS["AWS_ACCESS_KEY_ID"],
                            aws_secret_access_key=CREDENTIALS["AWS_SECRET_ACCESS_KEY"])  # fmt: skip
    org = session.client("organizations", "us-east-1", endpoint_url=endpoint)
    org.create_organization(FeatureSet="ALL")
    sts = session.client("sts", "us-east-1", endpoint_url=endpoint)
    for n in range(accounts - 1):
        status = org.create_account(AccountName=f"team-{n}", Email=f"team-{n}@example.com")
        member = status["CreateAccountStatus"]["AccountId"]
        if n % 3:
            continue  # most accounts hold no GPU
        role = f"arn:aws:iam::{member}:role/audit"
        creds = sts.assume_role(RoleArn=role, RoleSessionName="build")["Credentials"]
        ec2 = boto3.client(
            "ec2",
            REGIONS[n % len(REGIONS)],
            endpoint_url=endpoint,
            aws_access_key_id=creds["AccessKeyId"],
            aws_secret_access_key=creds["SecretAccessKey"],
            aws_session_token=creds["SessionToken"],
        )
        for kind in ("p4d.24xlarge", "g5.xlarge", "t3.micro"):
            ec2.run_instances(ImageId="ami-12345678", MinCount=2, MaxCount=2, InstanceType=kind)


def scan(proxy: str, workers: int, out: Path, profile: str | None) -> tuple[float, float]:
    env = {**os.environ, **CREDENTIALS, "AWS_ENDPOINT_URL": proxy, "AWS_EC2_METADATA_DISABLED": "1"}
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "GPU_AUDIT_RUN_ID"):
        env.pop(name, None)
    # Bytecode as an installed tool has it (pip compiles at install): with PYTHONDONTWRITEBYTECODE
    # in the environment every run compiled gpu-audit's ~80 modules from source, ~50 ms of CPU.
    # The forwarded run fills this cache; the replayed runs read it.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(out.parent / "pycache")
    args = ["scan", "--provider", "aws", "--org-role", "audit", "--concurrency", str(workers)]
    args += [a for region in REGIONS for a in ("--region", region)]
    args += ["--format", "json", "-o", str(out), "--fail-on", "none"]
    command = [str(GPU_AUDIT), *args]
    if profile:
        command = [sys.executable, __file__, "--profile-child", profile, *args]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(command, env=env, check=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def found(path: Path) -> list[tuple[str, str]]:
    report = json.loads(path.read_text())
    assert not report["coverage_gaps"], report["coverage_gaps"]
    resources = report["resources"]  # report version 3: a finding names its resource by index
    return sorted((f["rule_id"], resources[f["resource"]]["id"]) for f in report["findings"])


def profile_child(path: str, args: list[str]) -> None:
    """Run `gpu-audit ARGS` here with every thread under cProfile (the pool's workers too)."""
    import concurrent.futures.thread as pool
    import cProfile
    import pstats

    from gpu_audit.cli import main as cli

    profiles = [cProfile.Profile()]
    worker = pool._worker  # type: ignore[attr-defined]

    def profiled(*a: Any, **k: Any) -> None:
        profiles.append(cProfile.Profile())
        profiles[-1].runcall(worker, *a, **k)

    pool._worker = profiled  # type: ignore[attr-defined]
    with contextlib.suppress(SystemExit):  # the CLI exits with the scan's code
        profiles[0].runcall(cli, args)
    pstats.Stats(*profiles).dump_stats(path)


def main() -> None:
    if sys.argv[1:2] == ["--profile-child"]:
        return profile_child(sys.argv[2], sys.argv[3:])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--accounts", type=int, default=20)
    parser.add_argument("--delay-ms", type=float, default=50.0)
    parser.add_argument("--workers", type=int, default=32)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--profile", help="also write a cProfile of one replayed scan here")
    options = parser.parse_args()
    moto_port, proxy_port = free_port(), free_port()
    moto = subprocess.Popen([str(MOTO), "-H", "127.0.0.1", "-p", str(moto_port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    delay = f"{options.delay_ms}"
    proxy_cmd = [sys.executable, str(PROXY), "--port", str(proxy_port),
                 "--upstream", f"127.0.0.1:{moto_port}", "--delay-ms", delay]  # fmt: skip
    proxy_process = subprocess.Popen(proxy_cmd, stdout=subprocess.DEVNULL)
    endpoint, proxy = f"http://127.0.0.1:{moto_port}", f"http://127.0.0.1:{proxy_port}"
    try:
        wait_for(f"{endpoint}/moto-api/")
        wait_for(f"{proxy}/__proxy__/stats")
        build(endpoint, options.accounts)
        with tempfile.TemporaryDirectory() as work:
            control(proxy, "mode?m=record")
            control(proxy, "reset")
            wall, cpu = scan(proxy, options.workers, Path(work, "forwarded.json"), None)
            calls = stats(proxy)["requests"]
            expected = found(Path(work, "forwarded.json"))
            print(f"forwarded: {calls} calls, wall {wall:.2f} s, client CPU {cpu:.2f} s")
            control(proxy, "mode?m=replay")
            runs = []
            for n in range(options.repeat):
                control(proxy, "reset")
                out = Path(work, f"replayed-{n}.json")
                runs.append(scan(proxy, options.workers, out, None))
                answered = stats(proxy)
                assert found(out) == expected, "a replayed scan found something else"
                misses = sum(answered["replay_misses"].values())
                print(f"replayed: {answered['requests']} calls ({misses} misses), "
                      f"wall {runs[-1][0]:.2f} s, CPU {runs[-1][1]:.2f} s")  # fmt: skip
            if options.profile:
                scan(proxy, options.workers, Path(work, "profiled.json"), options.profile)
        report(calls, runs, options, len(expected))
    finally:
        for process in (proxy_process, moto):
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def report(calls: int, runs: list[tuple[float, float]], options: Any, findings: int) -> None:
    wall = statistics.median(w for w, _ in runs)
    cpu = statistics.median(c for _, c in runs)
    ideal = calls * options.delay_ms / 1000 / options.workers
    items = options.accounts * len(REGIONS)
    print(f"\n{options.accounts} accounts × {len(REGIONS)} regions = {items} work items, "
          f"{options.delay_ms:g} ms per call, {options.workers} workers, {findings} findings; "
          f"median of {len(runs)} replayed runs")  # fmt: skip
    print("| calls | wall | ideal | wall ÷ ideal | client CPU | CPU per call | per work item |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    print(
        f"| {calls} | {wall:.2f} s | {ideal:.2f} s | {wall / ideal:.2f}× | {cpu:.2f} s | "
        f"{cpu / calls * 1000:.1f} ms | {calls / items:.1f} calls, {wall / items * 1000:.0f} ms "
        f"wall, {cpu / items * 1000:.0f} ms CPU |"
    )


if __name__ == "__main__":
    main()
