"""Slurm batch scripts are text, not YAML: their syntax says which files are theirs."""

from __future__ import annotations

from typing import Any

from gpu_audit.jobs.syntax import Syntax

# `.sbatch` and `.slurm` are always taken; a `.sh`, `.bash` or `.job` script only when its
# opening holds an `#SBATCH` directive. pre-commit tags `.sh`/`.bash` files `shell`; a `.sbatch`
# or `.slurm` file is only `text` to it.
SYNTAX = Syntax(
    reader="text",
    suffixes=(".sbatch", ".slurm"),
    hook_types=("shell", "text"),
    sniffed=(".sh", ".bash", ".job"),
    first_line=r"^#SBATCH\s",
    comment="#",
    directives=("#SBATCH",),
)


def claims(data: dict[Any, Any]) -> bool:
    """Never a YAML document: a script is read as text (`Slurm.parse_text`)."""
    return False
