"""Run scripts read whole: a checkpoint dir synced to a bucket is durable; `--save_steps -1` is none."""

from __future__ import annotations

from pathlib import Path

from gpu_audit.jobs import load_jobs

PRECISION = Path(__file__).resolve().parents[2] / "fixtures" / "precision"


def test_aws_s3_sync_of_the_checkpoint_dir_is_a_durable_checkpoint() -> None:
    [job] = load_jobs([str(PRECISION / "sky-train-spot-s3sync.yaml")]).resources
    assert job.checkpoint.uri == "s3://assistants-ckpt/llama-sft"
    assert "checkpoints synced to a bucket (`aws s3 sync" in (job.source.note or "")
    assert job.limits.idle_stop_hours is not None  # autostop with down: true


def test_gsutil_rsync_in_a_container_command_is_one_too() -> None:
    [job] = load_jobs([str(PRECISION / "k8s-pytorchjob-spot-rsync.yaml")]).resources
    assert job.checkpoint.uri == "gs://foundation-ckpt/gpt-small"


def test_save_steps_minus_one_states_that_no_checkpoint_is_written() -> None:
    [job] = load_jobs([str(PRECISION / "sky-save-steps-none.yaml")]).resources
    assert job.checkpoint.uri is None  # the /checkpoints mount is never written to
    assert "no checkpoint is written (`--save_steps -1`)" in (job.source.note or "")


def test_a_sync_helper_script_counts_and_a_sync_of_other_files_does_not(tmp_path: Path) -> None:
    helper = tmp_path / "helper.yaml"
    helper.write_text(
        "resources: {accelerators: A100:8, use_spot: true}\n"
        "run: |\n  ./sync_to_bucket.sh ./checkpoints &\n  python train.py --ckpt ./checkpoints\n"
    )
    [job] = load_jobs([str(helper)]).resources
    assert job.checkpoint.uri == "script:./sync_to_bucket.sh"
    logs = tmp_path / "logs.yaml"
    logs.write_text(
        "resources: {accelerators: A100:8, use_spot: true}\n"
        "run: |\n  python train.py\n  aws s3 sync ./logs s3://team-logs/run1\n"
    )
    [other] = load_jobs([str(logs)]).resources
    assert other.checkpoint.uri is None
