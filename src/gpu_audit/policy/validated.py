"""Which policy texts skip the JSON Schema: the shipped packs, and those this machine validated.

Validating a policy imports jsonschema (~75 ms) and walks the schema, on every commit the hook
sees. A policy's validation key is a BLAKE2b digest of the schema and the policy's text, so an
edited policy or a changed schema is validated again, and no crafted file can match a validated
one (a CRC could be forged). Two places know a key as valid:

- `SHIPPED`, the keys of the packs in `policies/` as this version ships them, validated by
  `tests/policy/test_validated.py` (which fails while a shipped pack's key is missing here or a
  key here names no shipped pack): the first commit on a machine is as fast as the next, and
  a shipped pack's YAML is not scanned for depth before it is parsed (the test scans it);
- a marker file per key in `$XDG_CACHE_HOME/gpu-audit/policy-ok-VERSION/`, written after a
  policy passes. A forged marker can only skip the schema check of a file that is still parsed,
  checked for unknown keys and compiled; what the rules say is never cached.
"""

from __future__ import annotations

import os

from gpu_audit import __version__

try:  # the standard library's own BLAKE2, ~0.3 ms to import: `hashlib` loads OpenSSL (~6 ms)
    from _blake2 import blake2b
except ImportError:  # a Python built without it
    from hashlib import blake2b

_HERE = os.path.dirname(os.path.abspath(__file__))

# Written by `python -m tests.policy.test_validated`, never by hand (tests/policy/ holds it).
SHIPPED = frozenset(
    {
        "9c09a72f0f60a9c4c887cea1e502f5bd01a55e88",  # policies/runbook.yaml
    }
)


def validation_key(text: str) -> str:
    """The digest of the schema and `text` (BLAKE2b: `_blake2` where the build has it)."""
    digest = blake2b(_schema_bytes(), digest_size=20)
    digest.update(b"\x00" + text.encode("utf-8"))
    return digest.hexdigest()


def _schema_bytes() -> bytes:
    with open(os.path.join(_HERE, "schema.json"), "rb") as handle:
        return handle.read()


def known_valid(key: str) -> bool:
    """True when the policy text's key is a shipped pack's or one this machine validated before (it
    skips the JSON Schema)."""
    return key in SHIPPED or os.path.exists(os.path.join(_cache_dir(), key))


def remember_valid(key: str) -> None:
    """Remember that the policy text with `key` validated (an empty file in the cache directory); a
    read-only home is not an error."""
    try:
        os.makedirs(_cache_dir(), exist_ok=True)
        with open(os.path.join(_cache_dir(), key), "w"):
            pass
    except OSError:
        pass  # a read-only home only costs the next run a schema validation


def _cache_dir() -> str:
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(root, "gpu-audit", f"policy-ok-{__version__}")
