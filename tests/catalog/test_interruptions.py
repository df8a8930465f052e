"""The interruption-rate data: the bundled file, the loader's refusals, the look-up's rules, and
the Spot Instance Advisor feed converted as the file's `method` says (a real sample of it)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from tests.conftest import FIXTURES

from gpu_audit.catalog import interruptions
from gpu_audit.catalog.advisor import advisor_rows, band_rate
from gpu_audit.catalog.interruptions import bundled, rate_for, read_rates, use_rates
from gpu_audit.cli.main import main
from gpu_audit.errors import ConfigError

SAMPLE = FIXTURES / "interruptions" / "spot-advisor-sample.json"
GCP = FIXTURES / "interruptions" / "gcp-capacity-advice.json"


@pytest.fixture(autouse=True)
def _bundled_only() -> Iterator[None]:
    use_rates(None)
    yield
    use_rates(None)


def test_the_bundled_file_is_dated_sourced_and_mirrors_the_advisor_bands() -> None:
    rates = bundled()
    assert rates.as_of == "2025-06-28" and rates.unit == "interruptions per instance-hour"
    assert [s.name for s in rates.sources] == ["aws-spot-advisor"]
    assert "max / 100 / 730" in rates.method and rates.path is None
    assert interruptions.describe(rates) == (
        "bundled interruption rates as of 2025-06-28 (aws-spot-advisor)"
    )
    assert len(rates.rows) > 300 and {r.provider for r in rates.rows} == {"aws"}
    # every row is its band's upper end over 730 hours: >20% (max 100) is 1 / 730
    for row in rates.rows:
        band_max = float(row.public.rsplit("max ", 1)[1].rstrip(")"))
        assert row.per_hour == band_rate(band_max)
    assert band_rate(100) == 0.00136986 and band_rate(16) == 0.00021918


def test_the_real_feed_sample_converts_to_the_bundled_rows() -> None:
    """The sample is cut from the feed the bundled file was made from: its rows are the same."""
    feed = json.loads(SAMPLE.read_text())
    rows = advisor_rows(feed, "2025-06-28", ["p4d.24xlarge", "p5.48xlarge", "g5.xlarge"])
    table = {(r.type, r.region): r for r in bundled().rows}
    assert len(rows) == 6
    for row in rows:
        shipped = table[(row["type"], row["region"])]
        assert (shipped.per_hour, shipped.public) == (row["per_hour"], row["public"])
    # p4d.24xlarge us-east-1 is r=2 (10-15%, max 16): 16 / 100 / 730 = 0.00021918 per hour
    (p4d,) = [r for r in rows if r["type"] == "p4d.24xlarge" and r["region"] == "us-east-1"]
    assert (p4d["per_hour"], p4d["public"]) == (0.00021918, "10-15% (r=2, max 16)")


def test_a_feed_of_another_shape_is_one_line() -> None:
    with pytest.raises(ConfigError, match=r"spot advisor feed: expected an object"):
        advisor_rows({"ranges": []}, "2025-06-28", ["p4d.24xlarge"])
    bad = {"ranges": [], "spot_advisor": {"us-east-1": {"Linux": {"g5.xlarge": {"r": 9}}}}}
    with pytest.raises(ConfigError, match=r"us-east-1 g5\.xlarge: r 9 is no range"):
        advisor_rows(bad, "2025-06-28", ["g5.xlarge"])


def test_sagemaker_types_take_their_instance_row_and_no_region_takes_the_highest() -> None:
    named = rate_for("aws", "ml.p4d.24xlarge", "us-east-1")
    assert named is not None and named.per_hour == 0.00021918 and named.region == "us-east-1"
    assert named.as_of == "2025-06-28" and named.source.startswith("aws-spot-advisor (https://")
    highest = rate_for("aws", "p4d.24xlarge", None)  # r=4 (>20%) in us-west-2 and others
    assert highest is not None and highest.per_hour == 0.00136986
    # a type with no row, or a region with none, has no rate: never assumed rare
    assert rate_for("aws", "p5.4xlarge", "us-east-1") is None
    assert rate_for("aws", "p4d.24xlarge", "ap-south-1") is None
    assert rate_for("gcp", "a2-highgpu-1g", None) is None


def test_a_file_is_laid_over_the_bundled_rates() -> None:
    use_rates(str(GCP))
    rate = rate_for("gcp", "a2-highgpu-1g", "us-central1")
    assert rate is not None and rate.per_hour == 1.0 and rate.public == "estimatedUptime 3600s"
    assert rate_for("aws", "ml.p4d.24xlarge", "us-east-1") is not None  # bundled rows stay
    assert interruptions.describe(interruptions.in_use()).startswith(
        "gcp-capacity-advice.json interruption rates as of 2026-12-03"
    )


def _body(**changes: Any) -> dict[str, Any]:
    body = json.loads(GCP.read_text())
    body.update(changes)
    return body


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"gpu_audit_prices": 1}, ":1: interruption rates: expected a JSON object with gpu_audit_"),
        (_body(as_of="soon"), ":1: interruption rates: as_of: expected a date"),
        (_body(unit="per month"), ":1: interruption rates: unit: expected 'interruptions per"),
        (_body(sources=[]), ":1: interruption rates: sources: expected a non-empty list"),
        (
            _body(rows=[{**_body()["rows"][0], "per_hour": -1}]),
            ":3: interruption rates: rows[0]: per_hour: -1 is outside 0-60",
        ),
        (
            _body(rows=[{**_body()["rows"][0], "per_hour": "1"}]),
            ":3: interruption rates: rows[0]: per_hour: expected a number, got '1'",
        ),
        (
            _body(rows=[{**_body()["rows"][0], "source": "elsewhere"}]),
            ":3: interruption rates: rows[0]: source: elsewhere is not in sources",
        ),
        (
            _body(rows=[_body()["rows"][0], _body()["rows"][0]]),
            ":4: interruption rates: rows[1]: gcp a2-highgpu-1g us-central1 again (also rows[0])",
        ),
    ],
)
def test_a_bad_file_is_one_located_line(tmp_path: Path, body: Any, message: str) -> None:
    path = tmp_path / "rates.json"
    rows = body.get("rows") if isinstance(body, dict) else None
    if isinstance(rows, list):  # one row a line, as the message's line numbers count them
        head = json.dumps({k: v for k, v in body.items() if k != "rows"})[:-1]
        text = head + ',\n"rows": [\n' + ",\n".join(json.dumps(r) for r in rows) + "\n]}\n"
        path.write_text(text)
    else:
        path.write_text(json.dumps(body))
    with pytest.raises(ConfigError) as caught:
        read_rates(str(path))
    assert f"{path}{message}" in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.parametrize("command", ["check", "estimate"])
def test_the_option_refuses_a_bad_file_with_exit_2_and_one_line(
    tmp_path: Path, command: str
) -> None:
    bad = tmp_path / "rates.json"
    bad.write_text('{"gpu_audit_interruptions": 1, "as_of": "2026-12-03"}')
    job = FIXTURES / "jobs" / "sagemaker" / "spot-p4d-training.json"
    result = CliRunner().invoke(main, [command, str(job), "--interruption-rates", str(bad)])
    assert result.exit_code == 2, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert lines == [f"gpu-audit: error: {bad}:1: interruption rates: unit: expected "
                     "'interruptions per instance-hour'"]  # fmt: skip


@pytest.fixture
def feed_server() -> Iterator[tuple[str, list[str]]]:
    """The real feed sample served on loopback (an ephemeral port), as S3 serves the feed."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    body = SAMPLE.read_bytes()
    paths: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            paths.append(self.path)
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/spot-advisor-data.json", paths
    finally:
        server.shutdown()
        server.server_close()


def test_catalog_refresh_rewrites_the_aws_rows_and_keeps_the_others(
    tmp_path: Path, feed_server: tuple[str, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, paths = feed_server
    monkeypatch.setenv("GPU_AUDIT_SPOT_ADVISOR_URL", url)
    output = tmp_path / "rates.json"
    output.write_text(GCP.read_text())  # a GCP row from capacity advice, to be kept
    command = ["catalog", "refresh", "--provider", "aws", "--interruptions", "-o", str(output)]
    result = CliRunner().invoke(main, [*command, "--region", "us-east-1"])
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == f"{output}: 5 aws interruption rates, 1 requests"
    assert paths == ["/spot-advisor-data.json"]
    written = read_rates(str(output))  # it reads back
    by_key = {(r.provider, r.type, r.region): r for r in written.rows}
    assert by_key[("gcp", "a2-highgpu-1g", "us-central1")].per_hour == 1.0
    p5 = by_key[("aws", "p5.48xlarge", "us-east-1")]  # r=4 in the feed: >20%, max 100
    assert (p5.per_hour, p5.public, p5.source) == (
        0.00136986,
        ">20% (r=4, max 100)",
        "aws-spot-advisor",
    )
    assert {s.name for s in written.sources} == {"gcp-capacity-advice", "aws-spot-advisor"}
    assert not any(r.region == "us-west-2" for r in written.rows)  # --region narrows
    refused = CliRunner().invoke(main, [*command[:3], "gcp", *command[4:]])
    assert refused.exit_code == 2 and "--project is required" in refused.stderr
