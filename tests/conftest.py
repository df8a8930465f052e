"""Shared test helpers: paths, the fixed 'now' of the fixtures, the shipped policy."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from tests.ec2_capacity import CapacityProxy

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
SHARED = ROOT.parent / "shared"  # the corpus and reference facts, beside the checkout
SARIF_SCHEMA = Path(__file__).parent / "data" / "sarif" / "sarif-schema-2.1.0.json"  # vendored
SHARED_MISSING = "../shared (the job corpus and reference facts) is not beside this checkout"


def need_shared(path: Path) -> None:
    """Skip a test that reads ../shared on a plain clone, with one reason for all of them; in CI
    (`CI` set), where ../shared is always laid out, its absence is a failure, not a skip."""
    if path.exists():
        return
    if os.environ.get("CI"):
        pytest.fail(f"{SHARED_MISSING}: {path} (CI lays it out beside the clone)")
    pytest.skip(SHARED_MISSING)


NOW = datetime(2026, 11, 20, 6, 0, tzinfo=UTC)
# Tests using these fixtures talk to a real server on loopback; `make quick` skips them.
SERVER_FIXTURES = frozenset(
    {
        "moto_url",
        "aws_fleet",
        "faulty_proxy",
        "endpoint",
        "silent_server",
        "price_server",
        "ec2_capacity",
    }
)


# The developer's environment that would change what a test sees (xdist workers inherit it).
HOST_ENVIRONMENT = ("COLUMNS", "LINES", "NO_COLOR")


def pytest_configure(config: pytest.Config) -> None:
    """From the first import on (collection, session fixtures, subprocesses), no test touches the
    developer's ~/.cache or ~/.config: the policy-validation cache and config discovery go here."""
    home = tempfile.mkdtemp(prefix="gpu-audit-tests-")
    config.add_cleanup(lambda: shutil.rmtree(home, ignore_errors=True))
    os.environ["XDG_CACHE_HOME"] = os.path.join(home, "cache")
    os.environ["XDG_CONFIG_HOME"] = os.path.join(home, "config")
    # A terminal's width exported by the shell would size every table and text report the tests
    # read (report/fit.py): the suite renders at the 80-column default unless a test sets one.
    for name in HOST_ENVIRONMENT:
        os.environ.pop(name, None)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if SERVER_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.server)


@pytest.fixture(autouse=True)
def _isolated_cache(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Keep the policy-validation cache and config discovery out of the developer's home."""
    home = tmp_path_factory.getbasetemp() / "home"
    home.mkdir(exist_ok=True)
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / "cache"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))


def _route_rest_json(service: str) -> None:
    """Let moto's server take a service's REST-JSON requests. Botocore 1.44.18 moved Athena from
    the JSON protocol (`POST /`, `X-Amz-Target`) to REST-JSON (`POST /query-executions`,
    `GET /query-executions/{QueryExecutionId}/results?NextToken=…`); moto 5.2 parses and answers
    a request by botocore's own model of the service, but its URL table routes only `/`, so
    every call was a 404. Each operation's request URI, from that model, joins the table; with
    a botocore that still speaks the JSON protocol nothing is added."""
    from importlib import import_module

    import botocore.session

    model = botocore.session.get_session().get_service_model(service)
    if model.protocol != "rest-json":
        return
    urls = import_module(f"moto.{service}.urls")
    dispatch = next(iter(urls.url_paths.values()))  # the service's one handler
    for name in model.operation_names:
        uri = model.operation_model(name).http["requestUri"].split("?")[0]
        path = re.sub(r"\{(\w+)\+?\}", r"(?P<\1>[^/]+)", uri)  # a URI label: a path segment
        urls.url_paths.setdefault("{0}" + path + "$", dispatch)


@pytest.fixture(scope="session")
def ec2_capacity() -> Iterator[CapacityProxy]:
    """One moto server on loopback for the session (AWS collectors, Athena for billing), behind
    the proxy that answers what moto lacks: EC2 capacity reservations (tests/ec2_capacity.py)."""
    from moto.server import ThreadedMotoServer

    from tests.ec2_capacity import CapacityProxy

    _route_rest_json("athena")
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    proxy = CapacityProxy(f"http://{host}:{port}")
    yield proxy
    proxy.close()
    server.stop()


@pytest.fixture(scope="session")
def moto_url(ec2_capacity: CapacityProxy) -> str:
    """The moto server's address (its capacity-reservation proxy's)."""
    return ec2_capacity.url
