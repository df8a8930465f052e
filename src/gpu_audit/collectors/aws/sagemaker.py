"""SageMaker in one (account × region): the payloads of live GPU capacity, read-only.

Calls for N resources of each kind (P = ceil(N / 100), G = those on GPU instance types):
- training jobs in progress: `Search` (TrainingJob, status InProgress) returns each job's full
  description with its tags, 100 a page: P calls. Trials of a tuning job are left to their tuning
  job, so their GPUs are counted once.
- tuning jobs in progress: `ListHyperParameterTuningJobs` (P), then per job
  `DescribeHyperParameterTuningJob` and `ListTags` (2N; Search does not cover every region).
- notebook instances in service: `ListNotebookInstances` (P), then `ListTags` per GPU one (G).
- endpoints in service: `Search` (Endpoint, status InService) with tags (P), then
  `DescribeEndpointConfig` once per endpoint config holding the variants' instance types.
- HyperPod clusters: `ListClusters` (P), `DescribeCluster` per cluster (N), `ListTags` per GPU
  cluster (G).
GPU utilization for training jobs and endpoints joins the region's EC2 `GetMetricData` batch.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from gpu_audit.catalog import instance_spec
from gpu_audit.collectors.aws.sagemaker_map import Found, SageMakerMapper, tag_map

PAGE = 100  # the List and Search APIs' MaxResults


def _pages(call: Any, key: str, **params: Any) -> Iterator[dict[str, Any]]:
    """Every item under `key` of a NextToken-paginated SageMaker call."""
    token: str | None = None
    while True:
        page = call(**params, **({"NextToken": token} if token else {}))
        yield from page.get(key) or ()
        token = page.get("NextToken")
        if not token:
            return


def _search(client: Any, resource: str, status_field: str, status: str) -> Iterator[dict[str, Any]]:
    expression = {"Filters": [{"Name": status_field, "Operator": "Equals", "Value": status}]}
    for result in _pages(
        client.search,
        "Results",
        Resource=resource,
        SearchExpression=expression,
        MaxResults=PAGE,
    ):
        found = result.get(resource)
        if found:
            yield found


def training_jobs(client: Any) -> list[dict[str, Any]]:
    """Training jobs in progress (with `Tags`), not counting the trials of a tuning job."""
    jobs = _search(client, "TrainingJob", "TrainingJobStatus", "InProgress")
    return [job for job in jobs if not job.get("TuningJobArn")]


def tuning_jobs(client: Any) -> list[dict[str, Any]]:
    """Tuning jobs in progress: their descriptions, with `Tags` added."""
    found = []
    for summary in _pages(
        client.list_hyper_parameter_tuning_jobs,
        "HyperParameterTuningJobSummaries",
        StatusEquals="InProgress",
        MaxResults=PAGE,
    ):
        name = summary["HyperParameterTuningJobName"]
        job = client.describe_hyper_parameter_tuning_job(HyperParameterTuningJobName=name)
        job["Tags"] = tags(client, job["HyperParameterTuningJobArn"])
        found.append(job)
    return found


def notebooks(client: Any) -> list[dict[str, Any]]:
    """Notebook instances in service (summaries: name, ARN, type, times)."""
    return list(
        _pages(
            client.list_notebook_instances,
            "NotebookInstances",
            StatusEquals="InService",
            MaxResults=PAGE,
        )
    )


def endpoints(client: Any) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Endpoints in service with their tags, each with its endpoint config (instance types)."""
    configs: dict[str, dict[str, Any]] = {}
    found = []
    for endpoint in _search(client, "Endpoint", "EndpointStatus", "InService"):
        name = endpoint.get("EndpointConfigName") or ""
        if name not in configs:
            configs[name] = client.describe_endpoint_config(EndpointConfigName=name)
        found.append((endpoint, configs[name]))
    return found


def clusters(client: Any) -> list[dict[str, Any]]:
    """HyperPod clusters in service: their descriptions (instance groups)."""
    found = []
    for summary in _pages(client.list_clusters, "ClusterSummaries", MaxResults=PAGE):
        if summary.get("ClusterStatus") not in ("InService", "Updating"):
            continue
        found.append(client.describe_cluster(ClusterName=summary["ClusterName"]))
    return found


def tags(client: Any, arn: str) -> list[dict[str, str]]:
    """Every tag of the SageMaker resource `arn`, all pages (ListTags)."""
    return list(_pages(client.list_tags, "Tags", ResourceArn=arn, MaxResults=PAGE))


def _training(client: Any, mapper: SageMakerMapper) -> list[Found | None]:
    return [mapper.training_job(job) for job in training_jobs(client)]


def _tuning(client: Any, mapper: SageMakerMapper) -> list[Found | None]:
    return [mapper.tuning_job(job) for job in tuning_jobs(client)]


def _notebooks(client: Any, mapper: SageMakerMapper) -> list[Found | None]:
    found = []
    for summary in notebooks(client):
        if instance_spec(summary.get("InstanceType")) is not None:  # tags for GPU ones only
            arn = summary["NotebookInstanceArn"]
            found.append(mapper.notebook(summary, tag_map(tags(client, arn))))
    return found


def _endpoints(client: Any, mapper: SageMakerMapper) -> list[Found | None]:
    found: list[Found | None] = []
    for endpoint, config in endpoints(client):
        found += mapper.endpoint(endpoint, config)
    return found


def _clusters(client: Any, mapper: SageMakerMapper) -> list[Found | None]:
    found: list[Found | None] = []
    for cluster in clusters(client):
        if any(instance_spec(g.get("InstanceType")) for g in cluster.get("InstanceGroups") or ()):
            found += mapper.cluster(cluster, tag_map(tags(client, cluster["ClusterArn"])))
    return found


# The region's lists, independent of each other (the scan runs them at once), in report order:
# the first that fails names the region's SageMaker gap.
LISTS: dict[str, Callable[[Any, SageMakerMapper], list[Found | None]]] = {
    "training": _training,
    "tuning": _tuning,
    "notebooks": _notebooks,
    "endpoints": _endpoints,
    "clusters": _clusters,
}


def read_list(name: str, client: Any, mapper: SageMakerMapper) -> list[Found]:
    """The live SageMaker GPU resources of one of the region's LISTS, translated."""
    return [item for item in LISTS[name](client, mapper) if item is not None]
