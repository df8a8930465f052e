"""`load_jobs` over the real-world corpus in ../shared/corpus: no tracebacks, no misreads, and a floor
on how many files are recognised as GPU jobs per format (run with `-s` to see the table)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from tests.conftest import SHARED, need_shared

from gpu_audit.jobs import load_jobs

CORPUS = SHARED / "corpus"
FOLDER_FORMAT = {
    "skypilot": "skypilot",
    "kubernetes": "kubernetes",
    "ray": "ray",
    "dstack": "dstack",
    "sagemaker": "sagemaker",
    "vertex": "vertex",
    "aws-batch": "batch",
    "azureml": "azureml",
}
# Files recognised as GPU jobs. The rest request no GPUs (CPU-only examples, a Karpenter NodePool,
# Ray clusters of m5/c7g nodes), which the corpus test below checks they are skipped for.
FLOORS = {
    "skypilot": 24,
    "kubernetes": 24,
    "ray": 6,
    "dstack": 14,
    "sagemaker": 8,
    "vertex": 10,
    "batch": 11,
    "azureml": 4,  # the command, distributed and pipeline jobs; the two CPU clusters are skipped
}


@pytest.fixture(autouse=True)
def _corpus_present() -> None:
    need_shared(CORPUS)


def _files() -> list[Path]:
    return sorted(p for p in CORPUS.glob("*/*") if p.is_file())


def test_corpus_loads_without_errors() -> None:
    files = _files()
    load = load_jobs([str(p) for p in files])  # any exception escaping fails the test
    assert len(load.files) == len(files)
    errors = [s for s in load.skipped if s.error]
    assert not errors, "\n".join(f"{s.path}: {s.reason}" for s in errors)
    handled = {r.source.path for r in load.resources} | {s.path for s in load.skipped}
    assert handled == {str(p) for p in files}, "every file is either a job source or skipped"


def test_corpus_recognition() -> None:
    files = _files()
    load = load_jobs([str(p) for p in files])
    providers: dict[str, set[str]] = {}
    for resource in load.resources:
        providers.setdefault(resource.source.path, set()).add(resource.provider)
    total: Counter[str] = Counter()
    recognised: Counter[str] = Counter()
    resources: Counter[str] = Counter(r.provider for r in load.resources)
    wrong: list[str] = []
    for path in files:
        folder = path.parent.name
        fmt = FOLDER_FORMAT.get(folder)
        total[folder] += 1
        found = providers.get(str(path), set())
        if fmt is not None and fmt in found:
            recognised[folder] += 1
        if found - {fmt}:
            wrong.append(f"{path.name}: read as {sorted(found)}")
    print("\nformat       files  GPU jobs  resources")
    for folder in sorted(total):
        fmt = FOLDER_FORMAT.get(folder)
        count = resources[fmt] if fmt else 0
        print(f"{folder:<12} {total[folder]:>5}  {recognised[folder]:>8}  {count:>9}")
    print(
        f"{'total':<12} {sum(total.values()):>5}  {sum(recognised.values()):>8}  {len(load.resources):>9}"
    )
    assert not wrong, wrong
    for folder, floor in FLOORS.items():
        assert recognised[_folder(folder)] >= floor, (
            f"{folder}: {recognised[folder]} < {floor} recognised"
        )
    azure = [s for s in load.skipped if "/azureml/" in s.path]
    assert azure and all("an azureml config that requests no GPUs" in s.reason for s in azure)


def _folder(fmt: str) -> str:
    return next(folder for folder, known in FOLDER_FORMAT.items() if known == fmt)


def test_corpus_skips_name_their_reason() -> None:
    load = load_jobs([str(p) for p in _files()])
    for skipped in load.skipped:
        assert skipped.reason.strip(), skipped
