"""SkyPilot task YAML (`sky launch` / `sky jobs launch` / SkyServe): resources, spot, buckets.

Capacity: `use_spot` (default false: on-demand, per SkyPilot's YAML spec), `any_of`/`ordered`
alternatives, and `config.{aws,gcp}.specific_reservations` (reserved). Workload: a `service`
is inference (GPUs × its minimum replicas), else what `run` runs says (jobs/evidence.py); a task
with no `run` is an interactive cluster (a dev box). Checkpoints: skypilot_mounts.py.
"""

from __future__ import annotations

from typing import Any, ClassVar

from gpu_audit.core.resource import Capacity, Resource, Workload
from gpu_audit.core.yamlsrc import Document, LineList, LineMap, is_templated
from gpu_audit.jobs.evidence import Kind, Ran, infer
from gpu_audit.jobs.gpus import (
    GpuAsk,
    alternatives_note,
    cheapest,
    instance_ask,
    parse_name_count,
    whole,
)
from gpu_audit.jobs.interface import JobDraft, JobFormat, billing_service
from gpu_audit.jobs.scripts import commands
from gpu_audit.jobs.skypilot.markers import MARKER_KEYS, TASK_KEYS
from gpu_audit.jobs.skypilot.mounts import set_mounts
from gpu_audit.jobs.values import as_bool, as_count, as_number, unit_hours

_NO_REGION_INFRA = {"k8s", "kubernetes", "ssh", "local", "*"}


class _Candidate:
    """One `any_of`/`ordered` alternative: its own keys first, then the shared `resources` keys."""

    def __init__(self, *maps: LineMap) -> None:
        self.maps = maps

    def get(self, key: str) -> tuple[Any, int | None]:
        """The value and line of `key` from the first of this alternative's maps that has it; (None,
        None) when none does."""
        for mapping in self.maps:
            if key in mapping:
                return mapping[key], mapping.line_of(key)
        return None, None


class SkyPilot(JobFormat):
    name: ClassVar[str] = "skypilot"
    hints: ClassVar[dict[str, str]] = {
        "capacity": "set `resources.use_spot` to true or false (not a template)",
        "gpu.model": "name the GPUs in `resources.accelerators`, e.g. `accelerators: A100:8`",
    }
    fixes: ClassVar[dict[str, str]] = {
        "capacity": "set `resources.use_spot: true`",
        "limits.max_runtime_hours": "label `resources.labels` with `gpu-audit/max-runtime-hours` "
        "(SkyPilot has no runtime cap), or tear the cluster down with `resources.autostop` "
        "`down: true`",
        "gpu.model": "ask for a smaller GPU in `resources.accelerators`",
        "checkpoint.uri": "mount a bucket in `file_mounts` (`/checkpoints: {name: …, store: s3, "
        "mode: MOUNT}`) and save to and resume from it",
        "limits.idle_stop_hours": "set `resources.autostop: {idle_minutes: 30, down: true}` "
        "(the cluster goes down when idle)",
        "tags.*": "add the keys to `resources.labels`",
    }

    def parse(self, document: Document, path: str) -> list[Resource] | None:
        data = document.data
        if not isinstance(data, LineMap) or not data.keys() <= TASK_KEYS:
            return None
        if not any(key in data for key in MARKER_KEYS):
            return None
        draft = JobDraft(self.name, path, document, name=_text(data.get("name")))
        resources = data.get("resources")
        base = resources if isinstance(resources, LineMap) else LineMap(data.line_of("resources"))
        candidates, ordered = _candidates(base)
        options = [(ask, cand) for cand in candidates for ask in _asks(cand)]
        if not options:
            return []
        chosen = cheapest([ask for ask, _ in options])
        assert chosen is not None
        candidate = next(cand for ask, cand in options if ask is chosen)
        nodes, _ = _nodes(data)
        nodes, autoscaling = _replicas(data, nodes)
        draft.add_note(autoscaling)
        draft.set("gpu.model", chosen.model, chosen.line)
        per_node = whole(chosen.count)
        total = per_node * nodes if per_node is not None and nodes is not None else None
        if total is None and is_templated(chosen.label):
            draft.set("gpu.count", chosen.label, chosen.line)  # `A100:${N}`: missing, located
        else:
            draft.set("gpu.count", total, chosen.line)
        if chosen.memory_gib:
            draft.set("gpu.memory_gib", chosen.memory_gib, chosen.line)
        draft.add_note(alternatives_note([ask for ask, _ in options], chosen))
        instance_type, line = candidate.get("instance_type")
        if instance_type is not None:
            draft.set("instance_type", _text(instance_type), line)
        _location(draft, candidate)
        _autostop(draft, candidate)
        _capacity(draft, candidates, ordered, _reservations(data))
        set_mounts(draft, data)
        _workload(draft, data, nodes)
        labels, _ = candidate.get("labels")
        if isinstance(labels, dict):
            for key, value in labels.items():
                draft.tag(key, value)
        return [draft.build()]


def _replicas(data: LineMap, nodes: int | None) -> tuple[int | None, str | None]:
    """A SkyServe service runs `replicas` copies, or autoscales from `replica_policy.min_replicas`
    (at least one) to `max_replicas`: counted at its minimum, the maximum in the note."""
    service = data.get("service")
    if not isinstance(service, LineMap) or nodes is None:
        return nodes, None
    policy = service.get("replica_policy")
    most = as_number(policy.get("max_replicas")) if isinstance(policy, LineMap) else None
    for holder, key in ((policy, "min_replicas"), (service, "replicas"), (policy, "max_replicas")):
        if isinstance(holder, LineMap) and key in holder:
            count = as_number(holder[key])
            if count is None:
                return None, None
            least = max(int(count), 1)
            note = None
            if most is not None and int(most) > least:
                note = f"autoscales from {int(count)} to {int(most)} replicas; counted at {least}"
            return nodes * least, note
    return nodes, None


def _workload(draft: JobDraft, data: LineMap, nodes: int | None) -> None:
    kind = None
    if "service" in data:
        kind = Kind(Workload.INFERENCE, "a SkyServe `service`", data.line_of("service"))
        if nodes and nodes > 1 and isinstance(data.get("service"), LineMap):
            draft.add_note(f"GPUs of all {nodes} replicas")
    ran = [Ran(commands(data.get("run")), "`run`", data.line_of("run"))]
    infer(draft, ran, kind, no_command="no `run`: an interactive cluster")


def _autostop(draft: JobDraft, candidate: _Candidate) -> None:
    """`autostop: {idle_minutes: 10, down: true}` tears an idle cluster down: a bound on what it
    costs once its work is done. Without `down: true` the cluster is only stopped (its disks
    stay), which the runbook does not credit."""
    value, line = candidate.get("autostop")
    _releases(draft, value, line)
    if not isinstance(value, LineMap) or as_bool(value.get("down")) is not True:
        return
    minutes = value.get("idle_minutes", 5)  # SkyPilot's default idle time for autostop
    number = as_number(minutes) if not isinstance(minutes, str) else None
    hours = number / 60 if number is not None else unit_hours(minutes)
    if hours is not None:
        draft.set("limits.idle_stop_hours", round(hours, 4), line)
        draft.add_note(f"autostop tears the cluster down after {hours * 60:g} idle minutes")


def _releases(draft: JobDraft, value: Any, line: int | None) -> None:
    """Any `autostop` (true, minutes, `10m`, a mapping, with or without `down`) releases the
    cluster's GPUs once it is idle: a stopped cluster keeps only its disks."""
    said = as_bool(value) if isinstance(value, bool | str) else None
    if value is None or said is False:
        return
    minutes: Any = value.get("idle_minutes", 5) if isinstance(value, LineMap) else value
    if said is True:
        minutes = 5  # `autostop: true`: SkyPilot's default idle time
    number = as_number(minutes) if not isinstance(minutes, str) else None
    hours = number / 60 if number is not None else unit_hours(minutes)
    draft.set("limits.release_hours", None if hours is None else round(hours, 4), line, raw=value)


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def _candidates(base: LineMap) -> tuple[list[_Candidate], bool]:
    """The alternatives the task allows, and whether they are in order of preference."""
    for key in ("any_of", "ordered"):
        alternatives = base.get(key)
        if isinstance(alternatives, LineMap):  # a single mapping where a list was meant
            alternatives = [alternatives]
        if isinstance(alternatives, list) and alternatives:
            found = [_Candidate(alt, base) for alt in alternatives if isinstance(alt, LineMap)]
            return found or [_Candidate(base)], key == "ordered"
    return [_Candidate(base)], False


def _asks(candidate: _Candidate) -> list[GpuAsk]:
    """Every accelerator choice this alternative allows; the instance type's GPUs if none named."""
    accelerators, line = candidate.get("accelerators")
    asks: list[GpuAsk] = []
    if isinstance(accelerators, str):
        if accelerators.strip().startswith("{"):  # `"{A100:1, H100:1}"` quoted as a string
            accelerators = accelerators.strip()[1:-1].split(",")
        else:
            ask = parse_name_count(accelerators, line)
            asks += [ask] if ask else []
    if isinstance(accelerators, LineMap):
        # `{A100: 8}`, a map of alternatives `{T4: 1, L4: 1}`, or a flow set `{A100-80GB:1, H100:1}`
        for name, count in accelerators.items():
            key_line = accelerators.line_of(name)
            if count is None:
                ask = parse_name_count(str(name), key_line)
            else:
                number = as_number(count)
                ask = parse_name_count(str(name), key_line)
                if ask is not None:
                    ask = GpuAsk(ask.model, number, key_line, f"{name}:{count}")
            asks += [ask] if ask else []
    elif isinstance(accelerators, list):
        item_lines = accelerators.item_lines if isinstance(accelerators, LineList) else []
        for index, item in enumerate(accelerators):
            item_line = item_lines[index] if index < len(item_lines) else line
            ask = parse_name_count(str(item), item_line) if item is not None else None
            asks += [ask] if ask else []
    if asks or accelerators is not None:
        return asks
    instance_type, type_line = candidate.get("instance_type")
    if isinstance(instance_type, str) and not is_templated(instance_type):
        ask = instance_ask(instance_type, type_line)
        return [ask] if ask else []
    return []


def _nodes(data: LineMap) -> tuple[int | None, int | None]:
    if "num_nodes" not in data:
        return 1, None
    number = as_count(data["num_nodes"], "num_nodes", data.line_of("num_nodes"))
    return (int(number) if number is not None else None), data.line_of("num_nodes")


def _location(draft: JobDraft, candidate: _Candidate) -> None:
    region, region_line = candidate.get("region")
    zone, zone_line = candidate.get("zone")
    infra, infra_line = candidate.get("infra")
    cloud, cloud_line = candidate.get("cloud")
    if cloud is None and isinstance(infra, str):
        cloud, cloud_line = infra.strip().split("/")[0], infra_line
    if isinstance(cloud, str) and cloud.strip() and not is_templated(cloud) and cloud != "*":
        draft.set("service", billing_service(cloud), cloud_line)
    if isinstance(infra, str) and not is_templated(infra):
        parts = infra.strip().split("/")
        if parts[0].lower() not in _NO_REGION_INFRA:
            if region is None and len(parts) > 1 and parts[1] != "*":
                region, region_line = parts[1], infra_line
            if zone is None and len(parts) > 2 and parts[2] != "*":
                zone, zone_line = parts[2], infra_line
    if region is not None:
        draft.set("region", str(region), region_line)
    if zone is not None:
        draft.set("zone", str(zone), zone_line)


def _reservations(data: LineMap) -> int | None:
    """The line of `config.{aws,gcp}.specific_reservations` when it names any reservation."""
    config = data.get("config")
    for cloud in ("aws", "gcp"):
        section = config.get(cloud) if isinstance(config, dict) else None
        listed = section.get("specific_reservations") if isinstance(section, LineMap) else None
        if isinstance(section, LineMap) and isinstance(listed, list) and listed:
            return section.line_of("specific_reservations")
    return None


def _capacity(
    draft: JobDraft, candidates: list[_Candidate], ordered: bool, reservations: int | None
) -> None:
    """Spot if the optimizer may pick a spot alternative: any of `any_of`, the first of `ordered`.

    An on-demand alternative beside it is the fallback SkyPilot takes when spot is short; the
    note says so.
    """
    flags = []
    for candidate in candidates:
        value, line = candidate.get("use_spot")
        flags.append((False if value is None else as_bool(value), line))
    considered = flags[:1] if ordered else flags
    spot = [line for flag, line in considered if flag is True]
    if spot:
        draft.set("capacity", Capacity.SPOT, spot[0])
        if any(flag is False for flag, _ in flags):
            draft.add_note("spot, with an on-demand alternative as fallback")
    elif any(flag is None for flag, _ in considered):  # `use_spot: ${SPOT}`: missing, located
        draft.unknown("capacity", next(line for flag, line in considered if flag is None))
    elif reservations is not None:
        draft.set("capacity", Capacity.RESERVED, reservations)
        draft.add_note("specific reservations: on-demand when they are full")
    else:  # `use_spot` defaults to false: on-demand (SkyPilot YAML spec, `resources.use_spot`)
        draft.set("capacity", Capacity.ON_DEMAND, next((ln for _, ln in considered if ln), None))
