"""docs/settings.md lists exactly the keys the settings loader reads, with their defaults and flags."""

from __future__ import annotations

import re
from dataclasses import fields
from typing import Any

from gpu_audit.collectors.registry import PROVIDERS
from gpu_audit.settings import SHARED_KEYS
from tests.conftest import ROOT

DOC = (ROOT / "docs" / "settings.md").read_text()
ROW = re.compile(r"^\| `([\w.]+)` \|([^|]+)\|([^|]+)\|([^|]*)\|", re.MULTILINE)
ROWS = {
    key: (kind.strip(), default.strip(), flag.strip())
    for key, kind, default, flag in ROW.findall(DOC)
}
KINDS = {tuple: "list of strings", str: "string", int: "integer", float: "number"}


def _shown(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, tuple):
        return f"`[{', '.join(value)}]`"
    return f"`{value:g}`" if isinstance(value, float) else f"`{value}`"


def _code_keys() -> dict[str, tuple[str, str, str]]:
    keys = {}
    for name, provider in PROVIDERS.items():
        flags = {o.setting: o.flag for o in provider.options}
        defaults = provider.settings()
        for field in fields(provider.settings):
            value = getattr(defaults, field.name)
            kind = "string" if value is None else KINDS[type(value)]
            keys[f"{name}.{field.name}"] = (
                kind,
                _shown(value),
                f"`{flags[field.name]}`" if field.name in flags else "",
            )
    return keys


def test_the_doc_lists_every_key_and_no_other() -> None:
    expected = {*_code_keys(), *SHARED_KEYS}
    assert set(ROWS) == expected


def test_each_provider_key_shows_its_type_default_and_flag() -> None:
    for key, row in _code_keys().items():
        assert ROWS[key] == row, key


def test_the_docs_name_one_aws_role() -> None:
    """permissions.md creates `gpu-audit-reader`; every other page must use that name."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    stray = [p.name for p in pages if re.search(r"role/gpu-audit-read\b", p.read_text())]
    assert not stray
    assert "role/gpu-audit-reader" in (ROOT / "docs" / "permissions.md").read_text()
