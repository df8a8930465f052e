"""Stable identity: a finding's fingerprint is its rule id plus its resource's stable id."""

from __future__ import annotations

import os
from collections.abc import Iterable
from functools import lru_cache

from gpu_audit.core.resource import Kind, Resource
from gpu_audit.core.results import Finding

try:  # the builtin module: `import hashlib` would load OpenSSL, ~3 ms of every commit's check
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - an interpreter built without it
    from hashlib import blake2b


@lru_cache(maxsize=4096)
def repository_root(directory: str) -> str | None:
    """The nearest directory holding `.git` from `directory` upwards, or None."""
    here = directory
    while True:
        if os.path.exists(os.path.join(here, ".git")):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def job_path(path: str) -> str:
    """A job file's path relative to its repository root (`/`-separated); else as given."""
    absolute = os.path.abspath(path)
    root = repository_root(os.path.dirname(absolute))
    if root is None:
        return path.replace(os.sep, "/")
    return os.path.relpath(absolute, root).replace(os.sep, "/")


def resource_key(resource: Resource) -> str:
    """The resource's stable id: `provider:id` (instance id, ARN, self link), or for a job
    `provider:repo/relative/path#document:name`, which survives re-tags and reordered files."""
    if resource.kind is Kind.JOB and resource.source.path:
        document = resource.source.document if resource.source.document is not None else 0
        name = resource.name or resource.id
        return f"{resource.provider}:{job_path(resource.source.path)}#{document}:{name}"
    return f"{resource.provider}:{resource.id}"


def fingerprint_of(rule_id: str, key: str) -> str:
    """24 hex digits of BLAKE2b over `rule_id NUL resource key`."""
    digest = blake2b(f"{rule_id}\0{key}".encode(), digest_size=12)
    return digest.hexdigest()


def fingerprints(findings: Iterable[Finding]) -> tuple[str, ...]:
    """Fingerprints parallel to `findings`; a resource's key is worked out once."""
    keys: dict[int, str] = {}
    out = []
    for finding in findings:
        resource = finding.resource
        key = keys.get(id(resource))
        if key is None:
            key = keys[id(resource)] = resource_key(resource)
        out.append(fingerprint_of(finding.rule_id, key))
    return tuple(out)
