"""Each finding's resource as its index in the report's `resources` (JSON report version 3)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import chain

from gpu_audit.core.resource import Resource


class ResourceIndex:
    """`index(resource)` is the resource's position in `resources`, by identity. Findings come
    in resource order, so a cursor walking forward finds them all without a table (a
    million-entry table costs ~100 MB); the table is built once, when the order breaks. A
    resource that is not in `resources` (a hand-built result) is added after them, so every
    index points at its resource: `all()` yields them too, read after the findings."""

    def __init__(self, resources: Sequence[Resource]) -> None:
        self.resources = resources
        self.cursor = 0
        self.table: dict[int, int] | None = None
        self.added: list[Resource] = []

    def __call__(self, resource: Resource) -> int:
        resources, cursor = self.resources, self.cursor
        if self.table is None:  # in order so far: walk on (over resources without findings)
            for at in range(cursor, len(resources)):
                if resources[at] is resource:
                    self.cursor = at
                    return at
            self.table = {id(r): at for at, r in enumerate(resources)}  # out of order: once
        at = self.table.get(id(resource), -1)
        if at < 0:
            at = self.table[id(resource)] = len(resources) + len(self.added)
            self.added.append(resource)  # kept alive with its id in the table
        elif at < len(resources):
            self.cursor = at
        return at

    def all(self) -> Iterator[Resource]:
        """The resources, then those added: read after every index was asked for."""
        return chain(self.resources, self.added)
