"""Hydra's Optuna sweeper: `n_trials`, `n_jobs`, the pruner, and the Submitit launcher's GPUs.

Each trial runs where the launcher puts it: with `hydra/launcher: submitit_slurm` (or
`submitit_local`), `gpus_per_node` × `nodes` GPUs for at most `timeout_min`; else the file
names no GPU, and the dollar ceiling is not evaluated while the trial cap still is.
"""

from __future__ import annotations

from typing import Any, ClassVar

from gpu_audit.core.resource import Resource, Workload
from gpu_audit.core.yamlsrc import Document, LineMap
from gpu_audit.jobs.evidence import Kind, infer
from gpu_audit.jobs.hydra.markers import claims, override, sweeper
from gpu_audit.jobs.interface import JobDraft, JobFormat
from gpu_audit.jobs.pruning import halving_share
from gpu_audit.jobs.values import as_number, text

# Optuna's pruners that stop trials early; Hyperband states its whole schedule
_PRUNERS = (
    "HyperbandPruner",
    "SuccessiveHalvingPruner",
    "MedianPruner",
    "PercentilePruner",
    "ThresholdPruner",
    "PatientPruner",
    "WilcoxonPruner",
)
_HYPERBAND = {"min_resource": 1, "reduction_factor": 3}  # optuna.pruners.HyperbandPruner defaults


class HydraOptuna(JobFormat):
    name: ClassVar[str] = "hydra"
    hints: ClassVar[dict[str, str]] = {
        "hpo.max_trials": "set `hydra.sweeper.n_trials`",
        "gpu.model": "the Optuna sweeper's trials run where `hydra/launcher` puts them",
        "limits.max_runtime_hours": "set `hydra.launcher.timeout_min` (Submitit launcher)",
        "capacity": "the trials run where `hydra/launcher` puts them (a Slurm partition, a "
        "cluster): the file states no spot or on-demand",
        "gpu.count": "set `hydra.launcher.gpus_per_node` to a number (Submitit launcher)",
    }
    fixes: ClassVar[dict[str, str]] = {
        "hpo.max_trials": "set `hydra.sweeper.n_trials`",
        "limits.max_runtime_hours": "set `hydra.launcher.timeout_min`",
        "hpo.early_stopping": "set `hydra.sweeper.pruner` (`_target_: "
        "optuna.pruners.HyperbandPruner`, or `MedianPruner`)",
    }

    def parse(self, document: Document, path: str) -> list[Resource] | None:
        data = document.data
        if not isinstance(data, LineMap) or not claims(data):
            return None
        hydra = data.get("hydra")
        found = sweeper(data)
        config = found if isinstance(found, LineMap) else LineMap(data.line)
        draft = JobDraft(self.name, path, document, name=text(config.get("study_name")))
        draft.anchor = data.line_of("hydra") if isinstance(hydra, LineMap) else data.line
        for key, field in (("n_trials", "hpo.max_trials"), ("n_jobs", "hpo.parallel_trials")):
            if key in config:
                raw = config[key]
                draft.put(field, as_number(raw), config.line_of(key), raw=raw)
        _pruner(draft, config)
        if isinstance(hydra, LineMap):
            _launcher(draft, data, hydra)
        draft.add_note("a Hydra Optuna sweep: trials run where its launcher puts them")
        infer(draft, [], Kind(Workload.TRAINING, "a Hydra Optuna sweep", draft.anchor))
        return [draft.build()]


def _pruner(draft: JobDraft, config: LineMap) -> None:
    pruner = config.get("pruner")
    target = str(pruner.get("_target_", "")) if isinstance(pruner, LineMap) else ""
    name = target.rpartition(".")[2]
    if not isinstance(pruner, LineMap) or name == "NopPruner" or name not in _PRUNERS:
        draft.set("hpo.early_stopping", False)
        return
    line = config.line_of("pruner")
    draft.set("hpo.early_stopping", True, line)
    if name == "HyperbandPruner":
        schedule: dict[str, Any] = {**_HYPERBAND, **pruner}
        share = halving_share(
            schedule["min_resource"], schedule.get("max_resource"), schedule["reduction_factor"]
        )
        if share is not None:
            draft.set("hpo.pruned_share", share, line)


def _launcher(draft: JobDraft, data: LineMap, hydra: LineMap) -> None:
    chosen = str(override(data, "launcher") or "")
    launcher = hydra.get("launcher")
    if not chosen.startswith("submitit") or not isinstance(launcher, LineMap):
        return
    per_node = as_number(launcher.get("gpus_per_node"))
    nodes = as_number(launcher.get("nodes", 1))
    if per_node is not None and nodes is not None:
        draft.set("gpu.count", int(per_node * nodes), launcher.line_of("gpus_per_node"))
    if "timeout_min" in launcher:
        raw = launcher["timeout_min"]
        minutes = as_number(raw)
        hours = None if minutes is None else minutes / 60
        draft.put("limits.max_runtime_hours", hours, launcher.line_of("timeout_min"), raw=raw)
