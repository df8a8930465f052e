"""Between judging and rendering: compare with the previous audit, and record this one."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

from gpu_audit.core.fingerprint import resource_key
from gpu_audit.core.gcpause import paused_gc
from gpu_audit.core.results import ScanResult
from gpu_audit.core.runs import Sweep
from gpu_audit.errors import ConfigError, InputError
from gpu_audit.history.baseline import load_baseline
from gpu_audit.history.compare import compare
from gpu_audit.history.knobs import knob_changes, states_knobs
from gpu_audit.history.schema import check_file
from gpu_audit.history.store import HistoryStore
from gpu_audit.history.sweeps import SweepEstimate, with_ceilings


def preflight(history: str | None, baseline: str | None) -> None:
    """Refuse a bad history file or a missing baseline before a long scan starts, not after."""
    if history and baseline:
        raise ConfigError("--baseline compares with a saved report instead of --history: give one")
    if history:
        check_file(history)
    if baseline and not os.path.isfile(baseline):
        raise InputError(f"{baseline}: baseline: no such file")


def reservation_idle(history: str | None, now: datetime) -> dict[tuple[str, str], float]:
    """How long each reservation the history saw has been empty, as of `now` (none without a
    history, or before its first audit)."""
    if not history or not os.path.exists(history) or not os.path.getsize(history):
        return {}
    store = HistoryStore.open(history)
    try:
        return store.reservation_idle(now)
    finally:
        store.close()


def sweep_ceilings(sweeps: Sequence[Sweep], history: str | None) -> list[Sweep]:
    """Each finished tuning sweep held to the GPU-hours its file allowed, as the latest check
    of a sweep of its name recorded it (history/sweeps.py); as they are without a history."""
    if not history:
        return list(sweeps)
    known: dict[tuple[str, str], SweepEstimate] = {}
    if os.path.exists(history) and os.path.getsize(history):
        store = HistoryStore.open(history)
        try:
            known = store.sweep_estimates(s.name for s in sweeps)
        finally:
            store.close()
    return with_ceilings(sweeps, known)


def remember(
    result: ScanResult,
    history: str | None,
    baseline: str | None,
    estimates: Sequence[SweepEstimate] = (),
) -> ScanResult:
    """`result` with `since` filled from a saved report (`baseline`) or the history database,
    which then records it (one transaction), with a check's sweep `estimates`; unchanged when
    neither is given."""
    if history and baseline:
        raise ConfigError("--baseline compares with a saved report instead of --history: give one")
    if baseline:
        since = compare(result, load_baseline(baseline), f"baseline {baseline}")
        return replace(result, since=since)
    if not history:
        return result
    store = HistoryStore.open(history)
    try:
        with paused_gc():  # ~1M acyclic objects; a gen-2 pass over the scan's heap was ~0.4 s
            keys = list(map(resource_key, result.resources))
            since = compare(result, store.previous(result), f"history {history}", keys)
            if states_knobs(result.resources):  # a knob change beside the GPUs' utilization
                changes = knob_changes(store.previous_resources(result), result.resources)
                since = replace(since, knob_changes=tuple(changes))
            result = replace(result, since=since)
            store.record(result, keys, estimates)
    finally:
        store.close()
    return result
