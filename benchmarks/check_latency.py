"""Wall time of `gpu-audit check` beside `yamllint` on the same 1, 30 and 1,000 generated job files.

    .venv/bin/python benchmarks/check_latency.py [--runs 15] [--sizes 1,30,1000] [--no-record]

yamllint is installed into benchmarks/.work/yamllint-venv on first use (git-ignored). Each tool is
run as its console script in a fresh process, as pre-commit runs it, the two in turn (so load on
a shared machine hits both alike); the median of the runs is reported, and the `## check
latency` section of benchmarks/README.md is rewritten with the results.

Warm: gpu-audit's cache (`$XDG_CACHE_HOME/gpu-audit`) is filled by a run before the timed ones,
as on every commit after the first. Cold: each gpu-audit run gets an empty cache, as the first
commit on a machine does (the shipped pack is known valid by its content hash, so nothing is
validated). New policy: an empty cache and `--policy` naming a copy of the shipped pack with one
comment added, as the first commit after a team edits its policy: it imports jsonschema and
validates the policy (informational: once per policy edit and machine, not on every commit).
yamllint has no cache: the same command.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
WORK = HERE / ".work"
README = HERE / "README.md"
SIZES = (1, 30, 1000)
TARGETS = {1: 1.1, 30: 0.8}  # at most this many times yamllint's time (issues 27 and 50)
CACHES = ("warm", "cold", "new policy")  # the last is informational (see the docstring)
ANALYSIS_MARKERS = ("\n### ", "\n## ")  # the hand-written subsections below the table stay
VENV_BIN = Path(sys.executable).parent

SKYPILOT = """\
name: train-{i}
num_nodes: {nodes}
resources:
  accelerators: {gpu}:{count}
  use_spot: {spot}
  infra: aws/us-east-1
  labels:
    team: team-{team}
file_mounts:
  /data: s3://bucket-{team}/train
run: torchrun train.py
"""
KUBERNETES = """\
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: job-{i}
  labels:
    team: team-{team}
spec:
  runPolicy:
    activeDeadlineSeconds: 86400
  pytorchReplicaSpecs:
    Worker:
      replicas: {nodes}
      template:
        spec:
          nodeSelector:
            cloud.google.com/gke-accelerator: nvidia-l4
          containers:
            - name: pytorch
              image: example.com/train:{i}
              resources:
                limits:
                  nvidia.com/gpu: {count}
"""
RAY = """\
cluster_name: cluster-{i}
max_workers: {nodes}
provider:
  type: aws
  region: us-west-2
available_node_types:
  head:
    node_config:
      InstanceType: m5.xlarge
  gpu:
    max_workers: {nodes}
    node_config:
      InstanceType: g5.12xlarge
head_node_type: head
"""
DSTACK = """\
type: task
name: task-{i}
nodes: {nodes}
commands:
  - python train.py
resources:
  gpu: {gpu}:{count}
spot_policy: {policy}
max_duration: 12h
"""
TEMPLATES = ((SKYPILOT, ".yaml"), (KUBERNETES, ".yaml"), (RAY, ".yaml"), (DSTACK, ".dstack.yml"))
GPUS = ("A100", "H100", "L4", "T4", "A10G")


def generate(count: int) -> list[str]:
    folder = WORK / f"jobs-{count}"
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(count):
        template, suffix = TEMPLATES[i % len(TEMPLATES)]
        text = template.format(
            i=i,
            nodes=1 + i % 4,
            gpu=GPUS[i % len(GPUS)],
            count=(1, 2, 4, 8)[i % 4],
            spot=("true", "false")[i % 2],
            policy=("spot", "on-demand", "auto")[i % 3],
            team=i % 7,
        )
        path = folder / f"job-{i:04d}{suffix}"
        path.write_text(text)
        paths.append(str(path))
    return paths


def yamllint() -> str:
    venv = WORK / "yamllint-venv"
    binary = venv / "bin" / "yamllint"
    if not binary.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "yamllint"]
        subprocess.run(pip, check=True)
    return str(binary)


def timed(command: list[str], env: dict[str, str] | None = None) -> tuple[float, int, float]:
    """Wall seconds, exit code and CPU seconds (user + system, from `wait4`) of one process."""
    started = time.perf_counter()
    process = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env
    )
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - started
    return seconds, os.waitstatus_to_exitcode(status), usage.ru_utime + usage.ru_stime


Times = tuple[float, float, float, float]  # medians: our wall, their wall, our CPU, their CPU


def alternating(ours: list[str], theirs: list[str], runs: int, cache: str) -> tuple[Times, int]:
    """Median wall and CPU times of both commands, run in turn so load on the machine hits
    both alike; `cache` other than "warm": every gpu-audit run with an empty cache (warm: the
    caller's, filled once)."""
    our_times, their_times, our_cpu, their_cpu, code = [], [], [], [], 0
    for _ in range(runs):
        with tempfile.TemporaryDirectory(prefix="gpu-audit-cold-") as folder:
            env = {**os.environ, "XDG_CACHE_HOME": folder} if cache != "warm" else None
            seconds, code, cpu = timed(ours, env)
        our_times.append(seconds)
        our_cpu.append(cpu)
        seconds, _, cpu = timed(theirs)
        their_times.append(seconds)
        their_cpu.append(cpu)
    medians = tuple(statistics.median(t) for t in (our_times, their_times, our_cpu, their_cpu))
    return medians, code  # type: ignore[return-value]


def compile_package() -> None:
    """Byte-compile gpu_audit as `pip install` does, so a PYTHONDONTWRITEBYTECODE shell running
    the editable checkout does not time the compiler (yamllint's wheel is compiled on install)."""
    source = Path(__file__).resolve().parents[1] / "src" / "gpu_audit"
    subprocess.run([str(VENV_BIN / "python"), "-m", "compileall", "-q", str(source)], check=True)


def version(command: list[str]) -> str:
    done = subprocess.run([*command, "--version"], capture_output=True, text=True)
    return (done.stdout or done.stderr).strip().splitlines()[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    parser.add_argument("--no-record", action="store_true", help="do not rewrite README.md")
    args = parser.parse_args()
    gpu_audit = str(VENV_BIN / "gpu-audit")
    lint = yamllint()
    compile_package()
    timed([gpu_audit, "check", *generate(1)])  # warm the policy-validation cache once
    edited = WORK / "team-policy.yaml"
    shipped = Path(__file__).resolve().parents[1] / "policies" / "runbook.yaml"
    edited.write_text(shipped.read_text() + "# the team's copy\n")
    rows = []
    for size in (int(n) for n in args.sizes.split(",")):
        files = generate(size)
        for cache in CACHES if size in TARGETS else ("warm",):
            # Exactly as pre-commit runs the hook: filenames, default options, stdout not a TTY.
            policy = ["--policy", str(edited)] if cache == "new policy" else []
            command = [gpu_audit, "check", *policy, *files]
            times, our_code = alternating(command, [lint, *files], args.runs, cache)
            rows.append((size, cache, times, our_code))
            ours, theirs, our_cpu, their_cpu = times
            print(
                f"{size:>5} files, {cache}: gpu-audit check {ours:.3f} s, yamllint {theirs:.3f} s"
                f" ({ours / theirs:.2f}×); CPU {our_cpu:.3f} s, {their_cpu:.3f} s"
                f" ({our_cpu / their_cpu:.2f}×)"
            )
    startup = statistics.median(timed([gpu_audit, "--version"])[0] for _ in range(args.runs))
    print(f"gpu-audit --version (startup) {startup:.3f} s")
    if not args.no_record:
        record(rows, startup, args.runs, version([lint]))


def record(rows: list[tuple[int, str, Times, int]], startup: float, runs: int, lint: str) -> None:
    lines = [
        "## check latency",
        "",
        "`benchmarks/check_latency.py`: wall time of `gpu-audit check FILES` (default options, as",
        "pre-commit runs it) and of `yamllint FILES` on the same generated job files (SkyPilot,",
        "Kubeflow PyTorchJob, Ray cluster launcher and dstack in turn), each a fresh process, the",
        f"two alternating, median of {runs} runs; CPU is the child's user + system time",
        "(`wait4`), steadier than wall time on a shared machine. gpu-audit is byte-compiled, as",
        "`pip install` does. Warm: gpu-audit's cache filled, as on every commit after the first;",
        "cold: an empty cache per run, as the first commit on a machine (the shipped pack is",
        "known valid); new policy: an empty cache and an edited copy of the pack, validated",
        "(once per edit and machine; informational).",
        "Targets: one file within 1.1× of yamllint (issue 50; 1.2× in issue 27), 30 files",
        "within 0.8×.",
        f"{lint}; Python {platform.python_version()}; {platform.machine()}, {_cores()} cores;"
        f" load average {os.getloadavg()[0]:.1f} at the end.",
        "",
        "| files | cache | gpu-audit check | yamllint | ratio | CPU, gpu-audit | CPU, yamllint |"
        " CPU ratio | target (wall) |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for size, cache, (ours, theirs, our_cpu, their_cpu), _ in rows:
        ratio = ours / theirs
        target = TARGETS.get(size) if cache != "new policy" else None
        met = "" if target is None else f"≤ {target}×: {'met' if ratio <= target else 'NOT met'}"
        lines.append(
            f"| {size:,} | {cache} | {ours:.3f} s | {theirs:.3f} s | {ratio:.2f}× "
            f"| {our_cpu:.3f} s | {their_cpu:.3f} s | {our_cpu / their_cpu:.2f}× | {met} |"
        )
    lines += ["", f"`gpu-audit --version` alone (interpreter, CLI start-up): {startup:.3f} s.", ""]
    section = "\n".join(lines)
    text = README.read_text() if README.exists() else "# Benchmarks\n"
    start = text.find("## check latency")
    if start == -1:
        text = text.rstrip("\n") + "\n\n" + section
    else:
        # The hand-written subsections (`### …`) under the table are kept across runs.
        ends = [i for i in (text.find(m, start + 1) for m in ANALYSIS_MARKERS) if i != -1]
        end = min(ends) if ends else -1
        text = text[:start] + section + ("\n" + text[end + 1 :] if end != -1 else "")
    README.write_text(text)
    print(f"recorded in {README}")


def _cores() -> int:
    import os

    return os.cpu_count() or 1


if __name__ == "__main__":
    main()
