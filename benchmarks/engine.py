"""Benchmark: 100,000 synthetic resources judged by the runbook pack (wall time, rate, memory).

Run with `make bench` or `.venv/bin/python benchmarks/engine.py [--resources N] [--repeat R]`.
Building the resources is not timed; enrichment (catalog look-ups, prices) and evaluation are
timed separately, and the median of the repeats is reported. Peak memory is the process's
maximum resident set size, which includes the resources themselves.
"""

from __future__ import annotations

import argparse
import gc
import random
import resource
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta

from gpu_audit.catalog.enrich import enrich
from gpu_audit.core.gcpause import paused_gc
from gpu_audit.core.resource import Capacity, DataRef, Kind, Resource, State, Utilization, Workload
from gpu_audit.policy.engine import evaluate
from gpu_audit.policy.loader import load_policy

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


def fleet(count: int, seed: int = 7) -> list[Resource]:
    rng = random.Random(seed)
    resources = []
    for index in range(count):
        provider, instance_type, region = rng.choice(TYPES)
        has_metric = rng.random() < 0.8
        resources.append(
            Resource(
                kind=Kind.INSTANCE,
                provider=provider,
                id=f"i-{index:08x}",
                account="111122223333",
                region=region,
                instance_type=instance_type,
                state=rng.choice([State.RUNNING] * 9 + [State.STOPPED]),
                capacity=rng.choice([Capacity.ON_DEMAND, Capacity.SPOT, Capacity.RESERVED]),
                tags=rng.choice(TAG_SETS),
                workload=rng.choice(list(Workload)),
                launched_at=NOW - timedelta(hours=rng.uniform(1, 24 * 60)),
                utilization=Utilization(
                    gpu_avg=rng.uniform(0, 100), gpu_p95=rng.uniform(0, 100), window_hours=24
                )
                if has_metric
                else Utilization(),
                data=DataRef(
                    uris=("s3://bucket",), regions=(rng.choice(["us-east-1", "us-west-2"]),)
                )
                if rng.random() < 0.5
                else DataRef(),
            )
        )
    return resources


def enrich_all(resources: list[Resource]) -> list[Resource]:
    """What `gpu_audit.audit.audit` does before judging, timed on its own."""
    with paused_gc():
        return [enrich(r, NOW) for r in resources]


def timed(func, *args):  # type: ignore[no-untyped-def]
    """Wall and CPU seconds of one call (CPU time is steadier on a busy machine)."""
    gc.collect()
    wall, cpu = time.perf_counter(), time.process_time()
    value = func(*args)
    return (time.perf_counter() - wall, time.process_time() - cpu), value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resources", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    policy = load_policy(None)
    resources = fleet(args.resources)
    enrich_times, eval_times = [], []
    for _ in range(args.repeat):
        seconds, enriched = timed(enrich_all, resources)
        enrich_times.append(seconds)
        seconds, result = timed(evaluate, enriched, policy, NOW)
        eval_times.append(seconds)
    checks = sum(1 for r in enriched for rule in policy.rules if r.kind in rule.info.targets)
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    enrich_wall = statistics.median(t[0] for t in enrich_times)
    enrich_cpu = statistics.median(t[1] for t in enrich_times)
    eval_wall = statistics.median(t[0] for t in eval_times)
    eval_cpu = statistics.median(t[1] for t in eval_times)
    print(
        f"python {sys.version.split()[0]}, {args.resources:,} resources, "
        f"{len(policy.rules)} rules, {checks:,} rule checks, median of {args.repeat}"
    )
    print(f"enrich:   {enrich_wall:.3f} s wall, {enrich_cpu:.3f} s CPU")
    print(
        f"evaluate: {eval_wall:.3f} s wall, {eval_cpu:.3f} s CPU "
        f"({checks / eval_wall:,.0f} rule checks/s)"
    )
    print(f"total:    {enrich_wall + eval_wall:.3f} s wall, {enrich_cpu + eval_cpu:.3f} s CPU")
    print(f"findings: {len(result.findings):,}; not evaluated: {len(result.not_evaluated):,}")
    print(f"peak RSS: {peak_mib:.0f} MiB")


if __name__ == "__main__":
    main()
