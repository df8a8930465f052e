"""The digest of a run's policies: every policy file it read (`extends:` included), by content."""

from __future__ import annotations

import hashlib

from gpu_audit.policy.loader import Policy


def policy_digest(policy: Policy) -> str:
    """SHA-256 over the files' contents in load order: the same rules and waivers on every
    machine, wherever the files (or the installed pack) live."""
    digest = hashlib.sha256()
    for path in policy.files:
        with open(path, "rb") as handle:
            content = handle.read()
        digest.update(len(content).to_bytes(8, "big"))
        digest.update(content)
    return "sha256:" + digest.hexdigest()
