"""The parsed-policy cache: the tree read back is the tree parsed, and an edit is never stale."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from gpu_audit.core.yamlsrc import LineList, LineMap, Templated, load_documents
from gpu_audit.policy import loader, parsed
from gpu_audit.policy.loader import builtin_pack_path, load_policy

POLICY = """\
version: 1
rules:
  - id: spot-only
    severity: high
    require: {capacity: spot}
    tags: [a, 7, 1.5, true, null]
waivers:
  - rule: spot-only
    resource: "${ID}"
    reason: !Ref Reason
    expires: 2031-02-03
    at: 2031-02-03T04:05:06+02:00
    7: seven
"""
VALID = "version: 1\nrules:\n  - id: spot-only\n    severity: high\n    require: {capacity: spot}\n"


def _same(a: Any, b: Any) -> None:
    """Equal values, types and every line."""
    assert type(a) is type(b)
    if isinstance(a, LineMap):
        assert a.line == b.line and a.key_lines == b.key_lines and list(a) == list(b)
        for key in a:
            _same(a[key], b[key])
    elif isinstance(a, LineList):
        assert a.line == b.line and a.item_lines == b.item_lines and len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            _same(x, y)
    elif isinstance(a, Templated):
        assert a.text == b.text
    else:
        assert a == b


@pytest.mark.parametrize("text", [POLICY, Path(builtin_pack_path("runbook")).read_text()])
def test_a_cached_tree_reads_back_as_parsed(tmp_path: Path, text: str) -> None:
    tree = load_documents("p.yaml", text)[0].data
    parsed.write_tree(str(tmp_path), "tree-k", tree)
    _same(parsed.read_tree(str(tmp_path), "tree-k"), tree)


def test_a_tree_with_aliases_or_other_values_is_not_cached(tmp_path: Path) -> None:
    shared = load_documents("p.yaml", "a: &x {b: 1}\nc: *x\n")[0].data
    parsed.write_tree(str(tmp_path), "tree-a", shared)
    other = LineMap(1)
    other["x"] = {1, 2}
    parsed.write_tree(str(tmp_path), "tree-b", other)
    assert os.listdir(tmp_path) == []


def test_a_damaged_or_foreign_entry_is_parsed_again(tmp_path: Path) -> None:
    folder = str(tmp_path)
    (tmp_path / "tree-k").write_text('["tree-k", ["M", 1, ["a"]')
    assert parsed.read_tree(folder, "tree-k") is None
    (tmp_path / "tree-k").write_text('["tree-other", ["M", 1, [], [], []]]')
    assert parsed.read_tree(folder, "tree-k") is None
    (tmp_path / "tree-k").write_text('["tree-k", ["Q", 1]]')
    assert parsed.read_tree(folder, "tree-k") is None


def test_a_warm_load_does_not_parse_and_an_edit_is_never_stale(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    path = tmp_path / "p.yaml"
    path.write_text(VALID)
    parses: list[str] = []
    real = loader._parse

    def counted(where: str, text: str) -> LineMap:
        parses.append(text)
        return real(where, text)

    monkeypatch.setattr(loader, "_parse", counted)
    first = load_policy([str(path)])
    second = load_policy([str(path)])
    assert len(parses) == 1  # the second load read the cached tree
    assert [r.info for r in second.rules] == [r.info for r in first.rules]
    assert second.versions == first.versions
    path.write_text(VALID.replace("severity: high", "severity: low"))
    third = load_policy([str(path)])
    assert len(parses) == 2 and third.rules[0].info.severity.name == "LOW"


def test_a_changed_loader_parses_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The entry is keyed by the YAML loader's source too: its new version reparses."""
    key = parsed.tree_key("abc")
    copy = tmp_path / "yamlsrc.py"
    copy.write_bytes(Path(parsed.yamlsrc.__file__).read_bytes() + b"\n")
    monkeypatch.setattr(parsed.yamlsrc, "__file__", str(copy))
    assert key is not None and parsed.tree_key("abc") not in (None, key)
    assert parsed.tree_key("abd") != parsed.tree_key("abc")
