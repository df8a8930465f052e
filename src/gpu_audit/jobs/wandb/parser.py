"""W&B sweep YAML: the trial cap (`run_cap`, or a grid's finite size) and the hyperband schedule.

A sweep file names no GPU: each run uses the machine its agent runs on, so the GPU, the price
and a dollar ceiling are not evaluated; the trial bound still is. The agents' `--count` also
caps runs, outside the file (every estimate says so). No per-run time cap exists in the file.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

from gpu_audit.core.resource import Resource, Workload
from gpu_audit.core.yamlsrc import Document, LineList, LineMap
from gpu_audit.errors import InputError
from gpu_audit.jobs.evidence import Kind, infer, runs_in
from gpu_audit.jobs.interface import JobDraft, JobFormat
from gpu_audit.jobs.pruning import halving_share
from gpu_audit.jobs.values import as_number, text
from gpu_audit.jobs.wandb.markers import claims

_ETA = 3  # `early_terminate.eta` when unset (W&B sweep configuration keys)


class WandbSweep(JobFormat):
    name: ClassVar[str] = "wandb"
    hints: ClassVar[dict[str, str]] = {
        "hpo.max_trials": "set `run_cap`",
        "gpu.model": "a W&B sweep runs on its agents' machines: the file names no GPU",
        "limits.max_runtime_hours": "a W&B sweep has no per-run time cap: cap it in the program",
        "capacity": "a W&B sweep runs on its agents' machines: spot or on-demand is theirs, "
        "not the file's",
        "gpu.count": "a W&B sweep runs on its agents' machines: the file names no GPU count",
    }
    fixes: ClassVar[dict[str, str]] = {
        "hpo.max_trials": "set `run_cap`",
        "hpo.early_stopping": "set `early_terminate: {type: hyperband, min_iter: 3}`",
    }

    def parse(self, document: Document, path: str) -> list[Resource] | None:
        data = document.data
        if not isinstance(data, LineMap) or not claims(data):
            return None
        draft = JobDraft(self.name, path, document, name=text(data.get("name")))
        draft.anchor = data.line_of("method")
        if "run_cap" in data:
            line, raw = data.line_of("run_cap"), data["run_cap"]
            draft.put("hpo.max_trials", as_number(raw), line, raw=raw)
        elif data.get("method") == "grid":
            _grid(draft, data)
        _early_terminate(draft, data)
        draft.add_note(
            "GPUs: each run uses its agent's machine, which the file does not name; "
            "`wandb agent --count` may also cap the runs, outside the file"
        )
        infer(draft, runs_in(data), Kind(Workload.TRAINING, "a W&B sweep", data.line_of("method")))
        return [draft.build()]


def _grid(draft: JobDraft, data: LineMap) -> None:
    """A grid over listed values is finite: the product of their counts (a distribution: none)."""
    sizes: list[int] = []
    for spec in data["parameters"].values():
        if not isinstance(spec, dict):
            return
        if "value" in spec:
            sizes.append(1)
        elif isinstance(spec.get("values"), list | LineList):
            sizes.append(len(spec["values"]))
        else:
            return  # a distribution: W&B's grid search runs until stopped
    draft.set("hpo.max_trials", math.prod(sizes), data.line_of("method"))
    draft.add_note(f"a grid of {math.prod(sizes)} combinations")


def _early_terminate(draft: JobDraft, data: LineMap) -> None:
    stop = data.get("early_terminate")
    if not isinstance(stop, LineMap):
        draft.set("hpo.early_stopping", False)
        return
    draft.set(
        "hpo.early_stopping", stop.get("type") == "hyperband", data.line_of("early_terminate")
    )
    eta: Any = stop.get("eta", _ETA)
    top, low = as_number(stop.get("max_iter")), as_number(stop.get("min_iter"))
    brackets, factor = as_number(stop.get("s")), as_number(eta)
    if factor is not None and not factor > 1:  # `eta: 0` divided by zero: no halving schedule
        line = stop.line_of("eta") or data.line_of("early_terminate")
        raise InputError(
            f"{draft.path}:{line}: early_terminate.eta: {factor:g} is not a halving rate "
            "(W&B's hyperband keeps 1 in eta runs at each bracket: a number above 1)"
        )
    if low is None and top is not None and brackets is not None and factor is not None:
        brackets = min(max(brackets, 0), 64)  # a hostile `s: 1e9` is no overflow
        low = top / factor**brackets  # W&B: the first bracket is max_iter ÷ eta^s
    share = halving_share(low, top, eta)
    if share is not None:
        draft.set("hpo.pruned_share", share, data.line_of("early_terminate"))
