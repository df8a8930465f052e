"""SIGINT exits 130 (never 1, the open-findings code), with nothing half-written."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gpu_audit.core.writer import write_atomic

ROOT = Path(__file__).resolve().parents[1]


def test_sigint_exits_130_even_with_fail_on_none(tmp_path: Path) -> None:
    fifo = tmp_path / "report.md"  # a FIFO nobody reads: the run waits there, deterministically
    os.mkfifo(fifo)
    command = [str(Path(sys.executable).parent / "gpu-audit"), "scan", "--inventory",
               str(ROOT / "fixtures" / "inventory" / "demo.yaml"), "-o", str(fifo),
               "--fail-on", "none"]  # fmt: skip
    # Started from a background job (`make test &`, an xdist worker), a child inherits SIGINT
    # ignored and would never see the signal: it gets the default handler back. On any timeout
    # it is killed, so a leaked scan cannot hold the FIFO (and the next test) for minutes.
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_default_sigint,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.1)
            if any(Path("/proc", str(process.pid), "fd").iterdir()) and _waits_on_fifo(process.pid):
                break
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 130, err
    assert "Traceback" not in err and "gpu-audit: interrupted" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.md"]


def _default_sigint() -> None:
    """In the child, before exec: SIGINT's default action, whatever the parent ignored."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _waits_on_fifo(pid: int) -> bool:
    """The process is blocked opening the FIFO (its syscall is `openat`)."""
    try:
        return Path(f"/proc/{pid}/wchan").read_text() in (
            "fifo_open",
            "pipe_wait",
            "wait_for_partner",
        )
    except OSError:
        return False


def test_an_interrupted_write_leaves_the_old_report(tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    report.write_text("old\n")

    def interrupted(stream: object) -> None:
        stream.write("half")  # type: ignore[attr-defined]
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_atomic(str(report), interrupted)
    assert report.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]
