"""Determined experiment YAML: `searcher` (`max_trials`, `max_concurrent_trials`, `max_length`,
`adaptive_asha`) and `resources.slots_per_trial`.

A trial's length is in epochs, batches or records, never hours, and the file names no GPU
model: a dollar ceiling needs `gpu-audit estimate --hours H`; the trial cap is judged as is.
"""

from __future__ import annotations

from typing import ClassVar

from gpu_audit.core.resource import Resource, Workload
from gpu_audit.core.yamlsrc import Document, LineMap
from gpu_audit.jobs.determined.markers import claims
from gpu_audit.jobs.evidence import Kind, infer, runs_in
from gpu_audit.jobs.interface import JobDraft, JobFormat
from gpu_audit.jobs.pruning import halving_share
from gpu_audit.jobs.values import as_number, text

_ASHA = {"max_rungs": 5, "divisor": 4}  # Determined's adaptive_asha defaults
_SLOTS_DEFAULT = 1  # `resources.slots_per_trial` when unset


class Determined(JobFormat):
    name: ClassVar[str] = "determined"
    hints: ClassVar[dict[str, str]] = {
        "hpo.max_trials": "set `searcher.max_trials`",
        "gpu.model": "Determined's resource pool decides the GPU: the file names none",
        "limits.max_runtime_hours": "Determined caps a trial in `max_length` units, not hours",
        "capacity": "Determined's resource pool decides spot or on-demand "
        "(`resources.resource_pool` names the pool): the file states neither",
        "gpu.count": "set `resources.slots_per_trial` to a number",
    }
    fixes: ClassVar[dict[str, str]] = {
        "hpo.max_trials": "set `searcher.max_trials`",
        "hpo.early_stopping": "use `searcher.name: adaptive_asha`",
    }

    def parse(self, document: Document, path: str) -> list[Resource] | None:
        data = document.data
        searcher = data.get("searcher") if isinstance(data, LineMap) else None
        if not isinstance(data, LineMap) or not isinstance(searcher, LineMap) or not claims(data):
            return None
        draft = JobDraft(self.name, path, document, name=text(data.get("name")))
        draft.anchor = data.line_of("searcher")
        resources = data.get("resources")
        if isinstance(resources, LineMap) and "slots_per_trial" in resources:
            raw = resources["slots_per_trial"]
            draft.put("gpu.count", as_number(raw), resources.line_of("slots_per_trial"), raw=raw)
            if as_number(raw) == 0:
                return []  # a CPU-only experiment
        else:
            draft.set("gpu.count", _SLOTS_DEFAULT)
        if searcher.get("name") != "single":
            _searcher(draft, searcher)
        if "max_restarts" in data:
            draft.add_note(f"max_restarts {data['max_restarts']} (the experiment's, not a trial's)")
        infer(draft, runs_in(data), Kind(Workload.TRAINING, "a Determined experiment"))
        return [draft.build()]


def _searcher(draft: JobDraft, searcher: LineMap) -> None:
    for key, field in (
        ("max_trials", "hpo.max_trials"),
        ("max_concurrent_trials", "hpo.parallel_trials"),
    ):
        if key in searcher:
            raw = searcher[key]
            draft.put(field, as_number(raw), searcher.line_of(key), raw=raw)
    asha = searcher.get("name") in ("adaptive_asha", "async_halving")
    draft.set("hpo.early_stopping", asha, searcher.line_of("name"))
    length = searcher.get("max_length")
    unit, full = (
        next(iter(length.items()), (None, None)) if isinstance(length, LineMap) else (None, length)
    )
    if unit is not None or full is not None:
        draft.add_note(f"each trial trains at most {full} {unit or 'units'} (max_length)")
    if asha:
        rungs = as_number(searcher.get("max_rungs", _ASHA["max_rungs"]))
        divisor = as_number(searcher.get("divisor", _ASHA["divisor"]))
        top = as_number(full)
        if rungs is not None and divisor is not None and top is not None and 1 <= rungs <= 64:
            share = halving_share(top / divisor ** (rungs - 1), top, divisor)
            if share is not None:
                draft.set("hpo.pruned_share", share, searcher.line_of("name"))
