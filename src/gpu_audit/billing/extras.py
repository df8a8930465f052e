"""What each billing engine imports, checked before it runs: a missing one is one line naming
the extra to install (exit 2), as a scan's cloud extras are, never an ImportError's traceback."""

from __future__ import annotations

import importlib

from gpu_audit.errors import ConfigError

# engine -> (module, what it does, the extra that installs it), in the order they are needed
NEEDS: dict[str, tuple[tuple[str, str, str], ...]] = {
    "duckdb": (("duckdb", "reads the exports", "billing"),),
    "athena": (
        ("sqlglot", "writes the query in Athena's dialect", "billing"),
        ("boto3", "runs it on Athena", "aws"),
    ),
    "bigquery": (
        ("sqlglot", "writes the query in BigQuery's dialect", "billing"),
        ("google.auth", "runs it on BigQuery", "gcp"),
    ),
}


def require(engine: str, run: bool = True) -> None:
    """Raise ConfigError for the first module `engine` needs that cannot be imported (with
    `run` false, only what `--sql` needs: the dialect, not the engine's client)."""
    for module, does, extra in NEEDS[engine]:
        if not run and does.startswith("runs"):
            continue
        try:
            importlib.import_module(module)
        except ImportError:
            raise ConfigError(
                f"billing --engine {engine}: {module} ({does}) is not installed; "
                f"install the {extra} extra: pip install 'gpu-audit[{extra}]'"
            ) from None
