"""SkyPilot `file_mounts` and `volumes`: the buckets a task reads, and where it checkpoints.

A bucket mount (or volume) is the checkpoint location when its mount point says so
(`/checkpoints`, `~/ckpt`), when the bucket's name or an environment variable naming it does
(`CHECKPOINT_DIR: /mnt/out`), or when the run script writes to it with a framework flag
(`--output_dir /mnt/out/run1`) or a copy. The note names the evidence used.
"""

from __future__ import annotations

import re
from typing import Any

from gpu_audit.core.lazyre import lazy
from gpu_audit.core.yamlsrc import LineMap, is_templated
from gpu_audit.jobs.interface import JobDraft
from gpu_audit.jobs.scripts import commands, says_checkpoint, under, written_paths

_STORE_SCHEMES = {"s3": "s3", "gcs": "gs", "r2": "r2", "azure": "https", "ibm": "cos", "oci": "oci"}
_VAR = lazy(r"\$\{?([A-Za-z_]\w*)\}?", needs=("$",))


def set_mounts(draft: JobDraft, data: LineMap) -> None:
    """Set the data URIs and the checkpoint from `file_mounts` and `volumes`, using what the run
    commands write to as evidence."""
    uris: list[str] = []
    uri_line = None
    found_envs = data.get("envs")
    envs: dict[Any, Any] = found_envs if isinstance(found_envs, dict) else {}
    script = _expand(commands(data.get("run")), envs)
    writes = written_paths(script)
    mounts = data.get("file_mounts")
    found: tuple[str, int, str] | None = None  # uri, line, evidence
    if isinstance(mounts, LineMap):
        for target, value in mounts.items():
            line = mounts.line_of(target)
            uri = _mount_uri(value)
            evidence = _evidence(str(target), uri, value, envs, writes)
            if evidence and isinstance(value, dict):
                if uri is None:  # a checkpoint bucket we cannot name: missing, located
                    draft.put("checkpoint.uri", None, line)
                elif found is None:
                    found = (uri, line, evidence)
                if says_checkpoint(str(target)):
                    continue  # a checkpoint mount point holds no input data
            if uri is not None:
                uris.append(uri)
                uri_line = uri_line or line
    volumes = data.get("volumes")
    if found is None and isinstance(volumes, LineMap):
        for target, name in volumes.items():
            if not isinstance(name, str):
                continue
            evidence = _evidence(str(target), name, None, envs, writes)
            if evidence:
                found = (f"volume:{name}", volumes.line_of(target), evidence)
                break
    if found is not None:
        draft.set("checkpoint.uri", found[0], found[1])
        draft.add_note(f"checkpoint location from {found[2]}")
    if uris:
        draft.set("data.uris", tuple(uris), uri_line)


def _evidence(
    target: str, uri: str | None, value: Any, envs: dict[Any, Any], writes: list[tuple[str, str]]
) -> str | None:
    """Why this mount holds checkpoints, or None."""
    if says_checkpoint(target):
        return f"the mount point {target}"
    name = value.get("name") if isinstance(value, dict) else None
    if says_checkpoint(str(name or "")) or (uri and says_checkpoint(uri)):
        return f"the bucket name {name or uri}"
    for key, env_value in envs.items():
        if says_checkpoint(str(key)) and isinstance(env_value, str) and under(env_value, target):
            return f"the variable {key}"
    for path, how in writes:
        if under(path, target):
            return f"{how} writing to {target}"
    return None


def _expand(script: str, envs: dict[Any, Any]) -> str:
    """`$VAR` and `${VAR}` replaced by the task's `envs` values (others left as written)."""

    def value(match: re.Match[str]) -> str:
        found = envs.get(match.group(1))
        return (
            str(found)
            if isinstance(found, str | int) and not is_templated(found)
            else match.group(0)
        )

    return _VAR.sub(value, script)


def _mount_uri(value: Any) -> str | None:
    if isinstance(value, str):
        return value if "://" in value and not is_templated(value) else None
    if not isinstance(value, dict):
        return None
    source = value.get("source")
    if isinstance(source, str) and "://" in source and not is_templated(source):
        return source
    name, store = value.get("name"), value.get("store")
    if not isinstance(name, str) or is_templated(name) or name.startswith("$"):
        return None
    scheme = _STORE_SCHEMES.get(str(store).lower()) if store else None
    return f"{scheme}://{name}" if scheme else f"bucket:{name}"
