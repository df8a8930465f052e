"""Run settings: `.gpu-audit.yaml` (found upwards, or `--config`) overlaid by command-line flags."""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import field, fields, replace
from datetime import date
from typing import Any

from gpu_audit.core.frozen import record
from gpu_audit.core.resource import Workload
from gpu_audit.core.workload import DEFAULT_PATTERNS
from gpu_audit.core.yamlguard import printable
from gpu_audit.core.yamlsrc import LineMap, load_documents, read_text
from gpu_audit.errors import ConfigError, ConfigErrors, InputError

CONFIG_NAMES = (".gpu-audit.yaml", ".gpu-audit.yml")
LONGEST_PATH = 4096  # PATH_MAX: a longer path names no file, and would come back in messages
FAIL_ON = ("info", "low", "medium", "high", "critical", "none")
SHARED_KEYS = (
    "policies",
    "fail_on",
    "workload_patterns",
    "history",
    "exclude",
    "prices",
    "prices_max_age_days",
)


@record
class Settings:
    """The whole file: one section per provider (`providers[name]`), then the shared keys."""

    providers: Mapping[str, Any] = field(default_factory=lambda: _Defaults())
    policies: tuple[str, ...] = ()
    fail_on: str | None = None  # one of FAIL_ON, checked when the file is read
    # workload → name globs for resources whose source does not say; replaces the defaults
    workload_patterns: Mapping[str, tuple[str, ...]] = field(
        default_factory=lambda: dict(DEFAULT_PATTERNS)
    )
    history: str | None = None  # the audit history database (`scan --history`)
    source: str | None = None  # the config file these came from
    exclude: tuple[str, ...] = ()  # `check`: gitwildmatch patterns skipped under directories
    prices: str | None = None  # a price file laid over the bundled catalog (`--prices`)
    prices_max_age_days: int = 90  # a price file older than this gets one warning line

    def section(self, provider: str) -> Any:  # Any: a setting's value, typed by its section
        """The settings of one provider (its dataclass from the registry)."""
        return self.providers[provider]


class _Defaults(Mapping[str, Any]):
    """Every provider's default section, made when first read: `check` reads none, and the
    provider registry (each provider's settings and options) is not imported for it."""

    def __init__(self) -> None:
        self.made: dict[str, Any] | None = None

    def _sections(self) -> dict[str, Any]:
        if self.made is None:
            # keeps collectors.registry off check's start-up
            from gpu_audit.collectors.registry import PROVIDERS

            self.made = {name: provider.settings() for name, provider in PROVIDERS.items()}
        return self.made

    def __getitem__(self, name: str) -> object:
        return self._sections()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._sections())

    def __len__(self) -> int:
        return len(self._sections())


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


def load_settings(path: str | None, start: str | None = None) -> Settings:
    """Settings from `path`, or the file discovered from `start` (default: here), or defaults."""
    found = path if path else discover(start)
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
        # keeps collectors.registry off check's start-up
        from gpu_audit.collectors.registry import PROVIDERS

        keys = ", ".join([*PROVIDERS, *SHARED_KEYS])
        raise ConfigError(f"{found}:1: config: expected a mapping with keys among {keys}")
    return _build(found, data)


def _spelled(path: str, data: LineMap, name: str) -> str:
    """The key `name` as the file spells it (`prices_max_age_days` or `prices-max-age-days`,
    both read alike); both spellings at once is refused at the second's line."""
    keys = [key for key in data if str(key).replace("-", "_") == name]
    if len(keys) > 1:
        raise ConfigError(
            f"{path}:{data.line_of(keys[1])}: config: {_shown(keys[1])}: given twice "
            f"(also as {_shown(keys[0])} on line {data.line_of(keys[0])})"
        )
    return str(keys[0]) if keys else name


def _shown(value: Any) -> str:
    """A value from the file, echoed clipped and escaped on one line."""
    return printable(value if isinstance(value, str) else repr(value), 80)


def _file_path(path: str, data: LineMap, name: str, base: str) -> str | None:
    """A path key (`history`, `prices`): text without a NUL byte, relative to the file."""
    key = _spelled(path, data, name)
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or "\0" in value or not value or len(value) > LONGEST_PATH:
        what = "a path"
        if isinstance(value, str) and "\0" in value:
            what = "no NUL byte in a path"
        elif isinstance(value, str) and value:
            what = f"a path of at most {LONGEST_PATH:,} characters"  # every message echoes it
        raise ConfigError(f"{path}:{data.line_of(key)}: config: {name}: expected {what}")
    resolved = os.path.join(base, os.path.expanduser(value))
    if name == "prices" and not os.path.exists(resolved):  # read by every run: said here, located
        shown = printable(resolved, 200)
        raise ConfigError(f"{path}:{data.line_of(key)}: config: prices: no such file {shown}")
    return resolved


class _Problems:
    """The mistakes of one settings file, each kept as its step finds it: a run reports them all,
    in line order (`ConfigErrors`), not the first of them."""

    def __init__(self) -> None:
        self.messages: list[str] = []

    # Any: a setting's value, typed by its section
    def attempt(self, step: Callable[..., Any], *args: Any, default: Any = None) -> Any:
        """`step(*args)`, or `default` with its error kept."""
        try:
            return step(*args)
        except ConfigErrors as exc:
            self.messages.extend(exc.messages)
        except ConfigError as exc:
            self.messages.append(str(exc))
        return default

    def raise_any(self) -> None:
        """Raise every problem found at once, in line order and each once, as ConfigErrors; nothing
        when there is none."""
        if self.messages:
            from gpu_audit.policy.loader import in_line_order  # an error's order only

            unique = list(dict.fromkeys(self.messages))
            raise ConfigErrors(in_line_order(unique))


def _build(path: str, data: LineMap) -> Settings:
    problems = _Problems()
    sections: Mapping[str, Any] = _Defaults()
    if any(str(key).replace("-", "_") not in SHARED_KEYS for key in data):
        from gpu_audit.collectors.registry import PROVIDERS  # a provider's section (or a typo)

        known = [*PROVIDERS, *SHARED_KEYS]
        for key in data:
            if str(key).replace("-", "_") not in known:
                message = _unknown(str(key), known)
                problems.messages.append(f"{path}:{data.line_of(key)}: config: {message}")
        sections = {
            name: problems.attempt(
                _section,
                path,
                data,
                name,
                provider.settings,
                provider.values,
                default=provider.settings(),
            )
            for name, provider in PROVIDERS.items()
        }
    policies = problems.attempt(_policies, path, data, default=())
    fail_on = problems.attempt(_fail_on, path, data)
    patterns = problems.attempt(_patterns, path, data, default=dict(DEFAULT_PATTERNS))
    exclude = problems.attempt(_exclude, path, data, default=())
    base = os.path.dirname(path)
    history = problems.attempt(_file_path, path, data, "history", base)
    prices = problems.attempt(_file_path, path, data, "prices", base)
    age = problems.attempt(_age, path, data, default=90)
    problems.raise_any()
    return Settings(
        sections,
        policies,
        fail_on,
        patterns,
        history=history,
        source=path,
        exclude=exclude,
        prices=prices,
        prices_max_age_days=age,
    )


def _policies(path: str, data: LineMap) -> tuple[str, ...]:
    policy_key = _spelled(path, data, "policies")
    policies = data.get(policy_key) or ()
    if isinstance(policies, str):
        policies = (policies,)
    if not isinstance(policies, list | tuple) or not all(
        isinstance(p, str) and p and "\0" not in p for p in policies
    ):
        line = data.line_of(policy_key)
        raise ConfigError(f"{path}:{line}: config: policies: expected a list of file paths")
    base = os.path.dirname(path)
    return tuple(p if p == "runbook" else os.path.join(base, p) for p in policies)


def _fail_on(path: str, data: LineMap) -> str | None:
    fail_key = _spelled(path, data, "fail_on")
    fail_on = data.get(fail_key)
    if fail_on is not None and fail_on not in FAIL_ON:
        from difflib import get_close_matches  # an error's hint: not on every commit's path

        close = get_close_matches(str(fail_on)[:200], FAIL_ON, n=1)
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        raise ConfigError(
            f"{path}:{data.line_of(fail_key)}: config: fail_on: {_shown(repr(fail_on))} is not "
            f"one of {', '.join(FAIL_ON)}{hint}"
        )
    return fail_on if fail_on is None else str(fail_on)


def _exclude(path: str, data: LineMap) -> tuple[str, ...]:
    exclude_key = _spelled(path, data, "exclude")
    exclude = data.get(exclude_key) or ()
    if isinstance(exclude, str):
        exclude = (exclude,)
    if not isinstance(exclude, list | tuple) or not all(isinstance(p, str) for p in exclude):
        line = data.line_of(exclude_key)
        raise ConfigError(f"{path}:{line}: config: exclude: expected a list of patterns")
    return tuple(exclude)


def _age(path: str, data: LineMap) -> int:
    age_key = _spelled(path, data, "prices_max_age_days")
    age = data.get(age_key, 90)
    if isinstance(age, bool) or not isinstance(age, int) or age < 0:
        line = data.line_of(age_key)
        raise ConfigError(
            f"{path}:{line}: config: prices_max_age_days: expected whole days, got {_shown(age)}"
        )
    return age


def _patterns(path: str, data: LineMap) -> Mapping[str, tuple[str, ...]]:
    key = _spelled(path, data, "workload_patterns")
    raw = data.get(key)
    if raw is None:
        return dict(DEFAULT_PATTERNS)
    line = data.line_of(key)
    if not isinstance(raw, LineMap):
        raise ConfigError(f"{path}:{line}: config: workload_patterns: expected a mapping")
    workloads = [w.value for w in Workload if w is not Workload.UNKNOWN]
    patterns = {}
    problems = _Problems()
    for name, globs in raw.items():
        key = f"workload_patterns.{name}"
        if name not in workloads:
            from difflib import get_close_matches  # an error's hint: not on every commit's path

            close = get_close_matches(str(name)[:200], workloads, n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            problems.messages.append(
                f"{path}:{raw.line_of(name)}: config: workload_patterns.{_shown(name)}: "
                f"unknown workload{hint}; "
                f"valid: {', '.join(workloads)}"
            )
            continue
        patterns[str(name)] = problems.attempt(_coerce, path, raw.line_of(name), key, globs, tuple)
    problems.raise_any()
    return patterns


def _section(
    path: str, data: LineMap, name: str, kind: Any, check: Callable[[Any], None] | None = None
) -> Any:  # Any: a setting's value, typed by its section
    section_key = _spelled(path, data, name)
    raw = data.get(section_key)
    if raw is None:
        return kind()
    if not isinstance(raw, LineMap):
        line = data.line_of(section_key)
        raise ConfigError(f"{path}:{line}: config: {name}: expected a mapping")
    defaults = kind()
    values: dict[str, Any] = {}
    lines: dict[str, int] = {}
    types = {f.name: type(getattr(defaults, f.name)) for f in fields(kind)}
    problems = _Problems()
    for key, value in raw.items():
        attr = str(key).replace("-", "_")
        line = raw.line_of(key)
        if attr not in types:
            unknown = _unknown(str(key), list(types))
            problems.messages.append(f"{path}:{line}: config: {name}.{unknown}")
            continue
        if problems.attempt(_spelled, path, raw, attr) is None:
            continue  # `max-attempts` and `max_attempts` both: refused
        coerced = problems.attempt(_coerce, path, line, f"{name}.{key}", value, types[attr])
        if coerced is not None or value is None:
            values[attr] = coerced
            lines[attr] = line
    problems.raise_any()  # a section's checks below read whole values
    section = replace(defaults, **values)
    if check is not None:
        try:
            check(section)
        except ConfigError as exc:  # `NAME.KEY: ...`: located at that key's line
            attr = str(exc).partition(":")[0].removeprefix(f"{name}.")
            line = lines.get(attr, data.line_of(section_key))
            raise ConfigError(f"{path}:{line}: config: {exc}") from None
    return section


def _unknown(key: str, known: list[str]) -> str:
    from difflib import get_close_matches  # an error's hint: not on every commit's path

    close = get_close_matches(key.replace("-", "_")[:200], known, n=1)
    hint = f" (did you mean '{close[0]}'?)" if close else ""
    return f"{_shown(key)}: unknown key{hint}; valid keys: {', '.join(known)}"


# Any: a setting's value, typed by its section
def _coerce(path: str, line: int, key: str, value: Any, kind: type) -> Any:
    if value is None and kind is type(None):  # `since: ~` where unset is the default: unset
        return None
    if kind is tuple:
        items = [value] if isinstance(value, str | int) else value
        if not isinstance(items, list) or not all(isinstance(i, str | int) for i in items):
            raise ConfigError(f"{path}:{line}: config: {key}: expected a list of strings")
        return tuple(str(i) for i in items)
    if kind is float and isinstance(value, int | float) and not isinstance(value, bool):
        if not math.isfinite(value):  # `.nan`, `.inf`: no setting means that
            raise ConfigError(f"{path}:{line}: config: {key}: expected a finite number")
        return float(value)
    if kind in (str, type(None)) and isinstance(value, str) and "\0" in value:
        raise ConfigError(f"{path}:{line}: config: {key}: a NUL byte in a value")
    if kind is int and isinstance(value, int) and not isinstance(value, bool):
        return value
    if kind in (str, type(None)) and isinstance(value, str):
        return value
    if kind in (str, type(None)) and isinstance(value, date):  # YAML reads `2026-09-01` as a date
        return value.isoformat()
    expected = "str" if kind is type(None) else kind.__name__  # an optional text, unset by default
    raise ConfigError(f"{path}:{line}: config: {key}: expected {expected}, got {_shown(value)}")
