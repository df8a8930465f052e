"""Training evidence, both ways: an evaluation stage is not training; plain training is."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.conftest import NOW

from gpu_audit.audit import audit
from gpu_audit.core.resource import Workload
from gpu_audit.core.results import Scope
from gpu_audit.jobs import load_jobs
from gpu_audit.jobs.evidence import Ran, classify
from gpu_audit.policy.loader import load_policy


@pytest.mark.parametrize(
    ("run", "workload", "evidence"),
    [
        ("python train.py --do_eval --model_name_or_path out/", Workload.BATCH_INFERENCE, "--do_eval"),
        ("python run_glue.py --do_train --do_eval", Workload.TRAINING, "--do_train"),
        ("python main.py --mode=train --data gs://d", Workload.TRAINING, "--mode=train"),
        ("python main.py --mode train", Workload.TRAINING, "--mode train"),
        ("python main.py --train_steps 20000", Workload.TRAINING, "train_steps"),
        ("python main.py trainer.epochs=10 data=imagenet", Workload.TRAINING, "trainer.epochs"),
        ("python -m vision.trainer --lr 3e-4", Workload.TRAINING, "vision.trainer"),
        ("python -m mnist_train.main", Workload.TRAINING, "mnist_train.main"),
        ("python -m trainer.task --epochs 3", Workload.TRAINING, "trainer.task"),
    ],
)  # fmt: skip
def test_what_the_command_runs_names_the_workload(
    run: str, workload: Workload, evidence: str
) -> None:
    found = classify([Ran(run, "`run`")])
    assert found is not None
    assert found[0] is workload
    assert f"`{evidence}` in `run`" in found[1]


def test_the_evaluation_stage_is_not_told_to_use_spot(tmp_path: Path) -> None:
    stages = {
        "train.yaml": "python train.py --do_train --output_dir /out",
        "eval.yaml": "python train.py --do_eval --output_dir /out",
    }
    found = {}
    for name, run in stages.items():
        path = tmp_path / name
        path.write_text(
            f"name: {name[:-5]}\nresources:\n  accelerators: A10G:1\n  cloud: aws\n"
            f"  labels: {{team: a, project: b, owner: c}}\nrun: {run}\n"
        )
        (resource,) = load_jobs([str(path)]).resources
        result = audit([resource], load_policy(None), NOW, Scope(command="check"))
        found[name] = {f.rule_id for f in result.findings}
        assert "evaluation run" in (resource.source.note or "") or name == "train.yaml"
    assert "spot-for-training" in found["train.yaml"]
    assert "spot-for-training" not in found["eval.yaml"]
