"""Job-config parsers: one module per format, each mapping a config to `Resource(kind=job)`."""

from gpu_audit.jobs.registry import (
    FORMATS,
    JobLoad,
    format_fix,
    format_hints,
    load_jobs,
    parser_failure,
)

__all__ = [
    "FORMATS",
    "JobLoad",
    "format_fix",
    "format_hints",
    "load_jobs",
    "parser_failure",
]
