"""What a collector is: something that yields Resources and CoverageGaps for one provider."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Generic, TypeVar

from gpu_audit.model import CoverageGap, Resource, Scope


@dataclass(frozen=True, slots=True)
class Progress:
    """A progress tick: work items done of total, and instances found so far."""

    done: int
    total: int
    found: int


ProgressCallback = Callable[[Progress], None]
S = TypeVar("S")  # the provider's settings section


class Collector(ABC, Generic[S]):
    """Enumerates one provider's GPU capacity, read-only.

    `collect` yields a `Resource` per GPU instance (translated at this edge; no provider payload
    leaks further) and a `CoverageGap` per region/account/project it could not read. It raises
    only `CollectorError`, for a provider that cannot be scanned at all (no extra, no credentials).
    """

    name: str

    def __init__(self, settings: S, progress: ProgressCallback | None = None) -> None:
        self.settings = settings
        self.progress = progress

    @abstractmethod
    def collect(self) -> Iterator[Resource | CoverageGap]: ...

    def scope(self) -> Scope:
        """What this collector looked at (accounts/projects and regions), for report headers."""
        return Scope(command="scan", providers=(self.name,))
