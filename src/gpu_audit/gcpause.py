"""Pause the cyclic garbage collector around a batch that allocates many small acyclic objects."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector while a batch allocates many small acyclic objects.

    Judging 100k resources allocates hundreds of thousands of findings; the collector would walk
    them again and again (~15% of the time) and find no cycles to free.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
