"""Pause the cyclic garbage collector around a batch that allocates many small acyclic objects."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

_ONE_SHOT = False  # set by the `gpu-audit` program: the process ends with its command


def one_shot() -> None:
    """Say that this process is one command (the `gpu-audit` program, not a library caller):
    what a paused batch leaves is then frozen, kept out of every later collection.

    Re-enabled, the collector would otherwise walk all of it at its next passes, finding no
    cycles: ~0.5 s of a 100k-resource scan. Frozen objects are still freed when their last
    reference goes; cyclic garbage alive at a freeze would stay to the end of the process, which
    is why a library caller's process (a test run, a service) is never frozen.
    """
    global _ONE_SHOT
    _ONE_SHOT = True


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
            if _ONE_SHOT:
                gc.freeze()
            gc.enable()
