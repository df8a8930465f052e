"""Nothing is read outside the inputs named: a manifest entry that leaves the export folder (`..`,
an absolute path, a symlink out) or names a FIFO is refused with one line naming the manifest and
the entry; a history path that is a FIFO or a folder is refused without blocking."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("duckdb")

DEMO = Path(__file__).resolve().parents[2] / "fixtures" / "billing" / "demo"
ARGS = ("--period", "2026-Q3", "--now", "2026-10-05T08:00:00Z", "--format", "json")


def gpu_audit(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gpu_audit", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def one_line(done: subprocess.CompletedProcess[str], *words: str) -> str:
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, done.stderr
    assert len(lines) == 1 and lines[0].startswith("gpu-audit: error: "), done.stderr
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


@pytest.fixture()
def azure(tmp_path: Path) -> Path:
    shutil.copytree(DEMO / "azure", tmp_path / "azure")
    secret = tmp_path / "secret" / "outside.csv.gz"
    secret.parent.mkdir()
    secret.write_bytes(next((DEMO / "azure").rglob("*.csv.gz")).read_bytes())
    return tmp_path / "azure"


def _azure_manifest(root: Path) -> Path:
    return sorted(root.rglob("manifest.json"))[-1]


def _set_blob(manifest: Path, name: str) -> None:
    body = json.loads(manifest.read_text())
    body["blobs"][0]["blobName"] = name
    manifest.write_text(json.dumps(body))


def test_an_azure_blob_name_with_a_nul_byte_is_refused(azure: Path) -> None:
    _set_blob(_azure_manifest(azure), "focus/a\x00b.csv.gz")
    one_line(gpu_audit("billing", str(azure), *ARGS), "manifest.json", "a NUL byte in the name")


@pytest.mark.parametrize("style", ["dotdot", "absolute"])
def test_an_azure_blob_name_leaving_the_folder_is_refused(azure: Path, style: str) -> None:
    manifest = _azure_manifest(azure)
    secret = azure.parent / "secret" / "outside.csv.gz"
    name = "../secret/outside.csv.gz" if style == "dotdot" else str(secret)
    _set_blob(manifest, name)
    line = one_line(gpu_audit("billing", str(azure), *ARGS), "manifest.json", name)
    assert "refused" in line or "missing" in line


def test_an_azure_blob_that_is_a_symlink_out_is_refused(azure: Path) -> None:
    manifest = _azure_manifest(azure)
    blob = json.loads(manifest.read_text())["blobs"][0]["blobName"]
    target = azure / blob
    target.unlink()
    target.symlink_to(azure.parent / "secret" / "outside.csv.gz")
    one_line(gpu_audit("billing", str(azure), *ARGS), "manifest.json", "outside the export folder")


@pytest.fixture()
def aws(tmp_path: Path) -> Path:
    shutil.copytree(DEMO / "aws", tmp_path / "aws")
    return tmp_path / "aws"


def test_an_aws_data_file_entry_leaving_the_folder_is_refused(aws: Path) -> None:
    manifest = sorted((aws / "metadata").rglob("*-Manifest.json"))[0]
    body = json.loads(manifest.read_text())
    entry = body["dataFiles"][0].replace("/data/BILLING_PERIOD=", "/data/BILLING_PERIOD=../../../")
    entry = entry.rsplit("/data/", 1)[0] + "/data/BILLING_PERIOD=2026-07/../../../x/f.parquet"
    body["dataFiles"][0] = entry
    manifest.write_text(json.dumps(body))
    one_line(gpu_audit("billing", str(aws), *ARGS), "Manifest.json", "dataFiles entry", "refused")


def test_an_aws_data_file_symlinked_out_is_refused(aws: Path, tmp_path: Path) -> None:
    data = sorted((aws / "data").rglob("*.parquet"))[0]
    outside = tmp_path / "elsewhere.parquet"
    shutil.move(data, outside)
    data.symlink_to(outside)
    one_line(gpu_audit("billing", str(aws), *ARGS), "Manifest.json", "outside the export folder")


def test_an_aws_data_file_that_is_a_fifo_is_refused(aws: Path) -> None:
    data = sorted((aws / "data").rglob("*.parquet"))[0]
    data.unlink()
    os.mkfifo(data)
    one_line(gpu_audit("billing", str(aws), *ARGS, timeout=30), "not a regular file")


@pytest.mark.parametrize(
    "command",
    [
        ("history", "list", "--history"),
        ("history", "trend", "--history"),
        ("history", "reservations", "--history"),
        ("billing", str(DEMO / "gcp"), *ARGS, "--history"),
        ("scan", "--inventory", "fixtures/inventory/demo.yaml", "--history"),
        ("check", "fixtures/jobs", "--history"),
    ],
)
def test_a_history_path_that_is_a_fifo_is_refused(command: tuple[str, ...], tmp_path: Path) -> None:
    fifo = tmp_path / "audits.db"
    os.mkfifo(fifo)
    done = gpu_audit(*command, str(fifo), timeout=30)
    assert done.returncode == 2, done.stderr
    assert f"{fifo}: history: not a regular file" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_a_history_path_that_is_a_folder_is_refused(tmp_path: Path) -> None:
    done = gpu_audit("history", "list", "--history", str(tmp_path))
    one_line(done, "history: a directory")


def test_a_billing_path_that_is_a_fifo_is_refused(tmp_path: Path) -> None:
    fifo = tmp_path / "export.csv"
    os.mkfifo(fifo)
    one_line(gpu_audit("billing", str(fifo), *ARGS, timeout=30), f"{fifo}: not a regular file")
