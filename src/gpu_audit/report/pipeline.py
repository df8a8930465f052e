"""The Azure Pipelines run a SARIF log belongs to, for GitHub Advanced Security for Azure DevOps.

Its ingestion identifies a run by `automationDetails.id`, `azuredevops/pipeline/build/` and then
`<organization>/<project id>/<definition id>/<phase id>/<branch>/<build id>`, and four
properties beside it: the build definition's id and name, and the phase's id and name.
Microsoft's SARIF Multitool holds them as rules GHAzDO1019 and GHAzDO1020 (microsoft/sarif-sdk,
`src/Sarif.Multitool.Library/Rules/GHAzDO10{19,20}*.cs` and `AdoPipelineContext.cs`, read
2026-11-27). Every value comes from the pipeline's predefined variables: an agent sets `TF_BUILD`
to `True` and the rest (learn.microsoft.com/azure/devops/pipelines/build/variables).

Outside a pipeline there is no identity, and the log keeps its own `gpu-audit/<command>/<time>` id
(GitHub's analysis category). Inside one, a variable missing or malformed would give a log the
ingestion drops, so it is one located error, raised before any work.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from urllib.parse import urlsplit

from gpu_audit.core.frozen import record
from gpu_audit.errors import ConfigError

PREFIX = "azuredevops/pipeline/build/"
PROPERTY = {
    "definition_id": f"{PREFIX}buildDefinitionId",
    "definition_name": f"{PREFIX}buildDefinitionName",
    "phase_id": f"{PREFIX}phaseId",
    "phase_name": f"{PREFIX}phaseName",
}
# (the field, its variables in the order read); an agent sets both names of the definition id,
# which must agree, while a YAML job's phase and job ids routinely differ: the first is taken
_VARIABLES = (
    ("collection", ("SYSTEM_COLLECTIONURI",)),
    ("project", ("SYSTEM_TEAMPROJECTID",)),
    ("definition_id", ("BUILD_DEFINITIONID", "SYSTEM_DEFINITIONID")),
    ("definition_name", ("BUILD_DEFINITIONNAME",)),
    ("build_id", ("BUILD_BUILDID",)),
    ("phase_id", ("SYSTEM_PHASEID", "SYSTEM_JOBID")),
    ("phase_name", ("SYSTEM_PHASENAME", "SYSTEM_JOBNAME")),
    ("branch", ("BUILD_SOURCEBRANCH",)),
)
_GUID = re.compile(r"[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}\Z")
_ZERO_GUID = "00000000-0000-0000-0000-000000000000"


@record
class Pipeline:
    """One Azure Pipelines job's identity, as the ingestion reads it."""

    organization: str
    project: str
    definition_id: int
    definition_name: str
    build_id: int
    phase_id: str
    phase_name: str
    branch: str

    @property
    def automation_id(self) -> str:
        """The SARIF automation id of the run: organization/project/definition/phase, branch and
        build, after PREFIX."""
        parts = (self.organization, self.project, self.definition_id, self.phase_id)
        head = "/".join(str(part) for part in parts)
        return f"{PREFIX}{head}/{self.branch}/{self.build_id}"

    def automation_details(self, category: str) -> dict[str, object]:
        """`run.automationDetails`: the pipeline's id and properties; `category` (gpu-audit's own
        `gpu-audit/<command>`) kept as a property, so check and scan logs stay told apart."""
        return {
            "id": self.automation_id,
            "properties": {
                PROPERTY["definition_id"]: str(self.definition_id),
                PROPERTY["definition_name"]: self.definition_name,
                PROPERTY["phase_id"]: self.phase_id,
                PROPERTY["phase_name"]: self.phase_name,
                "gpuAudit/category": category,
            },
        }


def detect(environ: Mapping[str, str]) -> Pipeline | None:
    """The pipeline this process runs in: None outside one (no `TF_BUILD`, or none of its
    variables set); ConfigError naming every variable missing or malformed when some are."""
    if environ.get("TF_BUILD", "").strip().lower() not in ("true", "1"):
        return None
    values: dict[str, str] = {}
    problems: list[str] = []
    for field, names in _VARIABLES:
        given = [(name, environ.get(name, "").strip()) for name in names]
        set_ = [(name, value) for name, value in given if value]
        if not set_:
            problems.append(f"{names[0]} is not set")
            continue
        name, value = set_[0]
        if field == "definition_id" and len({value for _, value in set_}) > 1:
            problems.append(f"{' and '.join(n for n, _ in set_)} differ")
            continue
        problem = _malformed(field, value)
        if problem:
            problems.append(f"{name}={value[:80]!r} {problem}")
        values[field] = value
    if len(problems) == len(_VARIABLES) and all("not set" in p for p in problems):
        return None  # TF_BUILD alone: not an agent's environment
    if problems:
        raise ConfigError(
            "sarif: TF_BUILD says this is an Azure Pipelines run, but its identity is incomplete "
            f"({'; '.join(problems)}): Advanced Security would drop the log; unset TF_BUILD "
            "outside a pipeline"
        )
    return Pipeline(
        organization=_organization(values["collection"]) or "",
        project=values["project"].lower(),
        definition_id=int(values["definition_id"]),
        definition_name=values["definition_name"],
        build_id=int(values["build_id"]),
        phase_id=values["phase_id"].lower(),
        phase_name=values["phase_name"],
        branch=_branch(values["branch"]),
    )


def _malformed(field: str, value: str) -> str | None:
    if field == "collection" and _organization(value) is None:
        return "is not an organization's URL (https://dev.azure.com/ORG/ or ORG.visualstudio.com)"
    if field in ("project", "phase_id") and not (_GUID.match(value) and value != _ZERO_GUID):
        return "is not a GUID"
    if field in ("definition_id", "build_id") and not (value.isascii() and value.isdigit()):
        return "is not a positive number"
    if field in ("definition_id", "build_id") and int(value) <= 0:
        return "is not a positive number"
    return None


def _organization(url: str) -> str | None:
    """The organization in a collection URL: `https://dev.azure.com/ORG/` (or `vsrm.dev…`), or
    the older `https://ORG.visualstudio.com/`."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    host = (parts.hostname or "").lower()
    if parts.scheme not in ("https", "http") or not host:
        return None
    if host in ("dev.azure.com", "vsrm.dev.azure.com"):
        first = parts.path.strip("/").split("/")[0]
        return first or None
    if host.endswith(".visualstudio.com"):
        name = host.removesuffix(".visualstudio.com").removesuffix(".vsrm")
        return name if name and "." not in name else None
    return None


def _branch(ref: str) -> str:
    """A full ref, as the ingestion keys it: `main` is `refs/heads/main`; pull-request and tag
    refs (`refs/pull/7/merge`) stay as they are."""
    return ref if ref.startswith("refs/") else f"refs/heads/{ref}"
