"""Run settings: `.gpu-audit.yaml` (found upwards, or `--config`) overlaid by command-line flags."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields, replace
from difflib import get_close_matches
from typing import Any

from gpu_audit.errors import ConfigError, InputError
from gpu_audit.yamlsrc import LineMap, load_documents, read_text

CONFIG_NAMES = (".gpu-audit.yaml", ".gpu-audit.yml")


@dataclass(frozen=True, slots=True)
class AwsSettings:
    profiles: tuple[str, ...] = ()
    role_arns: tuple[str, ...] = ()  # ARNs, or a template with an {account} placeholder
    accounts: tuple[str, ...] = ()  # fills {account} in role_arns
    organization_role: str | None = None  # role name assumed in every Organizations account
    regions: tuple[str, ...] = ()  # empty: every enabled region (DescribeRegions)
    concurrency: int = 8
    workload_tag: str = "workload"
    data_bucket_tag: str = "data-bucket"
    metric_namespace: str = "CWAgent"
    metric_name: str = "nvidia_smi_utilization_gpu"
    metric_dimension: str = "InstanceId"
    window_hours: float = 24.0
    connect_timeout: float = 5.0
    read_timeout: float = 20.0
    max_attempts: int = 5


@dataclass(frozen=True, slots=True)
class GcpSettings:
    projects: tuple[str, ...] = ()
    concurrency: int = 8
    workload_label: str = "workload"
    data_bucket_label: str = "data-bucket"
    metric_type: str = "agent.googleapis.com/gpu/utilization"
    window_hours: float = 24.0
    timeout: float = 20.0
    max_attempts: int = 3


@dataclass(frozen=True, slots=True)
class Settings:
    aws: AwsSettings = field(default_factory=AwsSettings)
    gcp: GcpSettings = field(default_factory=GcpSettings)
    policies: tuple[str, ...] = ()
    fail_on: str | None = None
    history: str | None = None  # the audit history database (`scan --history`)
    source: str | None = None  # the config file these came from


def discover(start: str | None = None) -> str | None:
    """The nearest `.gpu-audit.yaml` from the working directory upwards, else the user's file."""
    here = os.path.realpath(start or os.getcwd())
    while True:
        for name in CONFIG_NAMES:
            candidate = os.path.join(here, name)
            if os.path.isfile(candidate):
                return candidate
        parent = os.path.dirname(here)
        if parent == here:
            break
        here = parent
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    user = os.path.join(xdg, "gpu-audit", "config.yaml")
    return user if os.path.isfile(user) else None


def load_settings(path: str | None, discover_default: bool = True) -> Settings:
    """Settings from `path`, or the discovered file, or the defaults."""
    found = path if path else (discover() if discover_default else None)
    if found is None:
        return Settings()
    try:
        documents = load_documents(found, read_text(found))
    except InputError as exc:
        raise ConfigError(str(exc)) from exc
    data = documents[0].data if documents else None
    if data is None:
        return Settings(source=found)
    if not isinstance(data, LineMap):
        raise ConfigError(f"{found}:1: config: expected a mapping with aws:, gcp:, policies:")
    return _build(found, data)


def _build(path: str, data: LineMap) -> Settings:
    known = {"aws", "gcp", "policies", "fail_on", "fail-on", "history"}
    for key in data:
        if key not in known:
            raise ConfigError(f"{path}:{data.line_of(key)}: config: {key}: unknown key")
    aws = _section(path, data, "aws", AwsSettings)
    gcp = _section(path, data, "gcp", GcpSettings)
    policies = data.get("policies") or ()
    if isinstance(policies, str):
        policies = (policies,)
    base = os.path.dirname(path)
    resolved = tuple(p if p == "runbook" else os.path.join(base, p) for p in policies)
    fail_on = data.get("fail_on", data.get("fail-on"))
    history = data.get("history")
    if history is not None and not isinstance(history, str):
        raise ConfigError(f"{path}:{data.line_of('history')}: config: history: expected a path")
    history = os.path.join(base, os.path.expanduser(history)) if history else None
    return Settings(
        aws=aws, gcp=gcp, policies=resolved, fail_on=fail_on, history=history, source=path
    )


def _section(path: str, data: LineMap, name: str, kind: Any) -> Any:
    raw = data.get(name)
    if raw is None:
        return kind()
    if not isinstance(raw, LineMap):
        raise ConfigError(f"{path}:{data.line_of(name)}: config: {name}: expected a mapping")
    defaults = kind()
    values: dict[str, Any] = {}
    types = {f.name: type(getattr(defaults, f.name)) for f in fields(kind)}
    for key, value in raw.items():
        attr = str(key).replace("-", "_")
        line = raw.line_of(key)
        if attr not in types:
            close = get_close_matches(attr, list(types), n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise ConfigError(f"{path}:{line}: config: {name}.{key}: unknown key{hint}")
        values[attr] = _coerce(path, line, f"{name}.{key}", value, types[attr])
    return replace(defaults, **values)


def _coerce(path: str, line: int, key: str, value: Any, kind: type) -> Any:
    if kind is tuple:
        items = [value] if isinstance(value, str | int) else value
        if not isinstance(items, list) or not all(isinstance(i, str | int) for i in items):
            raise ConfigError(f"{path}:{line}: config: {key}: expected a list of strings")
        return tuple(str(i) for i in items)
    if kind is float and isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if kind is int and isinstance(value, int) and not isinstance(value, bool):
        return value
    if kind in (str, type(None)) and isinstance(value, str):
        return value
    raise ConfigError(f"{path}:{line}: config: {key}: expected {kind.__name__}, got {value!r}")
