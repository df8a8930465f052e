"""The names the resume and start-up readers use are the APIs' own: SageMaker's
`SecondaryStatus` and `TrainingInputMode` enums in botocore's service model, and the Pod status
members in the official Kubernetes client's models (their JSON attribute maps)."""

from __future__ import annotations

from pathlib import Path

from gpu_audit.collectors.aws.sagemaker_runs import STARTUP
from gpu_audit.collectors.kubernetes import starts


def test_the_sagemaker_statuses_and_input_modes_are_in_botocores_service_model() -> None:
    import botocore.session

    model = botocore.session.get_session().get_service_model("sagemaker")
    statuses = set(model.shape_for("SecondaryStatus").enum)
    assert {*STARTUP, "Interrupted", "Training", "Restarting"} <= statuses
    assert {"File", "FastFile", "Pipe"} <= set(model.shape_for("TrainingInputMode").enum)
    transition = model.shape_for("SecondaryStatusTransition").members
    assert {"Status", "StartTime", "EndTime"} <= set(transition)


def test_the_pod_status_members_are_the_official_clients() -> None:
    from kubernetes import client

    assert client.V1PodCondition.attribute_map["last_transition_time"] == "lastTransitionTime"
    assert client.V1ContainerStatus.attribute_map["restart_count"] == "restartCount"
    assert client.V1ContainerStatus.attribute_map["last_state"] == "lastState"
    assert client.V1ContainerStateTerminated.attribute_map["finished_at"] == "finishedAt"
    assert client.V1PodStatus.attribute_map["container_statuses"] == "containerStatuses"
    source = Path(starts.__file__).read_text()
    for name in ("lastTransitionTime", "restartCount", "lastState", "finishedAt",
                 "containerStatuses", "PodScheduled", "Ready"):  # fmt: skip
        assert f'"{name}"' in source
