"""The knobs of a resource's `training` section and the labels reports give them, in order."""

from __future__ import annotations

KNOBS = (
    ("precision", "precision"),
    ("tf32", "tf32"),
    ("batch_size", "batch"),
    ("grad_accum", "accumulation"),
    ("checkpointing", "checkpointing"),
    ("workers", "workers"),
    ("compile", "compile"),
    ("model", "model"),
    ("method", "method"),
)
