"""Inline `# gpu-audit: ignore[rule-a,rule-b] reason` comments, read from a job file's text.

A comment at the end of a line suppresses findings on that line. A comment on a line of its own
applies to the next line that is not a comment (as yamllint's `disable-line` does), so a comment
above the first key of a document covers the whole document. `# gpu-audit: ignore reason` with
no brackets suppresses every rule (`*`).

The comment marker is the format's (`Syntax.comment`, `#` for YAML), and a line that starts with
one of its directives (`#SBATCH` in a Slurm script) is content, not a comment: an ignore comment
above it applies to it, not to the next command.
"""

from __future__ import annotations

import re

from gpu_audit.core.lazyre import lazy

Suppressions = dict[int, dict[str, str]]

_COMMENT = lazy(
    r"(?:^|\s)#\s*gpu-audit:\s*ignore(?:\[(?P<rules>[^\]]*)\])?(?::|\s|$)\s*(?P<reason>.*?)\s*$"
)


def parse_suppressions(
    text: str, comment: str = "#", directives: tuple[str, ...] = ()
) -> Suppressions:
    """Map each line (1-based) to {rule id: reason} for the ignore comments that apply to it."""
    if "gpu-audit" not in text:  # the common case costs one substring search
        return {}
    pattern = _COMMENT if comment == "#" else _marked(comment)
    found: Suppressions = {}
    pending: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        match = pattern.search(line)
        if stripped.startswith(comment) and not (directives and stripped.startswith(directives)):
            if match:
                pending.update(_rules(match))
            continue
        if not stripped:
            continue
        rules = dict(pending)
        pending.clear()
        if match:
            rules.update(_rules(match))
        if rules:
            found[number] = rules
    return found


def _marked(comment: str) -> re.Pattern[str]:
    """The ignore comment after another syntax's marker (`//`, `;`)."""
    return re.compile(_COMMENT.pattern.replace("#", re.escape(comment), 1))


def _rules(match: re.Match[str]) -> dict[str, str]:
    reason = match.group("reason") or ""
    listed = match.group("rules")
    if listed is None:
        return {"*": reason}
    ids = [rule.strip() for rule in listed.split(",") if rule.strip()]
    return {rule: reason for rule in ids} or {"*": reason}


def unknown_ignores(
    tables: dict[str, Suppressions], known: set[str]
) -> list[tuple[str, int, str, str | None]]:
    """(path, line, rule, closest known id) for each rule an ignore comment names that no loaded
    rule (or alias) has: a typo would otherwise suppress nothing, without a word."""
    out = []
    for path, table in tables.items():
        for line, rules in sorted(table.items()):
            for rule in rules:
                if rule != "*" and rule not in known:
                    from difflib import get_close_matches  # a typo's hint: only then

                    close = get_close_matches(rule, sorted(known), n=1, cutoff=0.6)
                    out.append((path, line, rule, close[0] if close else None))
    return out
