"""`-o` writes only regular files, never an input, keeps modes, and leaves no temp file behind."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

import pytest

from gpu_audit.core.writer import write_atomic
from gpu_audit.errors import ConfigError
from tests.conftest import ROOT


@pytest.fixture
def umask_027() -> Iterator[None]:
    old = os.umask(0o027)
    yield
    os.umask(old)


def _refused(path: Path, match: str, **options: object) -> str:
    with pytest.raises(ConfigError, match=match) as caught:
        write_atomic(str(path), "report\n", **options)  # type: ignore[arg-type]
    message = str(caught.value)
    assert "\n" not in message and message.startswith(f"{path}: cannot write report")
    return message


def test_a_fifo_is_written_in_place(tmp_path: Path) -> None:
    import threading

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received: list[str] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_text(encoding="utf-8")))
    reader.start()
    write_atomic(str(fifo), "report\n")
    reader.join(timeout=10)
    assert received == ["report\n"]
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert sorted(os.listdir(tmp_path)) == ["pipe"]  # no temp file, no rename


def test_a_directory_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "reports"
    folder.mkdir()
    _refused(folder, "a directory, not a regular file")
    assert folder.is_dir()


def test_dev_null_is_written_in_place() -> None:
    write_atomic("/dev/null", "report\n")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_dev_full_says_the_device_is_full() -> None:
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    _refused(Path("/dev/full"), "No space left on device")
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


def test_a_device_input_is_still_refused() -> None:
    _refused(Path("/dev/null"), "input of this run", inputs=["/dev/null"])


@pytest.mark.parametrize("redirect", ["pipe", "append"])
def test_dev_stdout_writes_to_whatever_stdout_is(tmp_path: Path, redirect: str) -> None:
    demo = ROOT / "fixtures" / "inventory" / "demo.yaml"
    command = [str(Path(sys.executable).parent / "gpu-audit"), "scan", "--inventory", str(demo),
               "-o", "/dev/stdout", "--format", "json", "--fail-on", "none", "-q"]  # fmt: skip
    if redirect == "pipe":
        run = subprocess.run(command, capture_output=True, text=True, timeout=120)
        text = run.stdout
    else:
        log = tmp_path / "log.txt"
        log.write_text("before\n")
        with log.open("a") as handle:
            run = subprocess.run(command, stdout=handle, stderr=subprocess.PIPE, text=True,
                                 timeout=120)  # fmt: skip
        text = log.read_text()
        assert text.startswith("before\n")  # `>>`: what was there stays
        text = text.removeprefix("before\n")
    assert run.returncode == 0, run.stderr
    assert text.startswith('{\n  "version"') and text.rstrip().endswith("}")


def test_an_input_of_the_run_is_refused_by_any_name(tmp_path: Path) -> None:
    inventory = tmp_path / "inventory.json"
    inventory.write_text("{}", encoding="utf-8")
    alias = tmp_path / "alias.json"
    alias.symlink_to(inventory)
    _refused(inventory, "input of this run", inputs=[str(inventory)])
    _refused(alias, "input of this run", inputs=[str(inventory)])
    _refused(tmp_path / "." / "inventory.json", "input", inputs=["/nonexistent", str(alias)])
    assert inventory.read_text(encoding="utf-8") == "{}"
    write_atomic(str(tmp_path / "out.json"), "ok\n", inputs=[str(inventory)])


def test_a_symlink_is_followed_to_its_target(tmp_path: Path) -> None:
    target = tmp_path / "real.md"
    target.write_text("old", encoding="utf-8")
    link = tmp_path / "latest.md"
    link.symlink_to(target.name)
    write_atomic(str(link), "new\n")
    assert link.is_symlink() and target.read_text(encoding="utf-8") == "new\n"
    dangling = tmp_path / "next.md"
    dangling.symlink_to("created.md")
    write_atomic(str(dangling), "made\n")
    assert dangling.is_symlink() and (tmp_path / "created.md").read_text() == "made\n"


def test_an_existing_file_keeps_its_mode(tmp_path: Path, umask_027: None) -> None:
    target = tmp_path / "report.json"
    target.write_text("old", encoding="utf-8")
    for mode in (0o644, 0o604, 0o600):
        target.chmod(mode)
        write_atomic(str(target), "new")
        assert stat.S_IMODE(os.stat(target).st_mode) == mode


def test_a_new_file_gets_the_umask(tmp_path: Path, umask_027: None) -> None:
    write_atomic(str(tmp_path / "a.csv"), "x")
    assert stat.S_IMODE(os.stat(tmp_path / "a.csv").st_mode) == 0o640
    os.umask(0o022)
    write_atomic(str(tmp_path / "b.csv"), "x")
    assert stat.S_IMODE(os.stat(tmp_path / "b.csv").st_mode) == 0o644


def test_streamed_content_and_an_error_in_it(tmp_path: Path) -> None:
    target = tmp_path / "report.txt"

    def lines(stream: TextIO) -> None:
        for number in range(3):
            stream.write(f"{number}\r\n")

    write_atomic(str(target), lines)
    assert target.read_bytes() == b"0\r\n1\r\n2\r\n"

    def broken(stream: TextIO) -> None:
        stream.write("half")
        raise RuntimeError("reporter bug")

    with pytest.raises(RuntimeError):
        write_atomic(str(target), broken)
    assert target.read_bytes() == b"0\r\n1\r\n2\r\n"
    assert os.listdir(tmp_path) == ["report.txt"]


def test_sigterm_during_a_write_removes_the_temp_file(tmp_path: Path) -> None:
    script = textwrap.dedent(
        """
        import sys, time
        from gpu_audit.core.writer import write_atomic

        def slow(stream):
            stream.write("started")
            stream.flush()
            print("writing", flush=True)
            time.sleep(30)

        write_atomic(sys.argv[1], slow)
        """
    )
    target = tmp_path / "report.json"
    target.write_text("old", encoding="utf-8")
    with subprocess.Popen(
        [sys.executable, "-c", script, str(target)], stdout=subprocess.PIPE, text=True, cwd=ROOT
    ) as child:
        assert child.stdout is not None
        assert child.stdout.readline() == "writing\n"
        assert len(os.listdir(tmp_path)) == 2  # the report and its temp file
        child.send_signal(signal.SIGTERM)
        assert child.wait(timeout=20) == -signal.SIGTERM  # still dies of the signal
    assert os.listdir(tmp_path) == ["report.json"]
    assert target.read_text(encoding="utf-8") == "old"


@pytest.fixture
def under_dev() -> Iterator[Path]:
    """A folder of regular files under /dev (tmpfs at /dev/shm), where reports were appended."""
    if not os.path.isdir("/dev/shm") or not os.access("/dev/shm", os.W_OK):
        pytest.skip("no writable /dev/shm")
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="gpu-audit-test-", dir="/dev/shm"))
    yield folder
    import shutil

    shutil.rmtree(folder)


def test_a_regular_file_under_dev_is_replaced_whole(under_dev: Path) -> None:
    target = under_dev / "report.json"
    write_atomic(str(target), '{"first": 1}\n')
    write_atomic(str(target), '{"second": 2}\n')
    assert target.read_text(encoding="utf-8") == '{"second": 2}\n'
    link = under_dev / "latest.json"  # a symlink to it, too: replaced, not appended
    link.symlink_to(target)
    write_atomic(str(link), '{"third": 3}\n')
    assert target.read_text(encoding="utf-8") == '{"third": 3}\n' and link.is_symlink()
    assert sorted(os.listdir(under_dev)) == ["latest.json", "report.json"]


def test_a_scan_report_written_twice_under_dev_is_valid_json(under_dev: Path) -> None:
    import json

    demo = ROOT / "fixtures" / "inventory" / "demo.yaml"
    target = under_dev / "audit.json"
    command = [str(Path(sys.executable).parent / "gpu-audit"), "scan", "--inventory", str(demo),
               "-o", str(target), "--format", "json", "--fail-on", "none", "-q"]  # fmt: skip
    for _ in range(2):
        run = subprocess.run(command, capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, run.stderr
        assert json.loads(target.read_text(encoding="utf-8"))["version"]


def test_a_symlink_to_a_descriptor_is_still_a_stream(tmp_path: Path) -> None:
    """`/dev/stdout` reached through a link of one's own is written through the descriptor."""
    log = tmp_path / "log.txt"
    log.write_text("before\n")
    link = tmp_path / "out"
    link.symlink_to("/dev/stdout")
    script = "import sys; from gpu_audit.core.writer import write_atomic; write_atomic(sys.argv[1], 'report\\n')"
    with log.open("a") as handle:
        subprocess.run([sys.executable, "-c", script, str(link)], stdout=handle, check=True,
                       cwd=ROOT, timeout=60)  # fmt: skip
    assert log.read_text() == "before\nreport\n"
