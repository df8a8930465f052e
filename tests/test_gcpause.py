"""The collector is paused around big batches; only the `gpu-audit` program freezes what they leave."""

from __future__ import annotations

import gc
import subprocess
import sys

import pytest

from gpu_audit.core import gcpause
from gpu_audit.core.gcpause import paused_gc


def test_a_library_caller_is_left_as_it_was() -> None:
    frozen = gc.get_freeze_count()
    with paused_gc():
        assert not gc.isenabled()
        kept = [[i] for i in range(1000)]
    assert gc.isenabled() and gc.get_freeze_count() == frozen
    assert len(kept) == 1000


def test_a_disabled_collector_stays_disabled() -> None:
    gc.disable()
    try:
        with paused_gc():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_the_program_freezes_what_a_batch_leaves(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gcpause, "_ONE_SHOT", True)
    frozen = gc.get_freeze_count()
    try:
        with paused_gc():
            kept = [[i] for i in range(1000)]
        assert gc.isenabled() and gc.get_freeze_count() >= frozen + len(kept)
    finally:
        gc.unfreeze()


def test_the_program_entry_point_is_one_shot() -> None:
    code = (
        "import sys\nfrom gpu_audit import cli\nfrom gpu_audit.core import gcpause\nsys.argv = ['gpu-audit', '--version']\n"
        "try:\n    cli.run()\nexcept SystemExit:\n    print(gcpause._ONE_SHOT)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.splitlines()[-1] == "True", done
