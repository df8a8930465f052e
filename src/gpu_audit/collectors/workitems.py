"""Work items, the universe and shards: which machine scans which (account × region).

The interface a provider implements
-----------------------------------
A work item is one unit a collector scans, named by a stable key:

    aws:ACCOUNT:REGION     (aws:ACCOUNT when no regions are configured: the account's enabled
                            regions are then discovered by the shard that holds the account)
    gcp:PROJECT            (aggregatedList is project-wide)
    azure:SUBSCRIPTION
    kubernetes:CONTEXT

A provider plugs in with two things, both in its own folder:

1. A function `work_items(settings, ...) -> list[str]` (its `universe.py`) returning the keys of
   every item the settings name, or that discovery finds (Organizations `ListAccounts` with a
   role name template; the GCP projects the credential can list; the kubeconfig's contexts).
2. Its collector honours `Collector.shard`: before scanning an item it asks `shard.holds(key)`,
   scans only those, and after `collect` answers `work_items()` with the *whole* universe it saw
   (not only its shard's), so every shard report records the same universe digest.

Assignment: rendezvous (highest-random-weight) hashing. Each (shard, key) pair gets a weight from
SHA-256, and a key goes to the shard with the highest weight. Like `sha256(key) mod N`, an item
stays on its shard whatever other items are added or removed (its weights do not depend on them);
unlike it, going from N to N+1 shards moves only the ~1/(N+1) of items that the new shard wins,
where mod N moves nearly all. CloudQuery's sorted-chunk `--shard` moves items between shards when
one account is added. The cost, N hashes per key, is ~50 ms for 8,000 keys over 64 shards.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable, Mapping
from functools import lru_cache

from gpu_audit.core.frozen import record
from gpu_audit.errors import ConfigError

# The 0-based index variables of the engines `--shard auto/N` rides on.
INDEX_VARIABLES = ("JOB_COMPLETION_INDEX", "AWS_BATCH_JOB_ARRAY_INDEX")
_SALT = b"gpu-audit-shard-v1\0"
_SPEC = re.compile(r"^\s*(\d+|auto)\s*/\s*(\d+)\s*$")
MAX_SHARDS = 100_000  # a Kubernetes Indexed Job's completions limit


@record
class Shard:
    """Shard `index` (1-based) of `count`."""

    index: int
    count: int

    def holds(self, key: str) -> bool:
        """True when this shard scans the work item `key` (always for one shard)."""
        return self.count == 1 or shard_of(key, self.count) == self.index

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


@lru_cache(maxsize=1 << 17)  # a shard's scan asks for each key, then its stamp lists them
def shard_of(key: str, count: int) -> int:
    """The 1-based shard of `key` among `count` (rendezvous hashing; see the module docstring)."""
    encoded = key.encode("utf-8")
    best, chosen = -1, 1
    for index in range(1, count + 1):
        digest = hashlib.sha256(_SALT + index.to_bytes(4, "big") + encoded).digest()
        weight = int.from_bytes(digest[:8], "big")
        if weight > best:
            best, chosen = weight, index
    return chosen


def split(keys: Iterable[str], count: int) -> dict[int, list[str]]:
    """Every shard's keys, sorted (a shard with none is present and empty)."""
    shards: dict[int, list[str]] = {index: [] for index in range(1, count + 1)}
    for key in sorted(set(keys)):
        shards[shard_of(key, count)].append(key)
    return shards


def universe_digest(keys: Iterable[str]) -> str:
    """SHA-256 of the sorted, distinct keys, one a line: the same universe, the same digest."""
    text = "\n".join(sorted(set(keys)))
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def parse_shard(text: str, environ: Mapping[str, str] | None = None) -> Shard:
    """`K/N` (1-based), or `auto/N` with the 0-based index from exactly one index variable."""
    found = _SPEC.match(text)
    if not found:
        raise ConfigError(f"--shard {text}: expected K/N (1-based, e.g. 2/8) or auto/N")
    count = int(found.group(2))
    if not 1 <= count <= MAX_SHARDS:
        raise ConfigError(f"--shard {text}: N must be between 1 and {MAX_SHARDS}")
    if found.group(1) != "auto":
        index = int(found.group(1))
    else:
        index = _auto_index(text, os.environ if environ is None else environ)
    if not 1 <= index <= count:
        raise ConfigError(f"--shard {text}: shard {index} is not between 1 and {count}")
    return Shard(index, count)


def _auto_index(text: str, environ: Mapping[str, str]) -> int:
    given = {name: environ[name] for name in INDEX_VARIABLES if environ.get(name, "").strip()}
    if len(given) != 1:
        names = " or ".join(INDEX_VARIABLES)
        state = "neither is set" if not given else "both are set"
        raise ConfigError(f"--shard {text}: needs exactly one of {names}; {state}")
    ((name, value),) = given.items()
    if not value.strip().isdigit():
        raise ConfigError(f"--shard {text}: {name}={value!r} is not a 0-based index")
    return int(value) + 1
