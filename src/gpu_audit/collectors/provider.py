"""What a provider declares without importing its SDK: settings, CLI options, factory, hints."""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable, Mapping
from dataclasses import field
from typing import TYPE_CHECKING, Any

from gpu_audit.core.frozen import record
from gpu_audit.errors import ConfigError

if TYPE_CHECKING:  # the collector classes are imported on `create`, when a scan starts
    from gpu_audit.collectors.interface import Collector


@record
class Option:
    """A `scan` flag that overrides one field of a provider's settings section.

    Two providers may declare the same flag (`--concurrency`); the CLI shows it once and the
    value goes to every selected provider that declares it (only `setting` and `choices` may
    differ between their declarations). A flag only other providers declare
    is an error, so `--project` with `--provider aws` alone is refused, not ignored.
    """

    flag: str  # "--region"
    setting: str  # the settings field it fills: "regions"
    help: str
    multiple: bool = False
    kind: type = str  # str, int or float
    bounds: tuple[float, float] | None = None  # inclusive range for int/float
    metavar: str | None = None
    # Allowed values (multiple=True): a flag several providers declare with their own choices
    # shows their union, and each provider receives only the values among its own.
    choices: tuple[str, ...] = ()

    @property
    def dest(self) -> str:
        """The keyword click passes: `--role-arn` → `role_arn`."""
        return self.flag.lstrip("-").replace("-", "_")


@record
class Provider:
    """One live source. Everything here is cheap: the collector module is imported on `create`."""

    name: str  # the --provider value and the settings section
    settings: type  # a frozen dataclass of defaults; its fields are the section's keys
    options: tuple[Option, ...]
    factory: str  # "module:Class", imported only when a scan starts
    requires: str  # the module its extra brings, checked before importing the factory
    extra: str  # pip install 'gpu-audit[extra]'
    hints: Mapping[str, str] = field(default_factory=dict)  # missing field → how to supply it
    permissions_heading: str = ""  # the section of docs/permissions.md for this provider
    # Checks a section after flags are applied (cross-field rules); raises ConfigError.
    check: Callable[[Any], None] | None = None
    # Checks each value on its own (a timeout above 0, a known source): run where the settings
    # file is read, so the error has its file:line, and again after flags. Its ConfigError
    # starts `NAME.KEY: ` so the loader finds the key's line.
    values: Callable[[Any], None] | None = None

    def create(self, section: Any, progress: Any = None) -> Collector[Any]:
        """The collector for `section`, or a ConfigError naming the extra to install."""
        try:
            missing = importlib.util.find_spec(self.requires) is None
        except (ImportError, ValueError):
            missing = True
        if missing:
            raise ConfigError(
                f"--provider {self.name}: {self.requires} is not installed; "
                f"install the extra: pip install 'gpu-audit[{self.extra}]'"
            )
        module_name, _, class_name = self.factory.partition(":")
        cls = getattr(importlib.import_module(module_name), class_name)
        return cls(section, progress)
