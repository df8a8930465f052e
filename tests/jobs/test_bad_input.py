"""Input that cannot be read is reported per file, located, and never stops the other files."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from gpu_audit.core.yamlsrc import MAX_BYTES
from gpu_audit.jobs import load_jobs

GOOD = """\
name: ok
resources:
  accelerators: L4:1
run: python train.py
"""


def _write(tmp_path: Path, name: str, content: str | bytes) -> str:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    return str(path)


def _check(tmp_path: Path, name: str, content: str | bytes) -> tuple[str, str]:
    """Load the bad file between two good ones; return (reason, path) of its error."""
    first = _write(tmp_path, "first.yaml", GOOD)
    bad = _write(tmp_path, name, content)
    last = _write(tmp_path, "last.yaml", GOOD)
    load = load_jobs([first, bad, last])
    assert [r.source.path for r in load.resources] == [first, last], "other files still checked"
    assert load.files == (first, bad, last)
    [skipped] = load.skipped
    assert skipped.path == bad and skipped.error, skipped
    return skipped.reason, bad


def test_invalid_yaml_is_located(tmp_path: Path) -> None:
    reason, path = _check(
        tmp_path, "bad.yaml", "name: x\nresources:\n  accelerators: [A100\nrun: y\n"
    )
    # The unclosed `[` on line 3 is where the broken construct starts; line 4 is where it broke.
    assert reason.startswith(f"{path}:3:17: invalid YAML: a flow sequence starts here"), reason
    assert "(line 4, column 4)" in reason


def test_invalid_json_is_located(tmp_path: Path) -> None:
    reason, path = _check(
        tmp_path, "bad.json", '{\n  "TrainingJobName": "x",\n  "ResourceConfig": }\n'
    )
    assert reason.startswith(f"{path}:3:21: invalid JSON"), reason


def test_binary_content(tmp_path: Path) -> None:
    reason, path = _check(tmp_path, "model.yaml", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    assert reason.startswith(path) and "binary" in reason


def test_undecodable_text(tmp_path: Path) -> None:
    reason, path = _check(tmp_path, "latin1.yaml", "name: caf\xe9\n".encode("latin-1"))
    assert reason.startswith(path) and "UTF-8" in reason


def test_too_large_is_refused(tmp_path: Path) -> None:
    big = "# padding\n" * (MAX_BYTES // 10 + 1)
    reason, path = _check(tmp_path, "huge.yaml", big)
    assert reason.startswith(path) and "5 MB" in reason and "refused" in reason


def test_alias_bomb_ends_fast(tmp_path: Path) -> None:
    lines = ['a0: &a0 ["x", "x", "x", "x", "x", "x", "x", "x", "x", "x"]']
    for level in range(1, 10):
        previous = f"*a{level - 1}"
        lines.append(f"a{level}: &a{level} [{', '.join([previous] * 10)}]")
    started = time.perf_counter()
    reason, path = _check(tmp_path, "bomb.yaml", "\n".join(lines) + "\n")
    assert (
        time.perf_counter() - started < 60
    )  # an expanded bomb would take hours; the refusal is immediate
    assert reason.startswith(path) and "alias" in reason


def test_missing_file(tmp_path: Path) -> None:
    path = str(tmp_path / "gone.yaml")
    load = load_jobs([path])
    [skipped] = load.skipped
    assert skipped.error and skipped.reason.startswith(f"{path}: cannot read"), skipped


def test_empty_file_is_fine(tmp_path: Path) -> None:
    for name, content in (
        ("empty.yaml", ""),
        ("comments.yaml", "# nothing yet\n"),
        ("sep.yml", "---\n"),
    ):
        path = _write(tmp_path, name, content)
        load = load_jobs([path])
        assert not load.resources
        [skipped] = load.skipped
        assert not skipped.error and "empty" in skipped.reason, skipped


def test_non_yaml_file_that_does_not_parse_is_not_an_error(tmp_path: Path) -> None:
    path = _write(tmp_path, "main.tf", "locals {\n  a = { b: c: d }\n}\n")
    load = load_jobs([path])
    [skipped] = load.skipped
    assert not skipped.error and "not a YAML or JSON file" in skipped.reason, skipped


def test_templated_values_are_missing_not_errors(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "job.yaml",
        "name: x\nresources:\n  accelerators: ${GPU}:8\n  use_spot: '{{ spot }}'\nrun: y\n",
    )
    load = load_jobs([path])
    assert not load.skipped
    [resource] = load.resources
    assert resource.gpu.model is None and resource.gpu.count == 8
    assert resource.capacity is None  # missing: rules needing it are not evaluated
    assert resource.source.key_lines["capacity"] == 4


def test_a_parser_failing_on_a_hostile_number_says_so(tmp_path: Path) -> None:
    text = "resources:\n  accelerators: {A100: .inf}\nrun: y\n"
    reason, path = _check(tmp_path, "inf.sky.yaml", text)
    assert reason.startswith(f"{path}:1: skypilot parser: a number in this document is out of")
    assert "report this as a gpu-audit bug" not in reason and "\n" not in reason


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        (
            "serve.yaml",
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: s}\nspec:\n  replicas: .inf\n"
            "  template:\n    spec:\n      containers:\n        - name: c\n          image: x\n"
            "          resources: {limits: {nvidia.com/gpu: 1}}\n",
            ":11: gpu.count: expected a finite number, got inf",
        ),
        (
            "t.dstack.yml",
            "type: task\nname: t\ncommands: [python train.py]\nmax_duration: -5\n"
            "resources: {gpu: A100:1}\n",
            ":4: limits.max_runtime_hours: -0.00138889 is below the minimum 0",
        ),
    ],
)
def test_impossible_numbers_are_refused_at_their_line(
    tmp_path: Path, name: str, text: str, expected: str
) -> None:
    """NaN, infinity and negative counts or hours never reach a report (issue 10.4)."""
    reason, path = _check(tmp_path, name, text)
    assert reason.startswith(f"{path}{expected}") and "\n" not in reason, reason
