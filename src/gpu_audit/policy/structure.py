"""The structure layer of a policy file: every JSON Schema error, each one located line."""

from __future__ import annotations

import os
from datetime import date
from typing import Any

from gpu_audit.core.yamlsrc import LineList, LineMap

_HERE = os.path.dirname(os.path.abspath(__file__))
VALUE_LIMIT = 80  # characters of a value a message echoes; the rest is clipped


def policy_schema() -> dict[str, Any]:
    """The policy language's JSON Schema (policy/schema.json), read from disk."""
    import json  # only where a policy is validated: not on a commit's path

    with open(os.path.join(_HERE, "schema.json"), encoding="utf-8") as handle:
        text = handle.read()
    schema: dict[str, Any] = json.loads(text)
    return schema


def shown(value: Any) -> str:
    """A value as a message echoes it: at most `VALUE_LIMIT` characters."""
    text = ("true" if value else "false") if isinstance(value, bool) else str(value)
    return text if len(text) <= VALUE_LIMIT else f"{text[: VALUE_LIMIT - 1]}… ({len(text):,} chars)"


def did_you_mean(name: Any, choices: Any) -> str:
    """` (did you mean 'x'?)` for the closest of `choices`, or `""`; any key, text or not."""
    if not isinstance(name, str):
        return ""
    from difflib import get_close_matches  # an error's hint: not on every commit's path

    close = get_close_matches(name, sorted(map(str, choices)), n=1)
    return f" (did you mean '{close[0]}'?)" if close else ""


def key_problems(path: str, node: Any, owner: str = "policy") -> list[tuple[tuple[Any, ...], str]]:
    """Every mapping key in the file that is not text (`8: x`, `true:`): (where, message). JSON
    Schema would see them as text, and a name compared with them as text would be wrong."""
    found: list[tuple[tuple[Any, ...], str]] = []

    def walk(value: Any, at: tuple[Any, ...]) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                if not isinstance(key, str):
                    line = value.line_of(key) if isinstance(value, LineMap) else None
                    where = f"{path}:{line}" if line else path
                    kind = _kind(key)
                    found.append(
                        (
                            at,
                            f"{where}: {_owner(at, node, owner)}: {shown(key)}: a key "
                            f"must be text, got {kind} (quote it)",
                        )
                    )
                    continue
                walk(item, (*at, key))
        elif isinstance(value, list):
            for index, item in enumerate(value):
                walk(item, (*at, index))

    walk(node, ())
    return found


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, date):
        return "a date"
    if isinstance(value, int | float):
        return "a number"
    kinds = {str: "text", list: "a list", dict: "a mapping", type(None): "nothing"}
    return kinds.get(type(value), type(value).__name__)


def _owner(at: tuple[Any, ...], root: Any, default: str) -> str:
    """`rule 'id'` (`rule #2` without a text id), `waiver #1`, or `default`."""
    if len(at) >= 2 and at[0] == "rules" and isinstance(at[1], int):
        rule = root["rules"][at[1]]
        rule_id = rule.get("id") if isinstance(rule, dict) else None
        return f"rule '{shown(rule_id)}'" if isinstance(rule_id, str) else f"rule #{at[1] + 1}"
    if len(at) >= 2 and at[0] == "waivers" and isinstance(at[1], int):
        return f"waiver #{at[1] + 1}"
    return default


def plain(value: Any) -> Any:  # Any: YAML of any shape
    """Dates as ISO strings, so the schema sees what JSON would have."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, date):
        return value.isoformat()
    return value


def schema_problems(path: str, data: LineMap) -> list[tuple[tuple[Any, ...], str]]:
    """Every schema error as (its path in the file, one located line), one per place."""
    import jsonschema  # ~0.15 s to import: paid only when a policy file is new to this machine

    validator = jsonschema.Draft202012Validator(policy_schema())
    errors = sorted(validator.iter_errors(plain(data)), key=lambda e: list(map(str, e.path)))
    out: list[tuple[tuple[Any, ...], str]] = []
    seen: set[tuple[Any, ...]] = set()
    for error in errors:
        at = tuple(error.absolute_path)
        if at in seen:
            continue
        seen.add(at)
        out.append((at, message(path, data, error)))
    return out


def message(path: str, data: LineMap, error: Any) -> str:
    """A schema error as one located line: `path:line: rule 'id': key: what is wrong`, in the policy
    language's words."""
    node: Any = data
    owner = "policy"
    key: Any = None
    parents: list[Any] = []
    for step in error.absolute_path:
        parents.append(node)
        in_map = isinstance(node, dict) and step in node
        in_list = isinstance(node, list) and isinstance(step, int) and step < len(node)
        if in_map or in_list:
            key = step
            node = node[step]
        if len(parents) == 2 and isinstance(node, dict):
            section = error.absolute_path[0]
            if section == "rules":
                owner = f"rule '{shown(node.get('id', f'#{step + 1}'))}'"
            elif section == "waivers":
                owner = f"waiver #{step + 1}"
    text = error.message
    if error.validator == "additionalProperties" and isinstance(node, dict):
        allowed = set(error.schema.get("properties", {}))
        extra = [k for k in node if k not in allowed]
        if extra:
            key = extra[0]
            line = node.line_of(key) if isinstance(node, LineMap) else data.line
            name, hint = shown(key), did_you_mean(key, allowed)
            return f"{path}:{line}: {owner}: {name}: unknown key '{name}'{hint}"
    if error.validator == "required" and isinstance(node, dict):
        line = node.line if isinstance(node, LineMap) else data.line
        missing = text.split("'")[1] if "'" in text else text
        return f"{path}:{line}: {owner}: {missing}: required key is missing"
    if error.validator == "enum":
        choices = error.validator_value
        text = (
            f"'{shown(error.instance)}' is not one of {', '.join(map(str, choices))}"
            f"{did_you_mean(error.instance, choices)}"
        )
    elif key == "savings" and error.validator == "oneOf":
        kinds = error.schema["oneOf"][0]["enum"]
        got = error.instance if isinstance(error.instance, str) else _kind(error.instance)
        text = (
            f"unknown saving '{shown(got)}'{did_you_mean(error.instance, kinds)}; one of "
            f"{', '.join(kinds)}, or {{downsize: GPU-CLASS}}"
        )
    elif error.validator in ("oneOf", "type"):
        got = f"{_kind(error.instance)} {shown(error.instance)!r}"
        text = f"expected {_expected(error.schema)}, got {got}"
    else:
        text = shown(text)
    parent = parents[-1] if parents else data
    if isinstance(parent, LineMap) and key in parent.key_lines:
        line = parent.line_of(key)
    elif isinstance(parent, LineList) and isinstance(key, int) and key < len(parent.item_lines):
        line = parent.item_lines[key]
    else:
        line = getattr(node, "line", data.line)
    return f"{path}:{line}: {owner}: {shown(key) if key is not None else 'policy'}: {text}"


def _expected(schema: dict[str, Any]) -> str:
    names = {
        "string": "text",
        "array": "a list",
        "object": "a mapping",
        "number": "a number",
        "integer": "a whole number",
        "boolean": "true/false",
    }
    kinds = [s.get("type") for s in schema.get("oneOf", [schema])]
    flat = [k for kind in kinds for k in (kind if isinstance(kind, list) else [kind]) if k]
    return " or ".join(names.get(k, k) for k in dict.fromkeys(flat)) or "another value"
