"""A hostile price file (`--prices FILE`, `catalog diff FILE`) is one located line and exit 2."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from gpu_audit.cli import main

EXAMPLE = json.loads((Path(__file__).parents[2] / "fixtures/prices/example.json").read_text())


def _set(path: tuple[Any, ...], value: Any) -> Callable[[dict[str, Any]], None]:
    def edit(body: dict[str, Any]) -> None:
        for step in path[:-1]:
            body = body[step]
        body[path[-1]] = value

    return edit


def _dup(body: dict[str, Any]) -> None:
    body["rows"].append(copy.deepcopy(body["rows"][0]))


# (edit, what the one error line says after "FILE:LINE: ")
CASES: dict[str, tuple[Callable[[dict[str, Any]], None], str]] = {
    "huge price": (_set(("rows", 2, "usd_per_hour"), 1e300), "is over 10,000 per hour"),
    "duplicate row": (_dup, "again (also rows[0])"),
    "bad effective": (_set(("rows", 2, "effective"), "yesterday"), "effective: expected a date"),
    "bad fetched_at": (_set(("rows", 2, "fetched_at"), "2026-02-30T00:00:00Z"), "fetched_at"),
    "bad observed_at": (_set(("rows", 1, "zones", 0, "observed_at"), "soon"), "observed_at"),
    "zone escape": (_set(("rows", 1, "zones", 0, "zone"), "a\x1b[2J"), "zone: control"),
    "requests text": (_set(("requests", "aws"), "lots"), "requests: aws: expected a count"),
    "generated_at": (_set(("generated_at",), ["x"]), "generated_at: expected a time"),
    "long type": (_set(("rows", 2, "type"), "p" * 5000), "type: longer than 2000"),
}


def _run(path: Path, how: str) -> Any:
    args = ["catalog", "diff", str(path)]
    if how == "lookup":
        args = ["catalog", "lookup", "p4d.24xlarge", "--prices", str(path)]
    return CliRunner().invoke(main, args)


@pytest.mark.parametrize("how", ["diff", "lookup"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_a_bad_value_is_one_located_line(tmp_path: Path, case: str, how: str) -> None:
    edit, said = CASES[case]
    body = copy.deepcopy(EXAMPLE)
    edit(body)
    path = tmp_path / "prices.json"
    path.write_text(json.dumps(body, indent=1))
    done = _run(path, how)
    assert not isinstance(done.exception, Exception) or isinstance(done.exception, SystemExit)
    assert done.exit_code == 2, done.output
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"gpu-audit: error: {path}:"), lines
    assert said in lines[0] and "\x1b" not in lines[0]


def test_a_row_error_names_the_rows_line(tmp_path: Path) -> None:
    body = copy.deepcopy(EXAMPLE)
    body["rows"][2]["usd_per_hour"] = -1
    text = json.dumps(body, indent=1)
    path = tmp_path / "prices.json"
    path.write_text(text)
    third = [n for n, line in enumerate(text.splitlines(), 1) if line == "  {"][2]
    done = _run(path, "diff")
    assert done.stderr.startswith(f"gpu-audit: error: {path}:{third}: price file: rows[2]: ")


@pytest.mark.parametrize(
    ("raw", "said"),
    [
        (b'{"gpu_audit_prices": 1, "rows": [], "x": "\xff"}', "not UTF-8 text"),
        (b"[" * 100_000 + b"]" * 100_000, "nested more than"),
        (b'{"gpu_audit_prices": 1, "rows": [{"usd_per_hour": NaN}]}', "NaN is not a JSON number"),
        (b'{"gpu_audit_prices": 1, "rows": [\x00]}', "binary content"),
    ],
)
def test_unreadable_text_is_one_line_not_a_traceback(tmp_path: Path, raw: bytes, said: str) -> None:
    path = tmp_path / "prices.json"
    path.write_bytes(raw)
    done = _run(path, "diff")
    assert done.exit_code == 2 and done.exception is not None
    assert isinstance(done.exception, SystemExit)
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and said in lines[0] and lines[0].startswith(f"gpu-audit: error: {path}")


@pytest.mark.parametrize("when", ["20261001T000000Z", "2026-W40-4", "2026-10-01x"])
def test_a_date_must_start_with_the_calendar_date_reports_show(tmp_path: Path, when: str) -> None:
    body = copy.deepcopy(EXAMPLE)
    body["rows"][0]["effective"] = when
    path = tmp_path / "prices.json"
    path.write_text(json.dumps(body, indent=1))
    done = _run(path, "diff")
    assert done.exit_code == 2 and "effective: expected a date or a time" in done.stderr
