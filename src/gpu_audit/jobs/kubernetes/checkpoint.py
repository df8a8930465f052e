"""Checkpoint evidence in Kubernetes containers: a durable URI after a checkpoint or output flag
in `args`/`command`, or in a `CHECKPOINT*` / `*_CKPT*` environment variable.

The same narrow reading as SkyPilot and dstack scripts (`jobs/scripts.py`): a flag such as
`--checkpoint_dir`, `--output-dir` or `--save_dir` followed by a bucket URI. A local path is not
durable (a preempted pod loses it), so only object-store URIs count.
"""

from __future__ import annotations

import re
from typing import Any

from gpu_audit.core.yamlsrc import LineMap, is_templated
from gpu_audit.jobs.interface import JobDraft
from gpu_audit.jobs.kubernetes.workloads import Group
from gpu_audit.jobs.scripts import commands, says_checkpoint, under, written_paths

DURABLE = re.compile(r"^(?:s3|gs|gcs|az|abfss?|wasbs?|hf|oci|r2|s3a)://[^/\s]+", re.IGNORECASE)
_ENV_NAME = re.compile(r"^CHECKPOINT|_?CKPT", re.IGNORECASE)


def checkpoint_evidence(draft: JobDraft, groups: list[Group]) -> None:
    """Set `checkpoint.uri` from the first container that shows a durable checkpoint location."""
    for group in groups:
        for container in _containers(group.pod):
            found = _from_args(container) or _from_env(container)
            if found:
                uri, line, evidence = found
                draft.set("checkpoint.uri", uri, line)
                name = container.get("name")
                where = f" of container '{name}'" if isinstance(name, str) else ""
                draft.add_note(f"checkpoint location from {evidence}{where}")
                return


def _containers(pod: LineMap | None) -> list[LineMap]:
    found = pod.get("containers") if pod is not None else None
    return [c for c in found if isinstance(c, LineMap)] if isinstance(found, list) else []


def _from_args(container: LineMap) -> tuple[str, int | None, str] | None:
    for key in ("command", "args"):
        script = commands(container.get(key))  # a list is joined a line an item
        for path, evidence in written_paths(script):
            if DURABLE.match(path) and not is_templated(path) and evidence.startswith("`"):
                return path, container.line_of(key), f"{evidence} in `{key}`"
    return None


def _from_env(container: LineMap) -> tuple[str, int | None, str] | None:
    env = container.get("env")
    for item in env if isinstance(env, list) else []:
        if not isinstance(item, LineMap):
            continue
        name, value = item.get("name"), item.get("value")
        if not isinstance(name, str) or not _ENV_NAME.search(name) or not _durable(value):
            continue
        return str(value), item.line_of("value"), f"environment variable `{name}`"
    return None


def _durable(value: Any) -> bool:
    return isinstance(value, str) and not is_templated(value) and bool(DURABLE.match(value))


_TRAIN_NAME = re.compile(r"(?:^|[-_.])train(?:er|ing)?(?:$|[-_.\d])", re.IGNORECASE)


def named_training(job_name: object, groups: list[Group]) -> tuple[str, int | None] | None:
    """Training by its names and its writes: the Job or a container is named for training
    (`train-llm`, `trainer`) and a container writes checkpoints to a volume it mounts. The
    evidence in words and its line; None when either half is missing."""
    names = [str(job_name)] if isinstance(job_name, str) else []
    for group in groups:
        for container in _containers(group.pod):
            name = container.get("name")
            found = _mounted_checkpoints(container)
            if found is None:
                continue
            said = next((n for n in [*names, str(name)] if _TRAIN_NAME.search(n)), None)
            if said is not None:
                path, line = found
                return (
                    f"`{said}` named for training, writing checkpoints to the mounted {path}",
                    line,
                )
    return None


def _mounted_checkpoints(container: LineMap) -> tuple[str, int | None] | None:
    """A checkpoint path this container writes inside one of its volume mounts."""
    mounts = container.get("volumeMounts")
    paths = [
        (str(m.get("mountPath")), str(m.get("name", "")))
        for m in (mounts if isinstance(mounts, list) else [])
        if isinstance(m, LineMap) and isinstance(m.get("mountPath"), str)
    ]
    written: list[tuple[str, str, int | None]] = []
    for key in ("command", "args"):
        for path, evidence in written_paths(commands(container.get(key))):
            written.append((path, evidence, container.line_of(key)))
    env = container.get("env")
    for item in env if isinstance(env, list) else []:
        if isinstance(item, LineMap) and isinstance(item.get("value"), str):
            name = str(item.get("name", ""))
            written.append((str(item["value"]), name, item.line_of("value")))
    for mount, volume in paths:
        for path, evidence, line in written:
            if under(path, mount) and says_checkpoint(f"{evidence} {path} {mount} {volume}"):
                return path, line
    return None
