"""The checkpoint interval from a framework setting where it is wall-clock time (Lightning and
NeMo `train_time_interval`) priced into spot lost work, with its `file:line` in the JSON; the
label wins over it; step-based, templated and commented settings are not read as minutes.

Vertex `a2-highgpu-1g` (no region: the type's highest rate, 1 an hour in the capacity-advice
fixture), 24 h timeout, on-demand 4.2244 and spot 1.6594 (prices.csv), resume 5 minutes (the
runbook's bound); discount = (4.2244 − 1.6594) × 24 = $61.56 (docs/spot.md).
"""

from __future__ import annotations

import shutil
from decimal import Decimal
from pathlib import Path
from typing import Any

from tests.conftest import FIXTURES
from tests.policy.test_lost_work import (
    A2_OD,
    A2_SPOT,
    GCP_RATES,
    RESUME_H,
    cents,
    check,
    findings,
    not_evaluated,
    resource,
)

REAL = FIXTURES / "knobs" / "real" / "lightning-hydra-template-model_checkpoint.yaml"
HOURS = Decimal(24)


def vertex(tmp_path: Path, name: str, args: list[str], label: str | None = None) -> Path:
    """A spot Vertex job running `python train.py ARGS` (the names resolved beside it)."""
    labels = f'\nlabels:\n  gpu-audit-checkpoint-interval-minutes: "{label}"' if label else ""
    quoted = ", ".join(f'"{a}"' for a in args)
    path = tmp_path / f"{name}.yaml"
    path.write_text(
        f"displayName: {name}{labels}\n"
        "workerPoolSpecs:\n"
        "  - machineSpec:\n"
        "      machineType: a2-highgpu-1g\n"
        "      acceleratorType: NVIDIA_TESLA_A100\n"
        "      acceleratorCount: 1\n"
        "    replicaCount: 1\n"
        "    containerSpec:\n"
        "      imageUri: us-docker.pkg.dev/acme/train/lightning:2.4\n"
        f'      command: ["python", "train.py"]\n'
        f"      args: [{quoted}]\n"
        "scheduling:\n"
        "  strategy: SPOT\n"
        "  timeout: 86400s\n"
    )
    return path


def lightning_config(tmp_path: Path, name: str, interval: str) -> Path:
    path = tmp_path / name
    path.write_text(
        "trainer:\n"
        "  precision: bf16-mixed\n"
        "  callbacks:\n"
        "    - class_path: lightning.pytorch.callbacks.ModelCheckpoint\n"
        "      init_args:\n"
        "        dirpath: gs://acme-ckpt/run\n"
        "        every_n_train_steps: null\n"
        f"        train_time_interval: {interval}\n"
    )
    return path


def run(tmp_path: Path, *jobs: Path) -> dict[str, Any]:
    return check(*(str(j) for j in jobs), "--interruption-rates", str(GCP_RATES))


def test_a_lightning_20_minute_train_time_interval_is_priced_with_its_line(
    tmp_path: Path,
) -> None:
    """`train_time_interval: "00:20:00"`: lost = 24 × 1 × (10/60 + 5/60) × 1.6594 = 6 × 1.6594
    = 9.9564 → $9.96; net = 61.56 − 9.9564 = 51.6036 → $51.60 (above zero: no finding)."""
    lightning_config(tmp_path, "fit.yaml", '"00:20:00"')
    report = run(tmp_path, vertex(tmp_path, "lit-20", ["--config", "fit.yaml"]))
    lost = HOURS * 1 * (Decimal(20) / 60 / 2 + RESUME_H) * A2_SPOT
    discount = (A2_OD - A2_SPOT) * HOURS
    job = resource(report, "lit-20")
    figures = job["interruption"]
    assert (figures["checkpoint_minutes"], figures["lost_usd"], figures["net_usd"]) == (
        20.0,
        cents(lost),
        cents(discount - lost),
    )
    assert (cents(lost), cents(discount - lost)) == (9.96, 51.60)
    origin = figures["checkpoint_from"]
    assert origin.endswith("fit.yaml:8 (train_time_interval)"), origin
    assert job["training"]["checkpoint_interval_minutes"] == 20.0
    assert job["checkpoint"]["interval_minutes"] == 20.0  # spot-checkpoint-interval judges it
    assert "spot-lost-work" not in findings(report, "lit-20")


def test_a_6_hour_timedelta_in_the_script_costs_more_than_spot_saves(tmp_path: Path) -> None:
    """`ModelCheckpoint(train_time_interval=timedelta(hours=6))` in train.py (a commented
    20-minute one above it says nothing): lost = 24 × 1 × (3 + 5/60) × 1.6594 = $122.80,
    net −$61.24: spot-lost-work worth $61.24, and spot-checkpoint-interval (over 30 min)."""
    (tmp_path / "train.py").write_text(
        "from datetime import timedelta\n"
        "from lightning.pytorch.callbacks import ModelCheckpoint\n"
        "\n"
        "# ckpt = ModelCheckpoint(train_time_interval=timedelta(minutes=20))\n"
        "ckpt = ModelCheckpoint(\n"
        '    dirpath="gs://acme-ckpt/gan",\n'
        "    save_last=True,\n"
        "    train_time_interval=timedelta(hours=6),\n"
        ")\n"
    )
    report = run(tmp_path, vertex(tmp_path, "gan-6h", ["--epochs", "3"]))
    lost = HOURS * 1 * (Decimal(6) / 2 + RESUME_H) * A2_SPOT
    net = (A2_OD - A2_SPOT) * HOURS - lost
    figures = resource(report, "gan-6h")["interruption"]
    assert (
        (figures["checkpoint_minutes"], figures["lost_usd"], figures["net_usd"])
        == (
            360.0,
            cents(lost),
            cents(net),
        )
        == (360.0, 122.80, -61.24)
    )
    assert figures["checkpoint_from"].endswith("train.py:8 (train_time_interval)")
    rules = findings(report, "gan-6h")
    assert rules["spot-lost-work"]["saving_usd"] == cents(-net) == 61.24
    assert "spot-checkpoint-interval" in rules


def test_the_label_wins_over_the_framework_setting(tmp_path: Path) -> None:
    """The label says 360 minutes, the config 20: the label is priced ($122.80 lost, as above)."""
    lightning_config(tmp_path, "fit.yaml", '"00:20:00"')
    job = vertex(tmp_path, "lit-label", ["--config", "fit.yaml"], label="360")
    figures = resource(run(tmp_path, job), "lit-label")["interruption"]
    assert (figures["checkpoint_minutes"], figures["lost_usd"]) == (360.0, 122.80)
    assert figures["checkpoint_from"] == "label or tag gpu-audit-checkpoint-interval-minutes"


def test_step_based_and_null_settings_are_not_minutes(tmp_path: Path) -> None:
    """HF `save_steps`, Lightning `every_n_train_steps` and the real lightning-hydra-template
    config's `train_time_interval: null` state no wall-clock interval: nothing is read."""
    (tmp_path / "hf.yaml").write_text("save_strategy: steps\nsave_steps: 500\n")
    shutil.copy(REAL, tmp_path / "model_checkpoint.yaml")
    (tmp_path / "steps.yaml").write_text(
        "trainer:\n  callbacks:\n    - init_args:\n        every_n_train_steps: 1000\n"
    )
    jobs = [
        vertex(tmp_path, "hf-steps", ["--config", "hf.yaml"]),
        vertex(tmp_path, "hydra-null", ["--config", "model_checkpoint.yaml"]),
        vertex(tmp_path, "lit-steps", ["--config", "steps.yaml"]),
    ]
    report = run(tmp_path, *jobs)
    for name in ("hf-steps", "hydra-null", "lit-steps"):
        job = resource(report, name)
        assert job["training"]["checkpoint_interval_minutes"] is None, name
        assert job["interruption"]["checkpoint_from"] is None, name
        # no interval and no checkpoint bucket: a restart from zero, the whole 24 h run
        assert job["interruption"]["checkpoint_minutes"] == 1440.0, name


def test_templated_settings_leave_the_lost_work_not_evaluated(tmp_path: Path) -> None:
    lightning_config(tmp_path, "fit.yaml", '"${oc.env:CKPT_EVERY}"')
    (tmp_path / "train.py").write_text(
        "ckpt = ModelCheckpoint(train_time_interval=timedelta(minutes=cfg.save_every_n_min))\n"
    )
    jobs = [
        vertex(tmp_path, "lit-templated", ["--config", "fit.yaml"]),
        vertex(tmp_path, "py-templated", ["--epochs", "3"]),
    ]
    report = run(tmp_path, *jobs)
    for name in ("lit-templated", "py-templated"):
        assert not_evaluated(report, name)["spot-lost-work"] == "interruption.net_usd", name
        assert resource(report, name)["interruption"]["net_usd"] is None
    # a label states it: the label is priced, the templated setting does not matter
    labelled = vertex(tmp_path, "lit-labelled", ["--config", "fit.yaml"], label="20")
    figures = resource(run(tmp_path, labelled), "lit-labelled")["interruption"]
    assert (figures["checkpoint_minutes"], figures["lost_usd"]) == (20.0, 9.96)


def test_a_nemo_hydra_override_on_the_command_line(tmp_path: Path) -> None:
    """`exp_manager.checkpoint_callback_params.train_time_interval=00:20:00` (NeMo through
    Hydra), read from the job file's own line."""
    job = vertex(
        tmp_path,
        "nemo-20",
        ["exp_manager.checkpoint_callback_params.train_time_interval=00:20:00"],
    )
    figures = resource(run(tmp_path, job), "nemo-20")["interruption"]
    assert (figures["checkpoint_minutes"], figures["lost_usd"]) == (20.0, 9.96)
    assert figures["checkpoint_from"].endswith("nemo-20.yaml:11 (train_time_interval)")


def test_the_spellings_read_and_the_ones_refused() -> None:
    """Lightning's `Timer` spellings and `str(timedelta)` are minutes; a bare number (no unit),
    zero, a step count and prose are not; a template raises (the interval is unknown)."""
    import pytest

    from gpu_audit.core.knobs import duration
    from gpu_audit.core.knobs.text import read_flags

    read = {
        "00:20:00": 20.0, "0:20:00": 20.0, "01:00:00:00": 1440.0, "1 day, 0:30:00": 1470.0,
        "00:00:30": 0.5, "30": None, 30: None, "00:00:00": None, "half an hour": None,
        "20m": None,
    }  # fmt: skip
    for value, minutes in read.items():
        assert duration.minutes_of(value) == minutes, value
    assert duration.minutes_of({"_target_": "datetime.timedelta", "minutes": 20}) == 20.0
    assert duration.minutes_of({"hours": 1, "minutes": 30}) == 90.0
    assert duration.minutes_of({"_target_": "lightning.Trainer", "hours": 1}) is None
    assert duration.minutes_of({"hours": "one"}) is None
    for templated in ("${oc.env:CKPT}", {"minutes": "${every}"}):
        with pytest.raises(duration.Templated):
            duration.minutes_of(templated)
    # HF step-based flags and a Lightning step count are never minutes
    steps = "python train.py --save_steps 500 --save_strategy steps trainer.max_steps=1000"
    assert [k for k in read_flags(steps, "job.yaml", 1) if k.name == duration.KNOB] == []
    script = "ModelCheckpoint(every_n_train_steps=500)\n# train_time_interval=timedelta(hours=1)\n"
    assert [k for k in read_flags(script, "t.py", 1, python=True) if k.name == duration.KNOB] == []


def test_estimate_names_where_the_interval_was_read(tmp_path: Path) -> None:
    """`gpu-audit estimate` states the interval priced and the file and line it came from."""
    from click.testing import CliRunner

    from gpu_audit.cli.main import main

    lightning_config(tmp_path, "fit.yaml", '"00:20:00"')
    job = vertex(tmp_path, "lit-estimate", ["--config", "fit.yaml"])
    result = CliRunner().invoke(
        main, ["estimate", str(job), "--interruption-rates", str(GCP_RATES)]
    )
    assert result.exit_code == 0, result.output
    assert "spot lost work: $9.96 expected per run" in result.stdout
    assert "checkpoint every 20 min (" in result.stdout
    assert "fit.yaml:8 (train_time_interval)), resume 5 min; spot saves $51.60 net" in " ".join(
        result.stdout.split()
    )


def test_only_a_checkpoint_callbacks_setting_is_its_interval() -> None:
    """`train_time_interval` of a logger (a CSV logger callback that logs every N seconds) is
    not a checkpoint interval; a Hydra `_target_` naming ModelCheckpoint under any key is."""
    from gpu_audit.core.knobs import duration
    from gpu_audit.core.knobs.text import read_flags
    from gpu_audit.jobs.knobs.mapping import read_mapping

    def minutes(found: list[Any]) -> list[Any]:
        return [k.value for k in found if k.name == duration.KNOB]

    hydra = {
        "csv_log": {"_target_": "mylib.callbacks.CSVLogger", "train_time_interval": "00:01:00"},
        "every_20": {"_target_": "lightning.pytorch.callbacks.ModelCheckpoint",
                     "train_time_interval": "00:20:00"},
    }  # fmt: skip
    assert minutes(read_mapping(hydra, "c.yaml")[0]) == [20.0]
    logger_only = {"logger": {"train_time_interval": "${oc.env:EVERY}"}}
    assert read_mapping(logger_only, "c.yaml")[0] == []  # nor a templated note
    script = (
        "log = CSVLogger(dirpath=out, train_time_interval=timedelta(seconds=30))\n"
        "ck = ModelCheckpoint(\n"
        '    dirpath=os.path.join(out, "ckpt"),\n'
        "    train_time_interval=timedelta(minutes=20),\n"
        ")\n"
    )
    assert minutes(read_flags(script, "t.py", 1, python=True)) == [20.0]
    flags = "python t.py --logger.train_time_interval=00:01:00"
    assert minutes(read_flags(flags, "job.yaml", 1)) == []
