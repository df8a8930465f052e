"""Property-based: a FOCUS export with any cell or manifest value replaced reads as a report
that validates, or as one located error line (exit 2); never a traceback, and no control
character from a file reaches the terminal."""

from __future__ import annotations

import csv
import gzip
import io
import json
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from gpu_audit.cli.main import main
from gpu_audit.report.escape import UNSAFE
from tests.conftest import FIXTURES, ROOT
from tests.fuzz.conftest import EXAMPLES

pytest.importorskip("duckdb")
pytestmark = pytest.mark.slow

DEMO = FIXTURES / "billing" / "demo"
SCHEMA = json.loads((ROOT / "src/gpu_audit/billing/billing-v1.schema.json").read_text())
HOSTILE = st.one_of(
    st.text(max_size=20),
    st.sampled_from(
        [
            "",
            "NaN",
            "inf",
            "-1e400",
            "1e400",
            "12.3.4",
            "9999-12-31T23:59:59Z",
            "0001-01-01",
            "2026-02-30T00:00:00Z",
            "\x1b[2J",
            "a\u202eb",
            "Usage",
            "Unused",
            "Dynamic",
            "=cmd()",
            '{"team": "\\u001b[31m"}',
            "1" * 500,
            "Correction",
            "EUR",
        ]
    ),
)


def _csv_parts(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*.csv.gz"))


def _run(*paths: Path, fmt: str = "json") -> Any:
    return CliRunner().invoke(
        main, ["billing", *map(str, paths), "--period", "2026-Q3", "--format", fmt]
    )


def _holds_its_promises(result: Any) -> None:
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(
        result.exception
    )
    assert result.exit_code in (0, 2), result.stderr
    if result.exit_code == 2:
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("gpu-audit: error: "), result.stderr
        assert not UNSAFE.search(lines[0]), lines[0]
    else:
        jsonschema.validate(json.loads(result.stdout), SCHEMA)


@settings(max_examples=EXAMPLES // 8 or 15)
@given(
    row=st.integers(min_value=0, max_value=50),
    column=st.integers(min_value=0, max_value=60),
    value=HOSTILE,
)
def test_any_azure_cell_replaced(
    tmp_path_factory: pytest.TempPathFactory, row: int, column: int, value: str
) -> None:
    folder = tmp_path_factory.mktemp("azure") / "azure"
    shutil.copytree(DEMO / "azure", folder)
    target = _csv_parts(folder)[0]
    rows = list(csv.reader(io.StringIO(gzip.decompress(target.read_bytes()).decode())))
    body = rows[1:]
    cells = body[row % len(body)]
    cells[column % len(cells)] = value
    out = io.StringIO()
    csv.writer(out).writerows([rows[0], *body])
    target.write_bytes(gzip.compress(out.getvalue().encode()))
    _holds_its_promises(_run(folder))
    table = _run(folder, fmt="table")
    if table.exit_code == 0:
        assert not UNSAFE.search(table.stdout.replace("\n", ""))


@settings(max_examples=EXAMPLES // 8 or 10)
@given(
    key=st.sampled_from(["dataFiles", "executionId", "billingPeriod", "columns"]),
    value=st.one_of(HOSTILE, st.none(), st.lists(HOSTILE, max_size=3)),
)
def test_any_aws_manifest_value_replaced(
    tmp_path_factory: pytest.TempPathFactory, key: str, value: Any
) -> None:
    folder = tmp_path_factory.mktemp("aws") / "aws"
    shutil.copytree(DEMO / "aws", folder)
    manifest = sorted(folder.rglob("*-Manifest.json"))[1]
    body = json.loads(manifest.read_text())
    body[key] = value
    manifest.write_text(json.dumps(body))
    _holds_its_promises(_run(folder))


@settings(max_examples=EXAMPLES // 8 or 10)
@given(
    path=st.sampled_from(
        [("exportConfig", "dataVersion"), ("exportConfig", "type"), ("runInfo", "startDate"),
         ("runInfo", "submittedTime"), ("blobs",), ("exportConfig",), ("runInfo",)]
    ),
    value=st.one_of(HOSTILE, st.none(), st.integers(), st.lists(HOSTILE, max_size=3)),
)  # fmt: skip
def test_any_azure_manifest_value_replaced(
    tmp_path_factory: pytest.TempPathFactory, path: tuple[str, ...], value: Any
) -> None:
    folder = tmp_path_factory.mktemp("azure") / "azure"
    shutil.copytree(DEMO / "azure", folder)
    manifest = sorted(folder.rglob("manifest.json"))[0]
    body = json.loads(manifest.read_text())
    inner = body
    for key in path[:-1]:
        inner = inner[key]
    inner[path[-1]] = value
    manifest.write_text(json.dumps(body))
    _holds_its_promises(_run(folder))
