"""The shipped packs' validation keys (`policy/validated.SHIPPED`) name exactly the packs as they
are, each of which passes the JSON Schema, the key check and the depth scan (all three skipped when a pack
loads): a pack edited without its key is caught here, and an
edited pack is validated at run time all the same (its key misses).

    python -m tests.policy.test_validated    # writes each shipped pack's key into SHIPPED

The keys are written, never copied by hand: after an edit to a pack (or two branches' edits
merged), the command rewrites the `SHIPPED` block of `src/gpu_audit/policy/validated.py`.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
import yaml

from gpu_audit.core import yamlguard
from gpu_audit.core.yamlsrc import load_documents, read_text
from gpu_audit.policy import loader, validated
from gpu_audit.policy.loader import BUILTIN_PACKS, builtin_pack_path, load_policy
from gpu_audit.policy.structure import key_problems, schema_problems


def _current() -> dict[str, str]:
    """Each shipped pack's file and its validation key now."""
    keys = {}
    for name in BUILTIN_PACKS:
        path = builtin_pack_path(name)
        keys[path] = validated.validation_key(read_text(path))
    return keys


VALIDATED = Path(validated.__file__)
_BLOCK = re.compile(r"^SHIPPED = frozenset\(\n    \{\n.*?^    \}\n\)\n", re.M | re.S)


def shipped_block(keys: dict[str, str]) -> str:
    """The `SHIPPED = frozenset({...})` statement naming these keys (pack file → key)."""
    root = Path(validated.__file__).resolve().parents[3]
    lines = []
    for path, key in sorted(keys.items(), key=lambda item: item[1]):
        where = Path(path).resolve()
        shown = where.relative_to(root) if where.is_relative_to(root) else Path(path).name
        lines.append(f'        "{key}",  # {shown.as_posix()}\n')
    return "SHIPPED = frozenset(\n    {\n" + "".join(lines) + "    }\n)\n"


def write_shipped(source: Path = VALIDATED) -> bool:
    """Rewrite the SHIPPED block of validated.py with the packs' current keys; True if changed."""
    text = source.read_text(encoding="utf-8")
    assert _BLOCK.search(text), f"{source}: no `SHIPPED = frozenset(...)` block to rewrite"
    updated = _BLOCK.sub(lambda _: shipped_block(_current()), text, count=1)
    if updated == text:
        return False
    temporary = source.with_suffix(".py.tmp")
    temporary.write_text(updated, encoding="utf-8")
    os.replace(temporary, source)
    return True


def test_the_shipped_block_is_what_the_command_writes() -> None:
    """The block in validated.py is the writer's output: nothing in it is hand-copied."""
    block = _BLOCK.search(VALIDATED.read_text(encoding="utf-8"))
    assert block is not None
    assert block.group(0) == shipped_block(_current()), (
        "run `python -m tests.policy.test_validated` (it rewrites SHIPPED in policy/validated.py)"
    )


def test_the_writer_rewrites_only_the_block(tmp_path: Path) -> None:
    copy = tmp_path / "validated.py"
    stale = _BLOCK.sub(lambda _: shipped_block({"x.yaml": "0" * 40}), VALIDATED.read_text())
    copy.write_text(stale)
    assert write_shipped(copy) is True
    assert copy.read_text() == VALIDATED.read_text()
    assert write_shipped(copy) is False  # written once, then left alone


def test_every_shipped_pack_passes_the_schema_and_its_key_is_listed() -> None:
    for path, key in _current().items():
        text = read_text(path)
        yamlguard.check_yaml_depth(path, text, yaml.SafeLoader)  # loaded without the scan
        data = load_documents(path, text)[0].data
        assert key_problems(path, data) == [] and schema_problems(path, data) == [], path
        assert key in validated.SHIPPED, (
            f"{path} changed: put its key {key} in policy/validated.py SHIPPED "
            "(python -m tests.policy.test_validated writes it)"
        )
    stale = validated.SHIPPED - set(_current().values())
    assert not stale, f"keys in SHIPPED that name no shipped pack: {sorted(stale)}"


def test_an_edited_copy_of_the_shipped_pack_is_validated_and_the_pack_is_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "empty-cache"))
    checked: list[str] = []
    keyed: list[str] = []
    real, real_keys = loader.schema_problems, loader.key_problems
    monkeypatch.setattr(loader, "schema_problems", lambda p, d: checked.append(p) or real(p, d))
    monkeypatch.setattr(loader, "key_problems", lambda p, d: keyed.append(p) or real_keys(p, d))
    load_policy(None)
    assert checked == []  # the shipped pack: known valid on a machine that never saw it
    assert keyed == []  # and its keys known to be text (the test above checks them)
    assert not (tmp_path / "empty-cache").exists()  # and nothing written for it
    copy = tmp_path / "runbook.yaml"
    copy.write_text(Path(builtin_pack_path("runbook")).read_text() + "# one byte more\n")
    load_policy([str(copy)])
    assert checked == [str(copy)] and keyed == [str(copy)]
    load_policy([str(copy)])
    assert checked == [str(copy)]  # remembered in the cache folder after it passed
    assert keyed == [str(copy)] * 2  # but its keys are checked on every load: never cached


if __name__ == "__main__":
    changed = write_shipped()
    for path, key in _current().items():
        print(f"{key}  {path}")
    print(f"{VALIDATED}: {'rewritten' if changed else 'already current'}")
