"""What a task's run commands tell: the paths they write to (a dev box is jobs/evidence.py's).

SkyPilot `run`/`setup` and dstack `commands` are shell. One deliberately narrow reading:
- the paths a script writes to: the values of the framework flags people save checkpoints and
  outputs with (`--output_dir`, `--save-dir`, `--checkpoint_dir`, `--default_root_dir` …), and
  the targets of `>`/`tee`/`cp`/`mv`/`rsync`.
"""

from __future__ import annotations

import re
from typing import Any

from gpu_audit.core.lazyre import lazy

_FLAG = lazy(
    r"--(?:output|save|checkpoint|ckpt|checkpoints|default[_-]root|model[_-]save|log)"
    r"[_-](?:dir|path|directory)[=\s]+[\"']?([^\s\"';&|]+)",
    re.IGNORECASE,
    needs=("dir", "path"),
)
_TARGET = lazy(r"(?:>>?|\btee\s+(?:-a\s+)?)\s*[\"']?(/[^\s\"';&|]+)", needs=(">", "tee"))
_COPY = lazy(
    r"\b(?:cp|mv|rsync)\s+(?:-\S+\s+)*\S+\s+[\"']?(/[^\s\"';&|]+)", needs=("cp", "mv", "rsync")
)
CHECKPOINT_WORDS = ("checkpoint", "ckpt")


def commands(value: Any) -> str:
    """A run script as one text: a string, or a list of command strings."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(str(item) for item in value if isinstance(item, str))
    return ""


def written_paths(script: str) -> list[tuple[str, str]]:
    """(path, evidence) for each path the script writes outputs or checkpoints to."""
    found: list[tuple[str, str]] = []
    for match in _FLAG.finditer(script):
        flag = match.group(0).split("=", 1)[0].split()[0]
        found.append((match.group(1), f"`{flag}`"))
    for pattern in (_TARGET, _COPY):
        for match in pattern.finditer(script):
            found.append((match.group(1), "a write in the run script"))
    return found


def under(path: str, mount: str) -> bool:
    """Is `path` the mount point or inside it (`/ckpt/run1` under `/ckpt`, `~/x` as written)?"""
    mount = mount.rstrip("/")
    return bool(mount) and (path == mount or path.startswith(mount + "/"))


def says_checkpoint(text: str) -> bool:
    """True when the text names a checkpoint (any of CHECKPOINT_WORDS, any case)."""
    return any(word in text.lower() for word in CHECKPOINT_WORDS)
