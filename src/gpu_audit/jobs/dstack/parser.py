"""dstack configurations (`.dstack.yml`): tasks, services, dev environments and fleets.

`resources.gpu` is read in all its forms: `A100:80GB:8`, `H100:8`, `24GB..`, `1..8`,
`A10G,A100:2`, `nvidia:24GB`, `v5litepod-8`, an integer, or a mapping with `name`, `memory`
and `count`. Ranges are judged by the most they allow; an open count range by its lower bound.
Capacity: `reservation` (reserved), `spot_policy` (default on-demand, per dstack's reference).
Workload: by `type`; a task whose commands only start an IDE is a notebook. Checkpoints: volumes.
"""

from __future__ import annotations

import re
from dataclasses import field
from typing import Any, ClassVar, TypeVar

from gpu_audit.catalog import canonical_gpu
from gpu_audit.core.frozen import record
from gpu_audit.core.resource import Capacity, Resource, Workload
from gpu_audit.core.yamlsrc import Document, LineList, LineMap, is_templated
from gpu_audit.jobs.dstack.markers import MARKERS
from gpu_audit.jobs.evidence import Kind, Ran, infer
from gpu_audit.jobs.gpus import GpuAsk, alternatives_note, cheapest
from gpu_audit.jobs.interface import JobDraft, JobFormat, billing_service
from gpu_audit.jobs.scripts import commands, says_checkpoint, under, written_paths
from gpu_audit.jobs.values import as_bool, unit_hours

_TYPES = {
    "task": Workload.UNKNOWN,  # what its commands run says
    "service": Workload.INFERENCE,
    "dev-environment": Workload.NOTEBOOK,
    "fleet": Workload.UNKNOWN,
}
N = TypeVar("N", int, float)  # a range of whole numbers or of GiB
_VENDORS = {"nvidia", "amd", "google", "tpu", "intel", "tenstorrent"}
_MEMORY = re.compile(
    r"^(?P<low>\d+(?:\.\d+)?)?\s*(?:GB)?\s*(?P<range>\.\.)?"
    r"\s*(?:(?P<high>\d+(?:\.\d+)?)\s*GB)?$",
    re.I,
)
_COUNT = re.compile(r"^(?P<low>\d+)?\s*(?P<range>\.\.)?\s*(?P<high>\d+)?$")


@record(frozen=False)
class _GpuSpec:
    """A dstack `gpu:` request: names, memory and count ranges."""

    names: list[str] = field(default_factory=list)
    memory: tuple[float | None, float | None] | None = None  # GB, low..high
    count: tuple[int | None, int | None] | None = None  # low..high
    vendor: str | None = None


class Dstack(JobFormat):
    name: ClassVar[str] = "dstack"
    hints: ClassVar[dict[str, str]] = {
        "capacity": "set `spot_policy` to `spot`, `on-demand` or `auto` (not a template)",
        "gpu.model": "name the GPU in `resources.gpu`, e.g. `gpu: A100:8`",
    }
    fixes: ClassVar[dict[str, str]] = {
        "capacity": "set `spot_policy: spot` (or `auto`)",
        "limits.max_runtime_hours": "set `max_duration`, e.g. `max_duration: 12h`",
        "gpu.model": "ask for a smaller GPU in `resources.gpu`",
        "checkpoint.uri": "attach a network volume in `volumes` (`- name: ckpt` with `path: "
        "/checkpoints`) and save to and resume from it",
        "limits.idle_stop_hours": "set `inactivity_duration`, e.g. `inactivity_duration: 2h` (or "
        "`max_duration`)",
        "tags.*": "add the keys to `tags`",
    }

    def parse(self, document: Document, path: str) -> list[Resource] | None:
        data = document.data
        if not isinstance(data, LineMap) or data.get("type") not in _TYPES:
            return None
        if not any(key in data for key in MARKERS):
            return None
        resources = data.get("resources")
        if not isinstance(resources, LineMap) or resources.get("gpu") is None:
            return []
        line = resources.line_of("gpu")
        spec = _gpu_spec(resources["gpu"])
        if spec is None:
            return []
        low, high = spec.count or (1, 1)
        if high == 0 or (high is None and low == 0):
            return []
        name = data.get("name")
        draft = JobDraft(self.name, path, document, name=None if name is None else str(name))
        per_node = high if high is not None else low
        if high is None:
            draft.add_note(f"GPU count {low}.. has no upper bound; judged at {low}")
        asks = [_ask(name_, spec, per_node, line) for name_ in spec.names] or [
            GpuAsk(None, per_node, line, "")
        ]
        chosen = cheapest(asks)
        assert chosen is not None
        draft.set("gpu.model", chosen.model, line)
        if len(asks) > 1:
            draft.add_note(alternatives_note(asks, chosen))
        nodes = _nodes(data)
        count = None if chosen.count is None or nodes is None else int(chosen.count * nodes)
        draft.set("gpu.count", count, line)
        if spec.memory and spec.memory[0]:
            draft.set("gpu.memory_gib", spec.memory[0], line)
        _capacity(draft, data)
        _duration(draft, data)
        backends = data.get("backends")
        if isinstance(backends, list) and len(backends) == 1 and isinstance(backends[0], str):
            draft.set("service", billing_service(backends[0]), data.line_of("backends"))
        regions = data.get("regions")
        if isinstance(regions, str):
            regions = [regions]
        if isinstance(regions, list) and len(regions) == 1:
            draft.set("region", str(regions[0]), data.line_of("regions"))
        elif isinstance(regions, list) and regions:
            draft.add_note("regions " + ", ".join(map(str, regions)))
        _volumes(draft, data)
        _workload(draft, data)
        tags = data.get("tags")
        if isinstance(tags, dict):
            for key, value in tags.items():
                draft.tag(key, value)
        return [draft.build()]


def _gpu_spec(value: Any) -> _GpuSpec | None:
    if is_templated(value):
        return _GpuSpec()
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return _GpuSpec(count=(int(value), int(value)))
    if isinstance(value, str):
        return _parse_text(value)
    if isinstance(value, dict):
        spec = _GpuSpec()
        names = value.get("name")
        if isinstance(names, str):
            spec.names = [n.strip() for n in names.split(",") if n.strip()]
        elif isinstance(names, list):
            spec.names = [str(n) for n in names]
        memory = value.get("memory")
        spec.memory = _range(str(memory), _MEMORY, float) if memory is not None else None
        count = value.get("count")
        spec.count = _range(str(count), _COUNT, int) if count is not None else None
        spec.vendor = str(value["vendor"]) if value.get("vendor") else None
        return spec
    return None


def _parse_text(text: str) -> _GpuSpec:
    spec = _GpuSpec()
    for token in (t.strip() for t in text.split(":")):
        if not token:
            continue
        if token.lower() in _VENDORS:
            spec.vendor = token.lower()
        elif _COUNT.match(token) and token.strip(".") != "":
            spec.count = _range(token, _COUNT, int)
        elif "gb" in token.lower() and _MEMORY.match(token):
            spec.memory = _range(token, _MEMORY, float)
        else:
            spec.names = [n.strip() for n in token.split(",") if n.strip()]
    return spec


def _range(text: str, pattern: re.Pattern[str], kind: type[N]) -> tuple[N | None, N | None] | None:
    match = pattern.match(text.strip())
    if not match:
        return None
    low = kind(match.group("low")) if match.group("low") else None
    high = kind(match.group("high")) if match.group("high") else None
    if not match.group("range"):
        return low, low
    return low, high


def _ask(name: str, spec: _GpuSpec, count: int | None, line: int) -> GpuAsk:
    model = canonical_gpu(name)
    memory = spec.memory[1] or spec.memory[0] if spec.memory else None
    if memory:  # `A100:80GB` is the 80 GB A100
        model = canonical_gpu(f"{name}-{int(memory)}GB") or model
    if model is None and re.match(r"^v\d", name, re.I):  # TPU: `v5litepod-8`, `v3-8`
        model = canonical_gpu(f"tpu-{name}")
    label = f"{name}:{count}" if count is not None else name
    return GpuAsk(model or name, count, line, label)


def _nodes(data: LineMap) -> int | None:
    for key in ("nodes", "replicas"):
        if key in data:
            value = data[key]
            if isinstance(value, dict):  # a fleet's `nodes: {min: 1, max: 4}`
                value = value.get("max", value.get("min"))
            found = _range(str(value), _COUNT, int) if value is not None else None
            if found is None:
                return None
            low, high = found
            return high if high is not None else low
    return 1


def _capacity(draft: JobDraft, data: LineMap) -> None:
    reservation = data.get("reservation")
    if isinstance(reservation, str) and reservation.strip() and not is_templated(reservation):
        draft.set("capacity", Capacity.RESERVED, data.line_of("reservation"))
        draft.add_note(f"runs in reservation {reservation}")
        return
    if "spot_policy" not in data:
        draft.set("capacity", Capacity.ON_DEMAND)  # dstack's documented default: on-demand
        return
    policy, line = data["spot_policy"], data.line_of("spot_policy")
    text = str(policy).strip().lower()
    if text == "spot":
        draft.set("capacity", Capacity.SPOT, line)
    elif text == "auto":
        draft.set("capacity", Capacity.SPOT, line)
        draft.add_note("spot_policy auto: spot, falling back to on-demand")
    elif text == "on-demand":
        draft.set("capacity", Capacity.ON_DEMAND, line)
    else:  # templated or misspelt: missing, located
        draft.unknown("capacity", line)


def _duration(draft: JobDraft, data: LineMap) -> None:
    idle = data.get("inactivity_duration")
    if idle is not None and as_bool(idle) is not False and str(idle).strip().lower() != "off":
        hours = unit_hours(idle)
        draft.set("limits.idle_stop_hours", hours, data.line_of("inactivity_duration"))
    if "max_duration" not in data:
        return
    value, line = data["max_duration"], data.line_of("max_duration")
    if value is False or as_bool(value) is False or str(value).strip().lower() == "off":
        draft.set("limits.max_runtime_hours", None, line)  # explicitly uncapped
        return
    draft.set("limits.max_runtime_hours", unit_hours(value), line, raw=value)


def _workload(draft: JobDraft, data: LineMap) -> None:
    kind = _TYPES[data["type"]]
    line = data.line_of("type")
    if data["type"] == "fleet":
        draft.set("workload", kind, line)
        draft.add_note("a fleet: capacity for whatever runs on it")
        return
    ran = [Ran(commands(data.get("commands")), "`commands`", data.line_of("commands"))]
    if isinstance(data.get("image"), str):
        ran.append(Ran(str(data["image"]), "`image`", data.line_of("image")))
    word = {Workload.INFERENCE: "a dstack service", Workload.NOTEBOOK: "a dstack dev environment"}
    said = Kind(kind, f"{word[kind]} (`type: {data['type']}`)", line) if kind in word else None
    infer(draft, ran, said)
    if data["type"] == "task" and draft.values.get("workload") is not Workload.NOTEBOOK:
        # a task ends with its commands and releases its instances (a benchmark's run ends);
        # one that only starts an IDE or sleeps runs until stopped
        draft.set("limits.release_hours", 0.0, line)


def _volumes(draft: JobDraft, data: LineMap) -> None:
    """A volume is the checkpoint location when its path or name says so, or the commands
    write to its path with a framework flag or a copy; the note names the evidence."""
    volumes = data.get("volumes")
    writes = written_paths(commands(data.get("commands")))
    for index, volume in enumerate(volumes if isinstance(volumes, list) else []):
        if isinstance(volume, dict):
            name, path = volume.get("name"), str(volume.get("path", ""))
        elif isinstance(volume, str) and ":" in volume:
            name, path = volume.split(":", 1)
        else:
            continue
        if not name or is_templated(name):
            continue
        evidence = None
        if says_checkpoint(path):
            evidence = f"the mount path {path}"
        elif says_checkpoint(str(name)):
            evidence = f"the volume name {name}"
        else:
            evidence = next(
                (f"{how} writing to {path}" for p, how in writes if under(p, path)), None
            )
        if evidence:
            line = volumes.item_lines[index] if isinstance(volumes, LineList) else None
            draft.set("checkpoint.uri", f"volume:{name}", line)
            if not says_checkpoint(path):
                draft.add_note(f"checkpoint location from {evidence}")
            return
