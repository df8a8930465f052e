"""Issue 38.10: docs/org-scale.md's one-machine recipe (moto on loopback, three shards, one
merge) runs as written."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "org-scale.md"
pytestmark = pytest.mark.server


def _block() -> str:
    text = DOC.read_text()
    section = text[text.index("## Try it on one machine") :]
    found = re.search(r"```sh\n(.*?)```", section, re.S)
    assert found is not None
    return found.group(1)


def test_the_one_machine_recipe_shards_and_merges(tmp_path: Path) -> None:
    bin_dir = Path(sys.executable).parent
    if shutil.which("moto_server", path=str(bin_dir)) is None:
        pytest.skip("moto[server] is not installed")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "HOME": str(tmp_path),
        "PORT": str(port),
        "AWS_CONFIG_FILE": str(tmp_path / "none"),
        "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "none"),
    }
    done = subprocess.run(
        ["/bin/sh", "-c", _block()], cwd=tmp_path, env=env, capture_output=True, text=True,
        timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert sorted(p.name for p in tmp_path.glob("shard-*.json")) == [
        "shard-1.json", "shard-2.json", "shard-3.json"
    ]  # fmt: skip
    assert "g5.xlarge" in done.stdout and "spot-for-training" in done.stdout
    assert done.stdout.splitlines()[-1].startswith("2 findings")
