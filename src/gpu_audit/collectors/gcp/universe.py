"""GCP work items: `gcp:PROJECT`, from the settings or the projects the credential can list."""

from __future__ import annotations

from typing import Any

from gpu_audit.collectors.gcp.connect import Apis, _default_credentials, endpoint
from gpu_audit.collectors.gcp.rest import RestError, get_json
from gpu_audit.collectors.gcp.settings import GcpSettings
from gpu_audit.collectors.interface import ProviderUnavailable

RESOURCE_MANAGER_ENDPOINT_ENV = "GPU_AUDIT_RESOURCE_MANAGER_ENDPOINT"
DEFAULT_RESOURCE_MANAGER = "https://cloudresourcemanager.googleapis.com"
_MAX_PAGES = 10_000  # a server that always answers with a next page cannot hold a scan


def item_key(project: str) -> str:
    """The work item of a project: `gcp:PROJECT`."""
    return f"gcp:{project}"


def work_items(settings: GcpSettings, apis: Apis) -> list[str]:
    """Every work item: the configured projects, else the active ones the credential lists."""
    projects = settings.projects or discover_projects(settings, apis)
    return sorted({item_key(p) for p in projects})


def discover_projects(settings: GcpSettings, apis: Apis) -> tuple[str, ...]:
    """Active projects from Resource Manager `projects.list` (v1), every page, sorted."""
    from google.auth.transport.requests import AuthorizedSession  # keeps google off start-up

    api = endpoint(RESOURCE_MANAGER_ENDPOINT_ENV)
    credentials = apis.credentials_for(api)
    if credentials is None:  # every other endpoint was a loopback override
        credentials = _default_credentials()
    url = api.base(DEFAULT_RESOURCE_MANAGER) + "/v1/projects"
    params = {"filter": "lifecycleState:ACTIVE", "pageSize": "500"}
    found: set[str] = set()
    with AuthorizedSession(credentials) as session:
        for _ in range(_MAX_PAGES):
            try:
                page: dict[str, Any] = get_json(session, url, params, settings.timeout)
            except RestError as exc:
                raise ProviderUnavailable(
                    "ListProjectsFailed", f"gcp: listing projects (projects.list): {exc}"
                ) from exc
            for project in page.get("projects") or ():
                state = project.get("lifecycleState", "ACTIVE")
                if isinstance(project.get("projectId"), str) and state == "ACTIVE":
                    found.add(project["projectId"])
            token = page.get("nextPageToken")
            if not token:
                break
            params = {**params, "pageToken": str(token)}
    if not found:
        raise ProviderUnavailable(
            "NoProjects",
            "gcp: no projects to scan: pass --project, set gcp.projects in .gpu-audit.yaml, "
            "or grant resourcemanager.projects.list",
        )
    return tuple(sorted(found))
