"""Job-config parsers: one module per format, each mapping a config to `Resource(kind=job)`.

`load_jobs(paths)` reads every file, splits it into YAML documents, and has each format in
`FORMATS` (in order) whose markers may claim a document parse it, until one recognises it
(returns a list, not None). Files that are no job config, or that hold no GPU job, are skipped
with a reason; files that cannot be read are skipped with `error=True` and a `file:line:col:
message` reason. One bad file never stops the others.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence

from gpu_audit.core.frozen import record
from gpu_audit.core.lazyre import lazy
from gpu_audit.core.resource import Resource
from gpu_audit.core.results import Skipped
from gpu_audit.core.yamlguard import printable
from gpu_audit.core.yamlsrc import Document, load_documents, read_text
from gpu_audit.errors import InputError
from gpu_audit.jobs import helm
from gpu_audit.jobs.azureml.markers import is_azureml
from gpu_audit.jobs.batch import markers as batch
from gpu_audit.jobs.determined import markers as determined
from gpu_audit.jobs.dstack import markers as dstack
from gpu_audit.jobs.hydra import markers as hydra
from gpu_audit.jobs.kubernetes import markers as kubernetes
from gpu_audit.jobs.lazy import LazyFormat
from gpu_audit.jobs.misspelt import misspelt_key
from gpu_audit.jobs.ray.markers import is_cluster
from gpu_audit.jobs.sagemaker import markers as sagemaker
from gpu_audit.jobs.skypilot.markers import is_task
from gpu_audit.jobs.slurm import markers as slurm
from gpu_audit.jobs.suppress import parse_suppressions
from gpu_audit.jobs.syntax import OPENING, YAML
from gpu_audit.jobs.values import NotWhole
from gpu_audit.jobs.vertex import markers as vertex
from gpu_audit.jobs.wandb import markers as wandb

__all__ = ["FORMATS", "JobLoad", "format_fix", "format_hints", "load_jobs"]

# Detection order: the most specific markers first. SageMaker before Kubernetes (it claims the
# SageMaker operator's CRDs); SkyPilot, recognised by its closed set of plain keys, last. Each
# format's markers are imported here; its parser only when a document may be its own (lazy.py).
FORMATS: dict[str, LazyFormat] = {
    "sagemaker": LazyFormat(
        "sagemaker", sagemaker.claims, "gpu_audit.jobs.sagemaker.parser:SageMaker", "SageMaker"
    ),
    "vertex": LazyFormat(
        "vertex", vertex.claims, "gpu_audit.jobs.vertex.parser:Vertex", "Vertex AI"
    ),
    "batch": LazyFormat("batch", batch.claims, "gpu_audit.jobs.batch.parser:Batch", "AWS Batch"),
    "kubernetes": LazyFormat(
        "kubernetes", kubernetes.claims, "gpu_audit.jobs.kubernetes.parser:Kubernetes", "Kubernetes"
    ),
    "dstack": LazyFormat("dstack", dstack.claims, "gpu_audit.jobs.dstack.parser:Dstack", "dstack"),
    "ray": LazyFormat("ray", is_cluster, "gpu_audit.jobs.ray.parser:RayCluster", "Ray"),
    "azureml": LazyFormat(
        "azureml", is_azureml, "gpu_audit.jobs.azureml.parser:AzureML", "Azure ML"
    ),
    "wandb": LazyFormat("wandb", wandb.claims, "gpu_audit.jobs.wandb.parser:WandbSweep", "W&B"),
    "hydra": LazyFormat(
        "hydra", hydra.claims, "gpu_audit.jobs.hydra.parser:HydraOptuna", "Hydra Optuna"
    ),
    "determined": LazyFormat(
        "determined", determined.claims, "gpu_audit.jobs.determined.parser:Determined", "Determined"
    ),
    "skypilot": LazyFormat(
        "skypilot", is_task, "gpu_audit.jobs.skypilot.parser:SkyPilot", "SkyPilot"
    ),
    "slurm": LazyFormat(
        "slurm", slurm.claims, "gpu_audit.jobs.slurm.parser:Slurm", "Slurm", slurm.SYNTAX
    ),
}


def format_hints(name: str) -> dict[str, str]:
    """How to state a missing field in this job format (empty for any other provider)."""
    fmt = FORMATS.get(name)
    return fmt.hints if fmt is not None else {}


def format_fix(name: str, field: str, service: str | None = None) -> str | None:
    """Which key of this job format states `field` (a finding's fix); None when it says none.
    A `field@service` entry is the fix for a file of that service (a GKE manifest selects its
    GPU with `cloud.google.com/gke-accelerator`, not `nvidia.com/gpu.product`)."""
    fmt = FORMATS.get(name)
    if fmt is None:
        return None
    fixes = fmt.fixes
    own = fixes.get(f"{field}@{service}") if service else None
    return own or fixes.get(field) or (fixes.get("tags.*") if field.startswith("tags.") else None)


@record
class JobLoad:
    """The job files read: their resources and what was skipped."""

    resources: tuple[Resource, ...]
    skipped: tuple[Skipped, ...]
    files: tuple[str, ...]


def load_jobs(paths: Sequence[str], contents: Mapping[str, bytes] | None = None) -> JobLoad:
    """Every GPU job in these files, and every file that held none (with the reason).

    `contents` gives the bytes of some paths (a file at a git revision, read by `diff`): those
    are parsed as if read from disk, under the path given for them in messages.
    """
    resources: list[Resource] = []
    skipped: list[Skipped] = []
    for path in paths:
        try:
            found, skip = _load_file(path, None if contents is None else contents.get(path))
        except InputError as exc:
            skipped.append(
                Skipped(path=path, reason=str(exc), error=True, line=_error_line(str(exc), path))
            )
            continue
        resources.extend(found)
        if skip is not None:
            skipped.append(skip)
    return JobLoad(tuple(resources), tuple(skipped), tuple(paths))


def _load_file(path: str, raw: bytes | None = None) -> tuple[list[Resource], Skipped | None]:
    text = read_text(path, raw)
    textual = _text_format(path, text)
    if textual is not None:
        return _load_text(textual, path, text)
    note = None
    try:
        documents = load_documents(path, text)
    except InputError as exc:
        if not _yaml_name(path):
            return [], Skipped(
                path=path, reason=f"not a YAML or JSON file ({_problem(str(exc), path)})"
            )
        if not helm.looks_templated(text):
            raise
        try:
            documents = load_documents(path, helm.neutralise(text))
        except InputError:
            line = helm.first_template_line(text)
            reason = (
                f"a Helm/Go template ({{{{ }}}} on line {line}) that is not valid YAML until "
                f"rendered: {_problem(str(exc), path)}; check the output of `helm template` instead"
            )
            return [], Skipped(path=path, reason=reason, line=line)
        note = "template: `{{ }}` values read as missing"
    if not any(isinstance(d.data, dict) for d in documents):
        what = "an empty file" if not documents or all(d.data is None for d in documents) else ""
        return [], Skipped(path=path, reason=what or "not a job config: no YAML/JSON mapping")
    suppressions = parse_suppressions(text)
    resources: list[Resource] = []
    recognised: list[str] = []
    if "ConfigMap" in text:  # it may hold the config a job's command names (jobs/knobs)
        # keeps jobs.knobs.follow off check's start-up
        from gpu_audit.jobs.knobs.follow import CONFIG_MAPS, config_maps

        token = CONFIG_MAPS.set(config_maps(documents))
        try:
            parsed = [_parse(document, path) for document in documents]
        finally:
            CONFIG_MAPS.reset(token)
    else:
        parsed = [_parse(document, path) for document in documents]
    for found in parsed:
        if found is None:
            continue
        recognised.append(found[0])
        for resource in found[1]:
            resources.append(_finish(resource, suppressions, note))
    if resources:
        return resources, None
    if not recognised:
        for document in documents:
            misspelt = misspelt_key(document, path)
            if misspelt is not None:
                return [], Skipped(path=path, reason=misspelt[1], error=True, line=misspelt[0])
    reason = _no_job_reason(documents, recognised)
    if note:
        line = helm.first_template_line(text)
        reason = (
            f"a Helm/Go template ({{{{ }}}} on line {line}) read with its values missing: {reason}"
        )
        reason += "; check the output of `helm template` instead"
    return [], Skipped(path=path, reason=reason)


# The formats whose files are not YAML (their syntax reads text), asked first, in FORMATS' order.
TEXT_FORMATS = tuple(fmt for fmt in FORMATS.values() if fmt.syntax.reader != "yaml")


def _text_format(path: str, text: str) -> LazyFormat | None:
    """The text format whose syntax claims this file: by its name, or, for a name no YAML
    suffix gives, by its opening (`#SBATCH` in a `.sh` script)."""
    name = path.rsplit("/", 1)[-1]
    for fmt in TEXT_FORMATS:
        syntax = fmt.syntax
        if syntax.named(name) or (not YAML.named(name) and syntax.opens(text[:OPENING])):
            return fmt
    return None


def _load_text(fmt: LazyFormat, path: str, text: str) -> tuple[list[Resource], Skipped | None]:
    """A text format's file: its parser's resources, with its own comment syntax's ignores."""
    try:
        parsed = fmt.parse_text(text, path)
    except InputError:
        raise
    except NotWhole as exc:
        raise InputError(f"{path}:{exc.line or 1}: {exc}") from None
    except Exception as exc:  # a parser bug must not stop the other files; it is reported
        raise InputError(parser_failure(path, 1, f"{fmt.name} parser", exc)) from exc
    if parsed is None:
        return [], Skipped(path=path, reason=f"not a {fmt.title} file: {fmt.syntax.first_line}")
    syntax = fmt.syntax
    suppressions = parse_suppressions(text, syntax.comment, syntax.directives)
    resources = [_finish(r, suppressions, None) for r in parsed if r.gpu.count != 0]
    if resources:
        return resources, None
    article = "an" if fmt.title[0].lower() in "aeiou" else "a"
    return [], Skipped(path=path, reason=f"{article} {fmt.title} script that requests no GPUs")


_YAML_NAME = lazy(r"\.(ya?ml|json)(\b|$)|\.(ya?ml|json)[-.]\w+$", re.IGNORECASE)


def _yaml_name(path: str) -> bool:
    """Is this file meant to be YAML or JSON (`x.yaml`, `x.json`, `x.yaml-template`, `x.yml.j2`)?

    Other files (`main.tf`, `train.py`) that do not parse are not job configs, not errors.
    Files with no extension count as YAML.
    """
    name = path.rsplit("/", 1)[-1]
    return "." not in name or bool(_YAML_NAME.search(name))


def parser_failure(path: str, line: int, stage: str, exc: Exception) -> str:
    """One located line for a failed parser: a hostile value says so, a bug asks for a report."""
    detail = printable(f"{type(exc).__name__}: {exc}", 160)
    if isinstance(exc, OverflowError | ValueError) and _NUMERIC.search(str(exc)):
        return f"{path}:{line}: {stage}: a number in this document is out of range ({detail})"
    if isinstance(exc, TypeError) and "unhashable" in str(exc):
        return f"{path}:{line}: {stage}: a list or mapping where a name was expected ({detail})"
    return (
        f"{path}:{line}: {stage} failed on this document ({detail}); "
        "please report this as a gpu-audit bug"
    )


_NUMERIC = lazy(r"float|int|infinity|NaN|digits|out of range", re.I)


def _parse(document: Document, path: str) -> tuple[str, list[Resource]] | None:
    """The first format that recognises the document, and what it parsed; None if none does."""
    if not isinstance(document.data, dict):
        return None
    for fmt in FORMATS.values():
        try:
            parsed = fmt.parse(document, path)
        except InputError:
            raise  # already one located line (an impossible value)
        except NotWhole as exc:  # a fractional count, at its key's line
            raise InputError(f"{path}:{exc.line or document.line}: {exc}") from None
        except Exception as exc:  # a parser bug must not stop the other files; it is reported
            stage = f"{fmt.name} parser"
            raise InputError(parser_failure(path, document.line, stage, exc)) from exc
        if parsed is not None:  # zero GPUs is no GPU job, whatever the format (a CLI skeleton)
            return fmt.name, [r for r in parsed if r.gpu.count != 0]
    return None


def _finish(
    resource: Resource, suppressions: dict[int, dict[str, str]], note: str | None
) -> Resource:
    source = resource.source
    if suppressions and not source.suppressions:
        source = dataclasses.replace(source, suppressions=suppressions)
    if note:
        source = dataclasses.replace(source, note=f"{source.note}; {note}" if source.note else note)
    return resource if source is resource.source else dataclasses.replace(resource, source=source)


def _no_job_reason(documents: list[Document], recognised: list[str]) -> str:
    if recognised:
        names = ", ".join(sorted(set(recognised)))
        article = "an" if names[0] in "aeiou" else "a"
        return f"{article} {names} config that requests no GPUs"
    return "not a job config of a supported format (" + ", ".join(FORMATS) + ")"


_LOCATED = lazy(r":(\d+)(?::\d+)?: ")


def _error_line(message: str, path: str) -> int | None:
    match = _LOCATED.match(message[len(path) :]) if message.startswith(path) else None
    return int(match.group(1)) if match else None


def _problem(message: str, path: str) -> str:
    """The message of a located error without its `file:line:col: ` prefix."""
    if message.startswith(path):
        rest = message[len(path) :]
        match = _LOCATED.match(rest)
        return rest[match.end() :] if match else rest.lstrip(": ")
    return message
