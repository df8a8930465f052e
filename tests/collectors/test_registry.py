"""Meta-tests over the provider registry: each provider's folder declares everything it needs."""

from __future__ import annotations

import importlib
import subprocess
import sys
import tomllib
from dataclasses import dataclass, fields, replace

import pytest
from tests.conftest import ROOT

from gpu_audit.cli.runners import ScanRequest, with_flags
from gpu_audit.collectors.interface import Collector
from gpu_audit.collectors.provider import Option, Provider
from gpu_audit.collectors.registry import PROVIDERS
from gpu_audit.errors import ConfigError
from gpu_audit.settings import Settings

PERMISSIONS_DOC = (ROOT / "docs" / "permissions.md").read_text()
EXTRAS = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]


@pytest.mark.parametrize("name", list(PROVIDERS))
def test_the_factory_is_a_collector_named_like_its_entry(name: str) -> None:
    provider = PROVIDERS[name]
    module_name, _, class_name = provider.factory.partition(":")
    cls = getattr(importlib.import_module(module_name), class_name)
    assert issubclass(cls, Collector) and cls.name == name == provider.name
    assert module_name.startswith(f"gpu_audit.collectors.{name}.")


@pytest.mark.parametrize("name", list(PROVIDERS))
def test_every_flag_fills_a_field_of_its_section(name: str) -> None:
    provider = PROVIDERS[name]
    keys = {f.name for f in fields(provider.settings)}
    for option in provider.options:
        assert option.setting in keys, f"{option.flag} → {option.setting}"
        assert option.flag.startswith("--")


def test_a_flag_shared_by_providers_is_declared_alike() -> None:
    """The CLI shows a shared flag once; only its settings field and choices may differ."""
    seen: dict[str, object] = {}
    for provider in PROVIDERS.values():
        for option in provider.options:
            alike = replace(option, setting="", choices=())
            assert seen.setdefault(option.flag, alike) == alike, option.flag


@pytest.mark.parametrize("name", list(PROVIDERS))
def test_every_provider_has_its_extra_and_its_permissions_section(name: str) -> None:
    provider: Provider = PROVIDERS[name]
    assert provider.extra in EXTRAS
    (everything,) = EXTRAS["all"]  # gpu-audit[aws,gcp]
    assert provider.extra in everything.partition("[")[2].rstrip("]").split(",")
    assert f"\n{provider.permissions_heading}\n" in PERMISSIONS_DOC


def test_the_cli_and_the_registry_import_no_cloud_sdk() -> None:
    code = (
        "import sys, gpu_audit.cli, gpu_audit.settings, gpu_audit.report.not_evaluated\n"
        "print('\\n'.join(sorted(sys.modules)))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    loaded = set(done.stdout.split())
    assert not {
        m
        for m in loaded
        if m.split(".")[0] in {"boto3", "botocore", "google", "kubernetes", "azure", "msrest"}
    }
    assert not {m for m in loaded if m.endswith(".collector")}


@dataclass(frozen=True)
class _ServiceSettings:
    services: tuple[str, ...] = ()


def test_a_shared_flag_with_choices_reaches_each_provider_as_its_own_values(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """How `--service` will work for SageMaker (aws) and Vertex (gcp): each gets its own values."""
    for name, choices in (("east", ("ec2", "sagemaker")), ("west", ("compute", "vertex"))):
        option = Option("--service", "services", "Services.", multiple=True, choices=choices)
        provider = Provider(name, _ServiceSettings, (option,), "x:Y", "x", name)
        monkeypatch.setitem(PROVIDERS, name, provider)
    settings = Settings(providers={"east": _ServiceSettings(), "west": _ServiceSettings()})
    flags = (("--service", ("sagemaker", "vertex")),)
    applied = with_flags(settings, ScanRequest(providers=("east", "west"), flags=flags))
    assert applied.section("east").services == ("sagemaker",)
    assert applied.section("west").services == ("vertex",)
    # The real gcp provider declares vertex too, so both are named.
    refused = "--service vertex applies to --provider gcp or --provider west, which"
    with pytest.raises(ConfigError, match=refused):
        with_flags(settings, ScanRequest(providers=("east",), flags=flags))
