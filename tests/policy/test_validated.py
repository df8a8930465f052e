"""The shipped packs' validation keys (`policy/validated.SHIPPED`) name exactly the packs as they
are, each of which passes the JSON Schema and the depth scan (both skipped when a pack loads): a pack edited without its key is caught here, and an
edited pack is validated at run time all the same (its key misses).

    python -m tests.policy.test_validated    # prints each shipped pack's current key
"""

from __future__ import annotations

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


def test_every_shipped_pack_passes_the_schema_and_its_key_is_listed() -> None:
    for path, key in _current().items():
        text = read_text(path)
        yamlguard.check_yaml_depth(path, text, yaml.SafeLoader)  # loaded without the scan
        data = load_documents(path, text)[0].data
        assert key_problems(path, data) == [] and schema_problems(path, data) == [], path
        assert key in validated.SHIPPED, (
            f"{path} changed: put its key {key} in policy/validated.py SHIPPED "
            "(python -m tests.policy.test_validated)"
        )
    stale = validated.SHIPPED - set(_current().values())
    assert not stale, f"keys in SHIPPED that name no shipped pack: {sorted(stale)}"


def test_an_edited_copy_of_the_shipped_pack_is_validated_and_the_pack_is_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "empty-cache"))
    checked: list[str] = []
    real = loader.schema_problems
    monkeypatch.setattr(loader, "schema_problems", lambda p, d: checked.append(p) or real(p, d))
    load_policy(None)
    assert checked == []  # the shipped pack: known valid on a machine that never saw it
    assert not (tmp_path / "empty-cache").exists()  # and nothing written for it
    copy = tmp_path / "runbook.yaml"
    copy.write_text(Path(builtin_pack_path("runbook")).read_text() + "# one byte more\n")
    load_policy([str(copy)])
    assert checked == [str(copy)]
    load_policy([str(copy)])
    assert checked == [str(copy)]  # remembered in the cache folder after it passed


if __name__ == "__main__":
    for path, key in _current().items():
        print(f"{key}  {path}")
