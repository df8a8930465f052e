"""A training job's and run's sections: a finished run (`run`: billable time, interruptions,
resume and start-up), the knobs a job states (`training`), what its GPUs measured (`activity`,
DCGM's profiling counters) and its expected spot lost work (`interruption`).
`gpu_audit.core.resource` assembles them into `Resource` beside `gpu_audit.core.sections`; their
field names are the policy language's."""

from __future__ import annotations

from collections.abc import Mapping

from gpu_audit.core.declare import canonical
from gpu_audit.core.frozen import record


@record
class Run:
    """What a managed training job or tuning sweep cost in a period, as it ran (`scan --since`)."""

    since: str | None = canonical(
        "start of the period read, ISO 8601 (`scan --since`, default 90 days back)",
        sources="API",
    )
    billable_hours: float | None = canonical(
        "instance-hours billed in the period (SageMaker `BillableTimeInSeconds` × instances; "
        "Vertex AI: wall clock × replicas)",
        unit="hours",
        sources="API",
        minimum=0,
    )
    training_hours: float | None = canonical(
        "instance-hours spent training (SageMaker `TrainingTimeInSeconds` × instances)",
        unit="hours",
        sources="API",
        minimum=0,
    )
    cost_usd: float | None = canonical(
        "what the billable hours cost, at the rate card's on-demand rate (SageMaker bills managed "
        "spot as fewer billable seconds) or the Vertex AI rate of the capacity",
        sources="API, catalog",
        minimum=0,
    )
    spot_savings: float | None = canonical(
        "percent of the training time not billed, as managed spot realised it "
        "((1 − billable ÷ training) × 100)",
        sources="API",
        minimum=0,
        maximum=100,
    )
    interruptions: int | None = canonical(
        "spot interruptions (SageMaker secondary status `Interrupted`; a Kubernetes GPU pod: its "
        "containers' restarts); absent where the API does not say (Vertex AI)",
        sources="API",
        minimum=0,
    )
    restarts: int | None = canonical(
        "restarts (SageMaker secondary status `Restarting`; a Kubernetes pod: its containers' "
        "`restartCount`); absent where the API does not say",
        sources="API",
        minimum=0,
    )
    job: str | None = canonical(
        "a Kubernetes GPU pod's run: the training workload that owns it (`PyTorchJob/bert`, "
        "`Job/train`)",
        sources="API",
    )
    job_restarts: int | None = canonical(
        "restarts of that run: its live GPU pods' container restarts plus a Job's failed pods "
        "(`status.failed`)",
        sources="API",
        minimum=0,
    )
    sweep: str | None = canonical(
        "the sweep the pod's run belongs to (a Katib `Experiment/name`, from the "
        "`katib.kubeflow.org/experiment` label)",
        sources="API",
    )
    sweep_restarts: int | None = canonical(
        "restarts summed over the sweep's runs", sources="API", minimum=0
    )
    sweep_runs: int | None = canonical(
        "the sweep's runs with a live GPU pod", sources="API", minimum=0
    )
    lost_usd: float | None = canonical(
        "cost of the training time that ended in an interruption, which a restart from zero "
        "spends again",
        sources="API, catalog",
        minimum=0,
    )
    trials: int | None = canonical(
        "trials of a tuning sweep that ran in the period", sources="API", minimum=0
    )
    completed: int | None = canonical("trials that completed", sources="API", minimum=0)
    failed: int | None = canonical("trials that failed", sources="API", minimum=0)
    failed_usd: float | None = canonical(
        "what the failed trials cost", sources="API, catalog", minimum=0
    )
    failed_share: float | None = canonical(
        "percent of the sweep's cost spent on failed trials",
        sources="derived",
        minimum=0,
        maximum=100,
    )
    cost_per_success_usd: float | None = canonical(
        "the cost of all trials ÷ the completed ones", sources="derived", minimum=0
    )
    resume_minutes: float | None = canonical(
        "mean time from the end of an interruption to training again (SageMaker: the end of an "
        "`Interrupted` transition to the start of the next `Training`; waiting for capacity is "
        "not resume; a Kubernetes pod: a restarted container's `lastState.terminated.finishedAt` "
        "to the pod's `Ready` transition)",
        unit="minutes",
        sources="API",
        minimum=0,
    )
    startup_minutes: float | None = canonical(
        "billed start-up before training (SageMaker `Downloading` + `DownloadingTrainingImage`, "
        "summed over the trials; a Kubernetes pod that has not restarted: `PodScheduled` to "
        "`Ready`)",
        unit="minutes",
        sources="API",
        minimum=0,
    )
    startup_usd: float | None = canonical(
        "the billed start-up at the run's hourly rate (on-demand × billable ÷ training seconds)",
        sources="API, catalog",
        minimum=0,
    )
    startup_share: float | None = canonical(
        "percent of the run's cost spent in billed start-up (a pod: of its run so far)",
        sources="derived",
        minimum=0,
        maximum=100,
    )
    input_mode: str | None = canonical(
        "how the data reaches the instances (SageMaker `TrainingInputMode`: `File`, `FastFile`, "
        "`Pipe`)",
        sources="API",
    )


_KNOB = "job config, or a script or config its command names (docs/knobs.md)"


@record
class Training:
    """The knobs a training job states: precision, batch, checkpointing, workers, compile, model."""

    precision: str | None = canonical(
        "the training precision stated: `fp32`, `fp16`, `bf16`, `fp8` (HF `--bf16`/`--fp16`, "
        "Accelerate `mixed_precision`, DeepSpeed `bf16.enabled`, Lightning and NeMo `precision` "
        "(`16-mixed` is fp16), torchtune `dtype`)",
        sources=_KNOB,
    )
    tf32: bool | None = canonical("TF32 matmuls asked for (HF `--tf32`)", sources=_KNOB)
    batch_size: int | None = canonical(
        "per-device batch size (`per_device_train_batch_size`, DeepSpeed "
        "`train_micro_batch_size_per_gpu`, `micro_batch_size`, torchtune `batch_size`)",
        sources=_KNOB,
        minimum=1,
    )
    grad_accum: int | None = canonical(
        "gradient accumulation steps (`gradient_accumulation_steps`, Lightning "
        "`accumulate_grad_batches`)",
        sources=_KNOB,
        minimum=1,
    )
    checkpointing: bool | None = canonical(
        "activation (gradient) checkpointing on (`gradient_checkpointing`, torchtune "
        "`enable_activation_checkpointing`, NeMo `activations_checkpoint_granularity`)",
        sources=_KNOB,
    )
    workers: int | None = canonical(
        "data-loader worker processes per device (`dataloader_num_workers`, `num_workers`); HF "
        "Trainer's documented default 0 where a Trainer command states none",
        sources=_KNOB,
        minimum=0,
    )
    compile: bool | None = canonical(
        "`torch.compile` on (HF `--torch_compile`, torchtune `compile`, Accelerate "
        "`dynamo_backend`)",
        sources=_KNOB,
    )
    checkpoint_interval_minutes: float | None = canonical(
        "the wall-clock checkpoint interval a framework setting states (Lightning and NeMo "
        "`train_time_interval`); step-based settings are not read; the label or tag "
        "`gpu-audit/checkpoint-interval-minutes` wins over it (docs/spot.md)",
        unit="minutes",
        sources=_KNOB,
        minimum=0,
    )
    model: str | None = canonical(
        "the model trained, as the file names it (a Hugging Face id, a torchtune component)",
        sources=_KNOB,
    )
    params_b: float | None = canonical(
        "its parameters, in billions (the catalog's open-model table, or the size its name states)",
        sources="catalog",
        minimum=0,
    )
    method: str | None = canonical(
        "`full` (every weight trained) or `lora` (an adapter: LoRA, QLoRA, PEFT), as stated",
        sources=_KNOB,
    )
    fits: str | None = canonical(
        "for a full fine-tune: the cheapest smaller or fewer GPUs its weights, gradients and Adam "
        "states fit with mixed precision and gradient checkpointing (docs/knobs.md)",
        sources="derived (catalog)",
    )
    fits_hourly_usd: float | None = canonical(
        "that shape's hourly price, on the job's own capacity", sources="derived", minimum=0
    )
    located: Mapping[str, str] = canonical(
        "where each knob was read: knob → `file:line` (the job file or a file it names)",
        sources="job parser",
        factory=dict,
    )


_DCGM = "DCGM exporter through Prometheus (Kubernetes)"


@record
class Activity:
    """What a pod's GPUs did over the window, from DCGM's profiling counters (docs/knobs.md)."""

    engine_pct: float | None = canonical(
        "% of the window the graphics engine was active (`DCGM_FI_PROF_GR_ENGINE_ACTIVE`), mean "
        "over the pod's GPUs; `DCGM_FI_DEV_GPU_UTIL` where the profiling metrics are absent "
        "(`activity.measured_by` says which)",
        sources=_DCGM,
        minimum=0,
        maximum=100,
    )
    tensor_pct: float | None = canonical(
        "% of cycles the tensor (HMMA) pipes were active (`DCGM_FI_PROF_PIPE_TENSOR_ACTIVE`)",
        sources=_DCGM,
        minimum=0,
        maximum=100,
    )
    dram_pct: float | None = canonical(
        "% of cycles the memory interface was active (`DCGM_FI_PROF_DRAM_ACTIVE`)",
        sources=_DCGM,
        minimum=0,
        maximum=100,
    )
    measured_by: str | None = canonical(
        "`profiling` (DCGM's profiling counters) or `gpu-util` (only `DCGM_FI_DEV_GPU_UTIL`)",
        sources=_DCGM,
    )
    window_hours: float | None = canonical(
        "the window the figures cover", unit="hours", sources=_DCGM, minimum=0
    )


@record
class Interruption:
    """Expected spot lost work per run, priced from the interruption data (docs/spot.md):
    lost = hours × rate × instances × (checkpoint interval ÷ 2 + resume) × the spot hourly rate."""

    rate_per_hour: float | None = canonical(
        "spot interruptions per instance-hour of the type in the region (the interruption data; "
        "no region: the type's highest rate)",
        sources="interruption data",
        minimum=0,
    )
    instances: int | None = canonical(
        "the instances (nodes) the job runs on: any one interrupted interrupts the job",
        sources="derived",
        minimum=1,
    )
    rate_public: str | None = canonical(
        "the public figure the rate mirrors (a Spot Instance Advisor band, an uptime)",
        sources="interruption data",
    )
    rate_source: str | None = canonical(
        "where the rate comes from, and its date", sources="interruption data"
    )
    rate_as_of: str | None = canonical("the date of the rate", sources="interruption data")
    hours: float | None = canonical(
        "the run's hours the lost work is priced over (`check`: the runtime cap; `scan --since`: "
        "the training time)",
        unit="hours",
        sources="derived",
        minimum=0,
    )
    checkpoint_minutes: float | None = canonical(
        "the checkpoint interval priced (the whole run where the job states none)",
        unit="minutes",
        sources="derived",
        minimum=0,
    )
    checkpoint_from: str | None = canonical(
        "where the checkpoint interval priced was stated: `label or tag gpu-audit/checkpoint-"
        "interval-minutes`, or a framework setting's `file:line (train_time_interval)`",
        sources="derived",
    )
    resume_minutes: float | None = canonical(
        "the time to resume after an interruption (`check`: the runbook's bound; `scan --since`: "
        "the run's measured mean)",
        unit="minutes",
        sources="runbook, API",
        minimum=0,
    )
    spot_hourly_usd: float | None = canonical(
        "the run's hourly rate on spot", sources="catalog, API", minimum=0
    )
    lost_usd: float | None = canonical(
        "expected lost work per run in dollars", sources="derived", minimum=0
    )
    discount_usd: float | None = canonical(
        "what spot saves per run before lost work ((on-demand − spot) × hours)",
        sources="derived",
    )
    net_usd: float | None = canonical(
        "the spot saving net of lost work (discount − lost); not above zero: spot does not pay",
        sources="derived",
    )
    net_hourly_usd: float | None = canonical(
        "the spot saving net of lost work per hour the job runs, where it states a checkpoint "
        "interval ((on-demand − spot) − rate × (interval ÷ 2 + resume) × spot)",
        sources="derived",
    )
