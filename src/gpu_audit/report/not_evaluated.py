"""Not-evaluated records counted by rule and missing field, each with how to supply the field."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from gpu_audit.core.frozen import record
from gpu_audit.core.resource import Kind
from gpu_audit.core.results import NotEvaluated

# A provider's (collectors/<name>/provider.py) or job format's (jobs/<format>) own hints first,
# carried on the result (`ScanResult.hints`), then (field, kind), then (field, None); `tags.*` is
# handled apart.
_HINTS: dict[tuple[str, str | None], str] = {
    (
        "utilization.gpu_p95",
        None,
    ): "report GPU utilization (an agent exporting NVIDIA/DCGM metrics)",
    (
        "utilization.gpu_avg",
        None,
    ): "report GPU utilization (an agent exporting NVIDIA/DCGM metrics)",
    ("data.regions", "job"): "name the data (bucket URIs in the job's inputs or mounts) so its "
    "region can be looked up",
    ("data.regions", None): "record the data buckets and their regions (`data.regions`)",
    ("data.uris", None): "record the buckets the resource reads (`data-bucket` tag or label)",
    ("region", "job"): "pin a region in the job config (for example SkyPilot `resources.region`)",
    ("region", None): "record the region the resource runs in",
    ("gpu.model", "job"): "name the GPU model in the job config (an instance type, or the "
    "accelerator's name, e.g. `A100:8`)",
    ("gpu.model", None): "name the GPU model (an instance type the catalog knows, "
    "`gpu-audit catalog lookup`)",
    ("gpu.model", "ladder"): "this accelerator sits outside the NVIDIA GPU class ladder; "
    "waive the rule for it or scope the rule with `where`",
    ("gpu.count", "job"): "give the GPU count literally, not through a template variable",
    ("gpu.count", None): "use an instance type the catalog knows (`gpu-audit catalog lookup`)",
    ("capacity", "job"): "state the capacity in the job config (SkyPilot `use_spot`, a "
    "`karpenter.sh/capacity-type` or `cloud.google.com/gke-spot` nodeSelector on Kubernetes)",
    ("capacity", None): "record the provisioning model (spot, on-demand or reserved)",
    ("workload", "job"): "nothing the job runs says what it is: label it `gpu-audit/workload: "
    "training` (or `inference`, `batch-inference`, `benchmark`, `notebook`), or add a name "
    "pattern under `workload_patterns`",
    ("workload", None): "tag the resource `workload: training` (or `inference`, `notebook`; the "
    "`workload_tag` setting names the key), or add a name pattern under `workload_patterns`",
    ("uptime_hours", None): "record the launch time (`launched_at`)",
    ("monthly_cost_usd", None): "use an instance type and region the price catalog knows",
    ("limits.max_runtime_hours", "job"): "set a runtime cap in the job config",
    ("checkpoint.uri", "job"): "set the checkpoint location in the job config",
    ("reservation.idle_hours", None): "scan with `--history`: the audits recorded there say how "
    "long a reservation has had nothing on it (from its second audit on)",
    ("reservation.unused", None): "the reservation's API stated no total or used count",
}


@record
class Gap:
    rule_id: str
    missing: str  # as the engine reported it, e.g. `gpu.model (no class rank for Trainium)`
    kind: str
    provider: str
    resources: int
    hint: str


def grouped(
    records: tuple[NotEvaluated, ...],
    hints: Mapping[tuple[str, str], Mapping[str, str]] | None = None,
) -> list[Gap]:
    """Counts per (rule, missing, kind, provider), largest first, ties by rule and field."""
    counts = Counter(
        (n.rule_id, n.missing, n.resource.kind.value, n.resource.provider) for n in records
    )
    hints = hints or {}
    gaps = [
        Gap(*key, count, hint(key[1], hints.get((key[2], key[3]), {}), key[2]))
        for key, count in counts.items()
    ]
    return sorted(gaps, key=lambda g: (-g.resources, g.rule_id, g.missing, g.provider))


def hint(missing: str, own: Mapping[str, str], kind: str = Kind.INSTANCE.value) -> str:
    """How to supply a missing field, the source's `own` hints first; Markdown written by the
    project (providers, job formats, this module): no input is interpolated."""
    field = missing.split(" ", 1)[0]
    if "(no class rank for " in missing:  # a model named, outside the ladder: not the source's
        return _HINTS[(field, "ladder")]
    if field in own:
        return own[field]
    for key in ((field, kind), (field, None)):
        if key in _HINTS:
            return _HINTS[key]
    if field.startswith("tags."):
        return "set this tag (AWS) or label (GCP, Kubernetes, job config) on the resource"
    return "supply this field in the source (or an inventory file) so the rule can judge it"
