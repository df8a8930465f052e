"""SageMaker training jobs and tuning sweeps that ran in the period (`scan --since`), read-only.

Calls for T tuning jobs touched in the period with N trials in it, and J training jobs alone
that ended in it (P(x) = ceil(x / 100), the lists' page):
- `ListHyperParameterTuningJobs` filtered server-side on `LastModifiedTimeAfter`: P(T).
- per tuning job, `ListTrainingJobsForHyperParameterTuningJob` (its trials' names, states and
  times; no billable time): P(trials) each. Only trials still running or ended in the period
  are described: `DescribeTrainingJob` N times (`BillableTimeInSeconds`, `TrainingTimeInSeconds`,
  `SecondaryStatusTransitions`, `CheckpointConfig`).
- `ListTrainingJobs` filtered on `LastModifiedTimeAfter`: P(J + trials), then `DescribeTrainingJob`
  for each ended job that is no trial already read: J; and `ListTags` for each of those that
  checkpoints (its stated interval, `gpu-audit/checkpoint-interval-minutes`, is a tag): at most J.
Throttling and paging: the region's one client carries the scan's retry configuration, and each
listing follows NextToken to the end.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import replace
from datetime import UTC, datetime
from itertools import pairwise
from typing import Any

from gpu_audit.catalog import instance_spec, price, rate_cards
from gpu_audit.catalog.lostwork import INTERVAL_TAGS
from gpu_audit.collectors.aws.sagemaker import PAGE, tags
from gpu_audit.collectors.aws.sagemaker_map import SERVICE, first_gpu_group
from gpu_audit.core.resource import Capacity
from gpu_audit.core.runs import Outcome, Sweep, TrialRun

_OUTCOMES = {
    "Completed": Outcome.COMPLETED,
    "Stopped": Outcome.STOPPED,
    "Failed": Outcome.FAILED,
    "InProgress": Outcome.RUNNING,
    "Stopping": Outcome.RUNNING,
}
_ENDED = ("Completed", "Stopped", "Failed")


def _pages(call: Any, key: str, **params: Any) -> Iterator[dict[str, Any]]:
    token: str | None = None
    seen: set[str] = set()
    while True:
        page = call(**params, **({"NextToken": token} if token else {}))
        yield from page.get(key) or ()
        token = page.get("NextToken")
        if not token or token in seen:
            return
        seen.add(token)


def _time(value: Any) -> datetime | None:
    return value.astimezone(UTC) if isinstance(value, datetime) else None


def _in_period(summary: Mapping[str, Any], since: datetime) -> bool:
    """A trial still running, or one that ended in the period."""
    if summary.get("TrainingJobStatus") not in _ENDED:
        return True
    ended = _time(summary.get("TrainingEndTime"))
    return ended is None or ended >= since


def _transitions(job: Mapping[str, Any], instances: int) -> tuple[int, int, float]:
    """(interruptions, restarts, instance-seconds of training that ended interrupted)."""
    steps = list(job.get("SecondaryStatusTransitions") or ())
    interruptions = sum(1 for s in steps if s.get("Status") == "Interrupted")
    restarts = sum(1 for s in steps if s.get("Status") == "Restarting")
    lost = 0.0
    for step, following in pairwise(steps):
        if step.get("Status") == "Training" and following.get("Status") == "Interrupted":
            start, end = _time(step.get("StartTime")), _time(step.get("EndTime"))
            if start and end and end > start:
                lost += (end - start).total_seconds() * instances
    return interruptions, restarts, lost


def _seconds(step: Mapping[str, Any]) -> float | None:
    start, end = _time(step.get("StartTime")), _time(step.get("EndTime"))
    return (end - start).total_seconds() if start and end and end >= start else None


def resumes(job: Mapping[str, Any]) -> tuple[float, int]:
    """(summed wall seconds, count) from the end of each `Interrupted` transition to the start
    of the next `Training`: the wait for capacity is the `Interrupted` transition itself."""
    steps = list(job.get("SecondaryStatusTransitions") or ())
    total, count = 0.0, 0
    for index, step in enumerate(steps):
        if step.get("Status") != "Interrupted":
            continue
        ended = _time(step.get("EndTime"))
        following = next((s for s in steps[index + 1 :] if s.get("Status") == "Training"), None)
        began = _time(following.get("StartTime")) if following else None
        if ended is not None and began is not None and began >= ended:
            total += (began - ended).total_seconds()
            count += 1
    return total, count


STARTUP = ("Downloading", "DownloadingTrainingImage")


def startup(job: Mapping[str, Any]) -> float | None:
    """Wall seconds of the billed start-up phases; None where the job states no transitions."""
    steps = list(job.get("SecondaryStatusTransitions") or ())
    if not steps:
        return None
    return sum(_seconds(s) or 0.0 for s in steps if s.get("Status") in STARTUP)


def input_mode(job: Mapping[str, Any]) -> str | None:
    """`File` where the algorithm or any channel copies its data first, else the mode stated."""
    modes = {
        str(c.get("InputMode")) for c in job.get("InputDataConfig") or () if c.get("InputMode")
    }
    stated = (job.get("AlgorithmSpecification") or {}).get("TrainingInputMode")
    if stated and not modes:
        modes.add(str(stated))
    return "File" if "File" in modes else (sorted(modes)[0] if modes else None)


def trial_run(job: Mapping[str, Any], region: str) -> TrialRun | None:
    """A DescribeTrainingJob answer as a run; None for a job on no GPU instance type."""
    instance_type, instances = first_gpu_group(job.get("ResourceConfig") or {})
    spec = instance_spec(instance_type)
    if spec is None or instances < 1:
        return None
    quote = price(instance_type, region, cards=rate_cards(SERVICE, "training"))
    billable = job.get("BillableTimeInSeconds")
    training = job.get("TrainingTimeInSeconds")
    interruptions, restarts, lost = _transitions(job, instances)
    resumed, resume_count = resumes(job)
    name = str(job["TrainingJobName"])
    return TrialRun(
        id=str(job.get("TrainingJobArn") or name),
        name=name,
        outcome=_OUTCOMES.get(str(job.get("TrainingJobStatus")), Outcome.RUNNING),
        instance_type=instance_type,
        instances=instances,
        capacity=Capacity.SPOT if job.get("EnableManagedSpotTraining") else Capacity.ON_DEMAND,
        # Managed spot's discount is in the billable seconds: priced at the on-demand rate.
        hourly_usd=quote.on_demand if quote else None,
        billable_seconds=float(billable) * instances if isinstance(billable, int | float) else None,
        training_seconds=float(training) * instances if isinstance(training, int | float) else None,
        gpus_per_instance=spec.gpu_count,
        interruptions=interruptions,
        restarts=restarts,
        lost_seconds=lost,
        checkpoint=(job.get("CheckpointConfig") or {}).get("S3Uri"),
        started=_time(job.get("TrainingStartTime")),
        ended=_time(job.get("TrainingEndTime")),
        failure=job.get("FailureReason"),
        price_source=quote.source if quote else None,
        resume_seconds=resumed if resume_count else None,
        resumes=resume_count,
        startup_seconds=startup(job),
        input_mode=input_mode(job),
    )


def finished_runs(client: Any, account: str, region: str, since: datetime) -> Iterator[Sweep]:
    """The region's tuning sweeps and lone training jobs that ran in the period, each a Sweep."""
    trial_names: set[str] = set()
    for summary in _pages(
        client.list_hyper_parameter_tuning_jobs,
        "HyperParameterTuningJobSummaries",
        LastModifiedTimeAfter=since,
        MaxResults=PAGE,
    ):
        name = str(summary["HyperParameterTuningJobName"])
        trials = []
        for trial in _pages(
            client.list_training_jobs_for_hyper_parameter_tuning_job,
            "TrainingJobSummaries",
            HyperParameterTuningJobName=name,
            MaxResults=PAGE,
        ):
            trial_names.add(str(trial["TrainingJobName"]))
            if _in_period(trial, since):
                job = client.describe_training_job(TrainingJobName=trial["TrainingJobName"])
                found = trial_run(job, region)
                if found is not None:
                    trials.append(found)
        if trials:
            yield Sweep(
                provider="aws",
                service=SERVICE,
                kind="tuning",
                id=str(summary.get("HyperParameterTuningJobArn") or name),
                name=name,
                account=account,
                region=region,
                state=str(summary.get("HyperParameterTuningJobStatus") or ""),
                since=since,
                trials=tuple(sorted(trials, key=lambda t: t.name)),
            )
    for summary in _pages(
        client.list_training_jobs,
        "TrainingJobSummaries",
        LastModifiedTimeAfter=since,
        MaxResults=PAGE,
    ):
        name = str(summary["TrainingJobName"])
        if name in trial_names or not _ended_in(summary, since):
            continue
        job = client.describe_training_job(TrainingJobName=name)
        if job.get("TuningJobArn"):  # a trial of a sweep outside the period's listing
            continue
        found = trial_run(job, region)
        if found is not None and found.checkpoint:
            found = replace(found, checkpoint_interval=_interval_tag(client, found.id))
        if found is not None:
            yield Sweep(
                provider="aws",
                service=SERVICE,
                kind="training",
                id=found.id,
                name=name,
                account=account,
                region=region,
                state=str(job.get("TrainingJobStatus") or ""),
                since=since,
                trials=(found,),
            )


def _interval_tag(client: Any, arn: str) -> tuple[str, str] | None:
    """The job's checkpoint-interval tag (key, value) as written, None where it has none."""
    stated = {t.get("Key"): t.get("Value") for t in tags(client, arn)}
    return next(((k, str(stated[k])) for k in INTERVAL_TAGS if stated.get(k) is not None), None)


def _ended_in(summary: Mapping[str, Any], since: datetime) -> bool:
    if summary.get("TrainingJobStatus") not in _ENDED:
        return False  # a job in progress is live capacity: the live scan judges it
    ended = _time(summary.get("TrainingEndTime") or summary.get("LastModifiedTime"))
    return ended is None or ended >= since
