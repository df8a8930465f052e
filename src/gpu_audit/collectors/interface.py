"""What a collector is: something that yields Resources and CoverageGaps for one provider."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

from gpu_audit.collectors.workitems import Shard
from gpu_audit.core.frozen import record
from gpu_audit.core.resource import Resource
from gpu_audit.core.results import CoverageGap, Scope
from gpu_audit.core.runs import Sweep
from gpu_audit.errors import CollectorError


@record
class Progress:
    """A progress tick: work items done of total, instances found so far, what is under way."""

    done: int
    total: int
    found: int
    phase: str = ""  # e.g. "resolving accounts", shown before any work item is known


ProgressCallback = Callable[[Progress], None]
S = TypeVar("S")  # the provider's settings section


class ProviderUnavailable(CollectorError):
    """The provider cannot be read at all (no credentials): one coverage gap, the rest goes on."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class Collector(ABC, Generic[S]):
    """Enumerates one provider's GPU capacity, read-only.

    `collect` yields a `Resource` per GPU instance (translated at this edge; no provider payload
    leaks further), a `CoverageGap` per region/account/project it could not read, and a `Sweep`
    per finished training job or tuning sweep it read back (`--since`). It raises
    `ProviderUnavailable` when nothing can be read (no credentials): the scan records one gap for
    the provider and judges everything else. A bad setting is a `ConfigError` (exit 2).
    """

    name: str

    # Set before `collect` by `scan --shard K/N`: scan only the work items it holds (workitems.py).
    shard: Shard | None = None

    def __init__(self, settings: S, progress: ProgressCallback | None = None) -> None:
        self.settings = settings
        self.progress = progress

    def holds(self, key: str) -> bool:
        """Whether this run scans the work item `key` (always, unless sharded)."""
        return self.shard is None or self.shard.holds(key)

    def work_items(self) -> tuple[str, ...]:
        """After `collect`: the keys of the whole universe it saw, every shard's, sorted."""
        return ()

    @abstractmethod
    def collect(self) -> Iterator[Resource | CoverageGap | Sweep]:
        """Yield the provider's Resources, CoverageGaps and Sweeps (see the class docstring);
        ProviderUnavailable when nothing can be read."""

    def scope(self) -> Scope:
        """What this collector looked at (accounts/projects and regions), for report headers."""
        return Scope(command="scan", providers=(self.name,))
