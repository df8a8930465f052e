"""What a job format is, and the draft that parsers fill in field by field with the key's line."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import replace
from typing import Any, ClassVar

from gpu_audit.core.fields import FIELDS, build_resource, out_of_bounds
from gpu_audit.core.frozen import record
from gpu_audit.core.resource import Kind, Resource, SourceRef, State, Workload
from gpu_audit.core.yamlsrc import Document, is_templated
from gpu_audit.errors import InputError
from gpu_audit.jobs.gpus import gpu_name
from gpu_audit.jobs.values import as_number

# Labels or tags that declare a job's caps where its format has no field (docs/estimate.md);
# GCP label keys allow no `/`, so the dashed spelling is read too.
LIMIT_TAGS = {
    "limits.budget_usd": ("gpu-audit/budget-usd", "gpu-audit-budget-usd"),
    "limits.max_runtime_hours": ("gpu-audit/max-runtime-hours", "gpu-audit-max-runtime-hours"),
}
# A label or tag that states a job's workload where nothing it runs does (jobs/evidence.py).
WORKLOAD_TAGS = ("gpu-audit/workload", "gpu-audit-workload")
_WORKLOADS = frozenset(w.value for w in Workload if w is not Workload.UNKNOWN)
# Fields a finding may name while the config leaves them out (`canonical(..., anchored=True)`):
# with no key to point at, such a finding points at the resource's own line (`JobDraft.anchor`),
# when the parser knows it.
ANCHORED = tuple(name for name, spec in FIELDS.items() if spec.anchored)


# A cloud as job files name it → the service that bills its VMs (catalog/shapes.py prices it);
# any other provider (runpod, lambda, kubernetes …) keeps its own name and stays unpriced.
_BILLING = {"aws": "ec2", "gcp": "gce", "azure": "azure", "k8s": "kubernetes"}


def billing_service(cloud: str) -> str:
    """`aws` → `ec2`, `gcp` → `gce`, `RunPod` → `runpod`: what bills a job pinned to a cloud."""
    name = cloud.strip().lower()
    return _BILLING.get(name, name)


class JobFormat(ABC):
    """One job-config format: `parse` both recognises a document and maps it to the model.

    `hints` says, per canonical field, how to state it in this format when a rule found it
    missing (the not-evaluated section of a report shows it). `fixes` says, per canonical field
    (`tags.*` for any tag), which key of this format to change when a rule finds its value wrong:
    a finding's fix, in the file's own words; `field@service` is the fix for a file of that
    billing service (a GKE manifest, `service: gce`, selects its GPU with GKE's own label).
    """

    name: ClassVar[str]
    hints: ClassVar[dict[str, str]] = {}
    fixes: ClassVar[dict[str, str]] = {}

    @abstractmethod
    def parse(self, document: Document, path: str) -> list[Resource] | None:
        """One Resource per GPU job in the document; [] for a recognised config with no GPUs.

        None when the document is not of this format. Judge by content, never by file name alone.
        """


class TextFormat(JobFormat):
    """A format whose files are not YAML (its syntax's reader is "text"): the loader hands it
    the file's whole text; `parse` is never asked."""

    def parse(self, document: Document, path: str) -> list[Resource] | None:
        return None

    @abstractmethod
    def parse_text(self, text: str, path: str) -> list[Resource] | None:
        """One Resource per GPU job in the file; [] for one with no GPUs; None if not its own."""


# Job formats that are a billing service of their own: the service a job of the format bills.
BILLED_BY_PROVIDER = {"sagemaker": "sagemaker", "vertex": "vertex"}


@record(frozen=False)
class JobDraft:
    """A job being parsed: canonical fields set one at a time, each with the line it came from.

    `set("capacity", Capacity.SPOT, line)` records the value and that `capacity` findings point at
    `line`. Templated values (`${VAR}`, `{{ x }}`, `!Ref`) are ignored: the field stays missing,
    but its line is still kept so a finding can point at it. No field has a default here: a
    parser sets a platform's default itself, only where the platform documents it.
    """

    provider: str
    path: str
    document: Document
    name: str | None = None

    def __post_init__(self) -> None:
        self.values: dict[str, Any] = {}
        self.lines: dict[str, int] = {}
        self.tags: dict[str, str] = {}
        self.note: str | None = None
        self.anchor: int | None = None  # the resource's own line in a larger document
        # where a missing tag's finding points, in a file of several resources (a template)
        self.tags_anchor: int | None = None
        self.templated: set[str] = set()  # fields set at deploy time: not absent, not known
        self.model_gpus: int | None = None  # GPUs one copy of a served model is split over

    def set(self, field: str, value: Any, line: int | None = None, raw: Any = None) -> None:
        """Set a field read from the file; `raw`, the value as written before it was converted
        (`${DEADLINE}` before seconds became hours), says when a missing value is templated."""
        if line is not None and value is not None:  # an absent field has no line to point at
            self.lines[field] = line
        if (value is not None and is_templated(value)) or (value is None and is_templated(raw)):
            self.templated.add(field)
            if line is not None:
                self.lines[field] = line
            return
        if value is None:
            return
        self.values[field] = value

    def put(self, field: str, value: Any, line: int | None = None, raw: Any = None) -> None:
        """`set`, but a key present with no usable value (None, templated) keeps its line."""
        if value is None and line is not None:
            self.lines[field] = line
            if is_templated(raw):
                self.templated.add(field)
        else:
            self.set(field, value, line, raw)

    def mark(self, field: str, line: int | None) -> None:
        """Point `field`'s findings at this line without giving it a value."""
        if line is not None:
            self.lines[field] = line

    def unknown(self, field: str, line: int | None = None) -> None:
        """The config states this field, but not in a way we can read: missing, not the default."""
        self.mark(field, line)
        self.values[field] = None

    def default(self, field: str, value: Any) -> None:
        """The platform's documented default, for a field the config does not state at all."""
        if field not in self.values and field not in self.lines:
            self.values[field] = value

    def add_note(self, note: str | None) -> None:
        """Add to the note shown with the job's findings (`; ` between notes); None adds nothing."""
        if note:
            self.note = f"{self.note}; {note}" if self.note else note

    def tag(self, key: Any, value: Any) -> None:
        """A tag or label; one whose value is filled in at deploy time (`owner: ${NRP_USER}`) is
        set, with the template as its value: present to a rule, its value not evaluated."""
        if key is None or value is None or is_templated(key):
            return
        self.tags[str(key)] = str(value).lower() if isinstance(value, bool) else str(value)

    def get(self, field: str) -> Any:  # Any: YAML/JSON of any shape
        """The value set for `field` so far, None when unset."""
        return self.values.get(field)

    def count(self, key: str, value: Any, line: int | None, minimum: int = 1) -> int | None:
        """A count the format states that no canonical field holds (`MaxParallelTrainingJobs`,
        `parallelTrialCount`): a whole number of at least `minimum`, or one located error, as a
        field's bounds are enforced; None when absent or not a literal number."""
        number = as_number(value)
        if number is None:
            return None
        problem = out_of_bounds(number, minimum, integer=True)
        if problem is not None:
            raise InputError(f"{self.path}:{line or self.document.line}: {key}: {problem}")
        return int(number)

    def _check_numbers(self, values: dict[str, Any]) -> None:
        """A number the field table bounds (a count, hours, a budget) that is NaN, infinite or
        impossible (`replicas: .inf`, `max_duration: -5`) is refused at its line, never passed
        on to a report; a whole number read as a float (`"60"`) is stored as an integer where
        the field counts."""
        for name, value in values.items():
            spec = FIELDS.get(name)
            if spec is not None and spec.type == "str" and isinstance(value, dict | list):
                line = self.lines.get(name, self.document.line)  # `region: {a: 1}`: no text
                kind = "a mapping" if isinstance(value, dict) else "a list"
                raise InputError(f"{self.path}:{line}: {name}: expected text, got {kind}")
            if spec is None or spec.type != "number" or not isinstance(value, int | float):
                continue
            problem = spec.impossible(value)
            if problem is not None:
                line = self.lines.get(name, self.document.line)
                raise InputError(f"{self.path}:{line}: {name}: {problem}")
            if spec.integer and isinstance(value, float):
                values[name] = int(value)

    def _weights_per_gpu(self, values: dict[str, Any]) -> None:
        """A served model's weights per GPU: over its tensor-parallel GPUs, else all the job's."""
        from gpu_audit.catalog.models import (
            weights_gib,  # keeps catalog.models off check's start-up
        )

        params, precision = (
            values.get("served_model.params_b"),
            values.get("served_model.precision"),
        )
        count = values.get("gpu.count")
        gpus = self.model_gpus or count
        if params and precision and isinstance(gpus, int | float) and gpus >= 1:
            values["served_model.gib_per_gpu"] = round(weights_gib(params, precision) / gpus, 1)

    def build(self, suppressions: dict[int, dict[str, str]] | None = None) -> Resource:
        """The Resource the draft describes: numbers checked, the GPU name made canonical, weights
        per GPU derived, unstated fields located at the resource's line, limits read from tags and
        the workload from a `gpu-audit/workload` label; InputError for an impossible tag value."""
        values = dict(self.values)
        self._check_numbers(values)
        model = values.get("gpu.model")
        values["gpu.model"] = gpu_name(model) if isinstance(model, str) else None
        self._weights_per_gpu(values)
        if values.get("data.uris"):
            values["data.uris"] = tuple(values["data.uris"])
        else:
            values.pop("data.uris", None)
        lines = dict(self.lines)
        if self.anchor is not None:  # a finding about an unstated field points at the resource
            for name in ANCHORED:
                lines.setdefault(name, self.anchor)
        if self.tags_anchor is not None:
            lines.setdefault("tags", self.tags_anchor)
        source = SourceRef(
            path=self.path,
            line=self.document.line,
            document=self.document.index,
            key_lines=lines,
            suppressions=suppressions or {},
            note=self.note,
            templated=frozenset(f for f in self.templated if values.get(f) is None),
        )
        # A managed ML service's job is billed on the service's own rate card, as `scan` prices
        # the same job (a legacy AI Platform job says `ai-platform` itself).
        if self.provider in BILLED_BY_PROVIDER:
            values.setdefault("service", BILLED_BY_PROVIDER[self.provider])
        # No capacity default: a parser states the platform's own, where it documents one.
        for field, keys in LIMIT_TAGS.items():  # for formats with no field of their own
            for key in keys:
                number = as_number(self.tags.get(key))
                if number is not None and number >= 0:
                    problem = FIELDS[field].impossible(number)  # a tag is bounded as a key is
                    if problem is not None:
                        raise InputError(f"{self.path}:{self.document.line}: tag {key}: {problem}")
                    values.setdefault(field, number)
        # No evidence, no workload: rules scoped on one are not evaluated (jobs/evidence.py),
        # unless a `gpu-audit/workload` label or tag says what the job is.
        values["workload"] = Workload(values.get("workload", Workload.UNKNOWN))
        stated = next((self.tags[k] for k in WORKLOAD_TAGS if k in self.tags), None)
        if values["workload"] is Workload.UNKNOWN and stated in _WORKLOADS:
            values["workload"] = Workload(stated)
            note = f"workload {stated}: the `gpu-audit/workload` label"
            source = replace(source, note=f"{source.note}; {note}" if source.note else note)
        return build_resource(
            values,
            kind=Kind.JOB,
            provider=self.provider,
            id=self.name or f"{self.path}#{self.document.index + 1}",
            name=self.name,
            state=State.DEFINED,
            tags=dict(self.tags),
            source=source,
        )
