"""A run never replaces what it reads: the one check every output path passes (`refuse_input`).

Kept apart from `core.writer` (tempfile, signals) so that a command checks its outputs before any
work at no import cost; a new command that writes a file calls it with everything it reads.
"""

from __future__ import annotations

import os
from collections.abc import Collection

from gpu_audit.core.yamlguard import printable
from gpu_audit.errors import ConfigError


def refuse_input(path: str, inputs: Collection[str] = (), folders: Collection[str] = ()) -> None:
    """Refuse to write `path` when it is something this run read: one `ConfigError`,
    `PATH: cannot write report: it is an input of this run (INPUT)`.

    `inputs` are the files the run read (job files, policies and what they extend, settings,
    inventories, baselines, price files, shard reports, a history database); `path` is one of
    them by any name: a symlink, a hard link, `./x`. `folders` are directories read as a whole
    (a git directory): any path inside one is refused. Paths that do not exist are compared by
    name. Pure apart from `stat`: call it before the work starts to fail fast (as `check`,
    `scan`, `merge`, `estimate` and `diff` do); `core.writer.write_atomic` calls it again when
    it writes, with the inputs it is given.
    """
    target = os.path.realpath(path)
    for source in inputs:
        try:
            same = os.path.samefile(source, path)
        except OSError:
            same = os.path.realpath(source) == target
        if same:
            shown = printable(source, 200)
            raise ConfigError(f"{path}: cannot write report: it is an input of this run ({shown})")
    for folder in folders:
        inside = os.path.realpath(folder)
        if target == inside or target.startswith(inside.rstrip(os.sep) + os.sep):
            raise ConfigError(
                f"{path}: cannot write report: it is inside {printable(folder, 200)}, "
                "an input of this run"
            )
