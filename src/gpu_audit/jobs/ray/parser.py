"""Ray cluster launcher YAML (`ray up`) and Anyscale compute configs: a resource per GPU node type.

A node type's GPUs come from `resources: {GPU: n}`, GCP `guestAccelerators`, or its instance type
(the catalog, or an Anyscale `…-nvidia-l4-1` suffix). Workers count at their `min_workers` (at
least one node), with the `max_workers` the autoscaler may launch in the note (a worker type with
`max_workers: 0` is skipped); the head node counts once and has `role: head`. Capacity comes
from the node config (EC2 market options, capacity blocks and reservations, GCP scheduling and
reservation affinity, Azure priority, Anyscale `market_type`/`use_spot`); with none stated it is
on-demand on AWS, GCP and Azure (their APIs' default) and missing elsewhere.
The workload is what the start and setup commands run (jobs/evidence.py).
"""

from __future__ import annotations

from typing import Any, ClassVar

from gpu_audit.core.frozen import record
from gpu_audit.core.resource import Capacity, Resource
from gpu_audit.core.yamlsrc import Document, LineMap, is_templated
from gpu_audit.jobs.evidence import Ran, infer
from gpu_audit.jobs.gpus import GpuAsk, gpu_instance, instance_ask, ray_accelerator_type, whole
from gpu_audit.jobs.interface import JobDraft, JobFormat, billing_service
from gpu_audit.jobs.ray.markers import is_cluster
from gpu_audit.jobs.values import as_bool, as_number

_DEFAULT_MAX_WORKERS = 2  # Ray's documented default for the cluster-wide max_workers


@record(frozen=False)
class _NodeType:
    """A Ray cluster's node type, with its config."""

    name: str
    spec: LineMap  # the node type entry (resources, min/max_workers, use_spot …)
    config: LineMap  # node_config (provider-specific)
    head: bool
    line: int | None = None  # the node type's own line: findings about unstated fields


class RayCluster(JobFormat):
    name: ClassVar[str] = "ray"
    hints: ClassVar[dict[str, str]] = {
        "capacity": "set the node type's market (`InstanceMarketOptions`, GCP `scheduling`, "
        "Anyscale `market_type`); on Kubernetes, in the pod templates",
    }
    fixes: ClassVar[dict[str, str]] = {
        "capacity": "set the worker node type's `node_config.InstanceMarketOptions.MarketType: "
        "spot` (GCP `scheduling.provisioningModel: SPOT`, Anyscale `market_type: SPOT`)",
        "limits.max_runtime_hours": "tag the node config `gpu-audit/max-runtime-hours` "
        "(a Ray cluster has no runtime cap)",
        "gpu.model": "choose a smaller GPU instance type in the node type's `node_config`",
        "tags.*": "add the keys to the node config's tags (`TagSpecifications`, GCP `labels`)",
    }

    def parse(self, document: Document, path: str) -> list[Resource] | None:
        data = document.data
        if not isinstance(data, LineMap) or not is_cluster(data):
            return None
        cluster = data.get("cluster_name")
        ran = _ran(data)
        resources = []
        for node in _node_types(data):
            ask = _node_gpus(node)
            if ask is None:
                continue
            nodes, nodes_line, scaling = _node_count(data, node)
            if nodes == 0:
                continue  # a node type the autoscaler may never launch
            name = f"{cluster}/{node.name}" if cluster else node.name
            draft = JobDraft(self.name, path, document, name=name)
            draft.anchor = node.line
            # a runtime cap is the cluster's, not a node type's: one finding at its first line
            draft.mark("limits.max_runtime_hours", data.line_of("cluster_name") or document.line)
            draft.add_note(scaling)
            draft.set("gpu.model", ask.model, ask.line)
            per_node = whole(ask.count)
            total = per_node * nodes if per_node is not None and nodes is not None else None
            draft.set("gpu.count", total, ask.line if ask.count is not None else nodes_line)
            if ask.memory_gib:
                draft.set("gpu.memory_gib", ask.memory_gib, ask.line)
            instance_type, type_line = _instance_type(node)
            if instance_type is not None:
                draft.set("instance_type", instance_type, type_line)
            _capacity(draft, node)
            if "capacity" not in draft.values and not draft.lines.get("capacity"):
                _default_capacity(draft, data)
            infer(draft, ran)
            if node.head:
                draft.set("role", "head", node.line)
                draft.add_note("the head node: it holds the cluster's state, its workers scale")
            _location(draft, data)
            _tags(draft, node.config)
            resources.append(draft.build())
        return resources


def _map(value: Any) -> LineMap | None:
    return value if isinstance(value, LineMap) else None


def _node_types(data: LineMap) -> list[_NodeType]:
    types: list[_NodeType] = []
    available = _map(data.get("available_node_types"))
    if available is not None:
        head = data.get("head_node_type")
        for name, spec in available.items():
            if isinstance(spec, LineMap):
                config = _map(spec.get("node_config")) or LineMap(spec.line)
                line = available.line_of(name)
                types.append(_NodeType(str(name), spec, config, head == name, line))
        return types
    if isinstance(data.get("worker_node_types"), list):  # Anyscale: the entry holds instance_type
        head = _map(data.get("head_node_type"))
        if head is not None:
            types.append(_NodeType(str(head.get("name", "head")), head, head, True, head.line))
        for spec in data["worker_node_types"]:
            if isinstance(spec, LineMap):
                name = str(spec.get("name", "worker"))
                types.append(_NodeType(name, spec, spec, False, spec.line))
        return types
    for key, head in (("head_node", True), ("worker_nodes", False)):  # before Ray 1.0
        legacy = _map(data.get(key))
        if legacy is not None:
            types.append(_NodeType(key, legacy, legacy, head, data.line_of(key)))
    return types


def _instance_type(node: _NodeType) -> tuple[str | None, int | None]:
    config = node.config
    azure = _map(config.get("azure_arm_parameters"))
    for holder, key in (
        (config, "InstanceType"),
        (config, "machineType"),
        (azure, "vmSize"),
        (config, "instance_type"),
    ):
        if holder is not None and key in holder:
            value = holder[key]
            if isinstance(value, str) and not is_templated(value):
                return value, holder.line_of(key)
            return None, holder.line_of(key)
    return None, None


def _node_gpus(node: _NodeType) -> GpuAsk | None:
    """GPUs of one node of this type: accelerators or instance type, with Ray's GPU count."""
    ask: GpuAsk | None = None
    accelerators = node.config.get("guestAccelerators")
    if isinstance(accelerators, list) and accelerators and isinstance(accelerators[0], LineMap):
        first = accelerators[0]
        kind = str(first.get("acceleratorType", "")).rsplit("/", 1)[-1]
        count = as_number(first.get("acceleratorCount", 1))
        ask = GpuAsk(kind or None, count, first.line_of("acceleratorType"), kind)
    instance_type, type_line = _instance_type(node)
    if ask is None and instance_type is not None:
        ask = instance_ask(instance_type, type_line)
        if ask is None and gpu_instance(instance_type):
            ask = GpuAsk(None, None, type_line, instance_type)  # a GPU family the catalog lacks
    declared = _map(node.spec.get("resources"))
    named = ray_accelerator_type(" ".join(f"{key}:" for key in declared)) if declared else None
    if declared is not None and "GPU" in declared and ask is None and named is not None:
        return GpuAsk(named, as_number(declared["GPU"]), declared.line_of("GPU"), named)
    if declared is not None and "GPU" in declared:
        count = as_number(declared["GPU"])
        line = declared.line_of("GPU")
        if ask is None:
            return GpuAsk(None, count, line, f"GPU: {declared['GPU']}") if count else None
        if ask.count is None:
            return GpuAsk(ask.model, count, line, ask.label, ask.memory_gib)
    return ask


def _node_count(data: LineMap, node: _NodeType) -> tuple[int | None, int | None, str | None]:
    """Nodes of this type counted (the autoscaler's minimum, at least one node), their line, and
    a note on the range it scales over (the maximum is stated, never counted around the clock)."""
    if node.head:
        return 1, None, None
    most, line = None, None
    for holder in (node.spec, data):
        if "max_workers" in holder:
            number = as_number(holder["max_workers"])
            most, line = (None if number is None else int(number)), holder.line_of("max_workers")
            break
    else:
        if "worker_node_types" in data:
            return None, None, None  # Anyscale sets no default we can rely on
        most = _DEFAULT_MAX_WORKERS
    least = as_number(node.spec.get("min_workers", 0))
    if most is None or most == 0 or least is None:
        return most, line, None
    counted = min(max(int(least), 1), most)
    line = node.spec.line_of("min_workers") or line
    note = None
    if most > counted:
        note = f"autoscales from {int(least)} to {most} nodes; counted at {counted}"
    return counted, line, note


def _capacity(draft: JobDraft, node: _NodeType) -> None:
    config = node.config
    advanced = _map(config.get("advanced_instance_config"))  # Anyscale: EC2 RunInstances fields
    for holder in (config, advanced):
        if holder is not None and _reserved(draft, holder):
            return
    market = _map(config.get("InstanceMarketOptions"))
    if market is not None and "MarketType" in market:
        spot = str(market["MarketType"]).lower() == "spot"
        capacity = Capacity.SPOT if spot else Capacity.ON_DEMAND
        draft.set("capacity", capacity, market.line_of("MarketType"))
        return
    scheduling = config.get("scheduling")
    for entry in scheduling if isinstance(scheduling, list) else [scheduling]:
        if not isinstance(entry, LineMap):
            continue
        if as_bool(entry.get("preemptible")) is True:
            draft.set("capacity", Capacity.SPOT, entry.line_of("preemptible"))
            return
        if str(entry.get("provisioningModel", "")).upper() == "SPOT":
            draft.set("capacity", Capacity.SPOT, entry.line_of("provisioningModel"))
            return
        if "preemptible" in entry:
            draft.set("capacity", Capacity.ON_DEMAND, entry.line_of("preemptible"))
    azure = _map(config.get("azure_arm_parameters"))
    if azure is not None and str(azure.get("priority", "")).lower() == "spot":
        draft.set("capacity", Capacity.SPOT, azure.line_of("priority"))
        return
    if "market_type" in node.spec:  # Anyscale: ON_DEMAND, SPOT, PREFER_SPOT
        market_type = str(node.spec["market_type"]).upper()
        chosen = {"ON_DEMAND": Capacity.ON_DEMAND, "SPOT": Capacity.SPOT}
        market_capacity = chosen.get(market_type, Capacity.SPOT if "SPOT" in market_type else None)
        if market_capacity is None:
            draft.unknown("capacity", node.spec.line_of("market_type"))
        else:
            draft.set("capacity", market_capacity, node.spec.line_of("market_type"))
        if market_type == "PREFER_SPOT":
            draft.add_note("spot, falling back to on-demand when spot is short")
    elif "use_spot" in node.spec:  # Anyscale, before market_type
        use_spot = as_bool(node.spec["use_spot"])
        if use_spot is None:
            draft.unknown("capacity", node.spec.line_of("use_spot"))
        else:
            capacity = Capacity.SPOT if use_spot else Capacity.ON_DEMAND
            draft.set("capacity", capacity, node.spec.line_of("use_spot"))
        if use_spot and as_bool(node.spec.get("fallback_to_ondemand")):
            draft.add_note("spot, falling back to on-demand when spot is short")


def _reserved(draft: JobDraft, config: LineMap) -> bool:
    """EC2 capacity blocks and reservations, GCP specific reservations: reserved capacity."""
    market = _map(config.get("InstanceMarketOptions"))
    if market is not None and str(market.get("MarketType", "")).lower() == "capacity-block":
        draft.set("capacity", Capacity.RESERVED, market.line_of("MarketType"))
        return True
    spec = _map(config.get("CapacityReservationSpecification"))
    if spec is not None and "CapacityReservationTarget" in spec:
        draft.set("capacity", Capacity.RESERVED, config.line_of("CapacityReservationSpecification"))
        return True
    affinity = _map(config.get("reservationAffinity"))
    kind = str(affinity.get("consumeReservationType", "")) if affinity else ""
    if affinity is not None and kind.upper() == "SPECIFIC_RESERVATION":
        draft.set("capacity", Capacity.RESERVED, affinity.line_of("consumeReservationType"))
        return True
    return False


_ON_DEMAND_PROVIDERS = {"aws", "gcp", "azure"}


def _default_capacity(draft: JobDraft, data: LineMap) -> None:
    """EC2 RunInstances, GCE and Azure VMs are on-demand unless asked otherwise; Anyscale's
    `market_type` defaults to ON_DEMAND. Other providers (kubernetes, local, vsphere) decide
    outside this file: capacity stays missing."""
    provider = _map(data.get("provider"))
    kind = str(provider.get("type", "")).lower() if provider else ""
    if kind in _ON_DEMAND_PROVIDERS or "worker_node_types" in data:
        draft.set("capacity", Capacity.ON_DEMAND)


_COMMAND_KEYS = (
    "head_start_ray_commands",
    "setup_commands",
    "head_setup_commands",
    "worker_start_ray_commands",
    "initialization_commands",
    "worker_setup_commands",
)


def _ran(data: LineMap) -> list[Ran]:
    """What the cluster runs: its start and setup commands (Ray Serve, a trainer, a server)."""
    ran = []
    for key in _COMMAND_KEYS:
        value = data.get(key)
        if isinstance(value, list):
            text = "\n".join(c for c in value if isinstance(c, str))
            ran.append(Ran(text, f"`{key}`", data.line_of(key)))
    return ran


def _location(draft: JobDraft, data: LineMap) -> None:
    provider = _map(data.get("provider")) or data  # Anyscale keeps `region` at the top
    kind = provider.get("type")
    if isinstance(kind, str) and kind.strip() and not is_templated(kind):
        draft.set("service", billing_service(kind), provider.line_of("type"))
    for key in ("region", "location"):
        if key in provider and isinstance(provider[key], str):
            draft.set("region", provider[key], provider.line_of(key))
            break
    zone = provider.get("availability_zone")
    if isinstance(zone, str) and "," not in zone:
        draft.set("zone", zone.strip(), provider.line_of("availability_zone"))


def _tags(draft: JobDraft, config: LineMap) -> None:
    for spec in config.get("TagSpecifications") or []:
        tags = spec.get("Tags") if isinstance(spec, dict) else None
        for tag in tags if isinstance(tags, list) else []:
            if isinstance(tag, dict):
                draft.tag(tag.get("Key"), tag.get("Value"))
    labels = config.get("labels")
    if isinstance(labels, dict):
        for key, value in labels.items():
            draft.tag(key, value)
