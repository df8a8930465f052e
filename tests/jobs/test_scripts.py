"""Run-script readings (dev boxes, written paths) and GPU name spellings, on their own."""

from __future__ import annotations

import pytest

from gpu_audit.jobs.evidence import dev_only
from gpu_audit.jobs.gpus import gpu_name
from gpu_audit.jobs.scripts import under, written_paths


@pytest.mark.parametrize(
    ("script", "dev_box"),
    [
        ("cd ~/work\njupyter lab --port 8888", True),
        ("pip install jupyterlab && jupyter-lab --no-browser", True),
        ("code-server --bind-addr 0.0.0.0:8080", True),
        ("./code tunnel --accept-server-license-terms", True),
        ("sleep infinity", True),
        ("jupyter lab &\npython train.py", False),  # trains too
        ("python train.py", False),
        ("", False),
    ],
)
def test_dev_only(script: str, dev_box: bool) -> None:
    assert (dev_only(script) is not None) is dev_box


def test_written_paths() -> None:
    script = (
        "torchrun train.py --output_dir /mnt/out/run1 --save-dir=/ckpt\n"
        "python eval.py > /results/eval.txt; cp model.pt /bucket/final/"
    )
    paths = [path for path, _ in written_paths(script)]
    assert paths == ["/mnt/out/run1", "/ckpt", "/results/eval.txt", "/bucket/final/"]
    assert under("/mnt/out/run1", "/mnt/out") and under("/mnt/out", "/mnt/out/")
    assert not under("/mnt/output", "/mnt/out")


@pytest.mark.parametrize(
    ("spelled", "name"),
    [
        ("A100-80GB-SXM", "A100-80GB"),
        ("NVIDIA-H100-80GB-HBM3", "H100"),
        ("nvidia-tesla-a100", "A100-40GB"),
        ("RTX 4090", "RTX-4090"),
        ("NVIDIA-GeForce-RTX-4090", "RTX-4090"),
        ("RTXPRO6000WS", "RTX-PRO-6000"),
        ("NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition", "RTX-PRO-6000"),
        ("NVIDIA RTX A6000", "RTX-A6000"),
        ("MyCustomAccel", "MyCustomAccel"),
        ("  ", None),
    ],
)
def test_gpu_names(spelled: str, name: str | None) -> None:
    assert gpu_name(spelled) == name
