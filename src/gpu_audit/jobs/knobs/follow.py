"""Following what a job's command names: a script or config by a relative path, resolved against
the job file's folder (or its `workdir` inside it), or a ConfigMap's key in the same file.

Nothing outside the job file's folder is read: an absolute path, a `..` step or a symlink that
leads out is "not followed" (said in the job's note), never an error; so is a file that is missing,
too large or not text. A ConfigMap key is matched by the file name a command names (the mount path
is the container's: `/etc/config/ds.json` reads the ConfigMap key `ds.json`).
"""

from __future__ import annotations

import contextvars
import os
import types
from collections.abc import Callable, Mapping

from gpu_audit.core.frozen import record
from gpu_audit.core.lazyre import lazy
from gpu_audit.core.yamlsrc import Document, LineMap, read_text
from gpu_audit.errors import InputError

# a path a command names: ends in a config or script extension
_PATH = lazy(r"""(?:^|[\s=,'"\[])([\w./${}-]+\.(?:ya?ml|json|py|sh))\b""", needs=(".",))
_HYDRA = lazy(
    r"--config-path[= ]\s*([\w./-]+)\s+--config-name[= ]\s*([\w.-]+)", needs=("--config-path",)
)
MAX_FOLLOWED = 8  # files followed per job: a command naming more is read up to this many


@record
class Named:
    """A file the command names: as written, its line in the job file."""

    written: str
    line: int | None


@record
class Embedded:
    """A ConfigMap data entry: its text and the line of its first content line."""

    text: str
    first: int
    where: str  # `path:line` of the key, for the note


# ConfigMap entries of the file being loaded (jobs/registry.py sets them per file)
_NONE: Mapping[str, Embedded] = types.MappingProxyType({})
CONFIG_MAPS: contextvars.ContextVar[Mapping[str, Embedded]] = contextvars.ContextVar(
    "gpu_audit_config_maps", default=_NONE
)


def named_paths(text: str, line_of: Callable[[int], int | None]) -> list[Named]:
    """Every config or script path the text names, in order, once each."""
    found: list[Named] = []
    seen: set[str] = set()
    hydra = _HYDRA.search(text)
    if hydra:
        name = hydra.group(2)
        name = name if name.endswith((".yaml", ".yml")) else f"{name}.yaml"
        written = f"{hydra.group(1).rstrip('/')}/{name}"
        found.append(Named(written, line_of(hydra.start())))
        seen.add(written)
    for match in _PATH.finditer(text):
        written = match.group(1)
        if written not in seen:
            seen.add(written)
            found.append(Named(written, line_of(match.start(1))))
    return found


def resolve(written: str, job_path: str, workdir: str | None = None) -> tuple[str | None, str]:
    """(the path to read, "") or (None, why it is not followed)."""
    if "$" in written or "{" in written:
        return None, f"`{written}` is templated"
    if os.path.isabs(written) or written.startswith("~"):
        return None, f"`{written}` is an absolute path"
    if ".." in written.replace("\\", "/").split("/"):
        return None, f"`{written}` leads out of the job's folder"
    folder = os.path.dirname(job_path) or "."
    bases = [os.path.join(folder, workdir)] if workdir else []
    bases.append(folder)
    root = os.path.realpath(folder)
    for base in bases:
        candidate = os.path.normpath(os.path.join(base, written))
        real = os.path.realpath(candidate)
        if real != root and not real.startswith(root + os.sep):
            return None, f"`{written}` leads out of the job's folder"
        if os.path.isfile(candidate):
            return candidate, ""
    return None, f"`{written}` is not in the job's folder"


def read_named(path: str) -> str | None:
    """The text of a file a command names, None when it cannot be read (a followed file is
    optional)."""
    try:
        return read_text(path)
    except InputError:
        return None


def config_maps(documents: list[Document]) -> dict[str, Embedded]:
    """The data entries of every ConfigMap in a file's documents, by key."""
    found: dict[str, Embedded] = {}
    for document in documents:
        data = document.data
        if not isinstance(data, LineMap) or data.get("kind") != "ConfigMap":
            continue
        entries = data.get("data")
        if not isinstance(entries, LineMap):
            continue
        for key, value in entries.items():
            if isinstance(key, str) and isinstance(value, str):
                line = entries.line_of(key)
                found[key] = Embedded(value, line + 1, f"ConfigMap key `{key}` (line {line})")
    return found
