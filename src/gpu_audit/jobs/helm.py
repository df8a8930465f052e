"""Read a Helm/Go template as YAML on a best-effort basis: `{{ … }}` left as missing values.

A chart's `templates/*.yaml` is not YAML until `helm template` renders it: directive lines such
as `{{- if .Values.gpu }}` or `{{- toYaml . | nindent 4 }}` break the parser. We blank lines that
hold only directives and turn inline expressions into a plain placeholder, keeping every line
where it was so positions stay exact. If the result loads, parsers see the `{{ }}` values as
templated (missing); if it still does not, the file is skipped with a reason, not an error.
"""

from __future__ import annotations

from gpu_audit.core.lazyre import lazy

_EXPRESSION = lazy(r"\{\{.*?\}\}", needs=("{{",))
_DIRECTIVE_LINE = lazy(r"^\s*(?:-\s*)?(?:\{\{.*?\}\}\s*)+$", needs=("{{",))
# The placeholder keeps `{{}}` so `is_templated` sees it, and starts with a letter so YAML
# reads it as a plain scalar rather than the start of a flow mapping.
PLACEHOLDER = "helm{{}}"


def looks_templated(text: str) -> bool:
    """True when the text holds a Go template action (`{{ … }}`)."""
    return "{{" in text and "}}" in text


def first_template_line(text: str) -> int | None:
    """The first line (1-based) with a `{{`, None without one."""
    for number, line in enumerate(text.splitlines(), start=1):
        if "{{" in line:
            return number
    return None


def neutralise(text: str) -> str:
    """The same text with template directives blanked and expressions replaced, line for line."""
    lines = []
    for line in text.split("\n"):
        if "{{" not in line:
            lines.append(line)
        elif _DIRECTIVE_LINE.match(line):
            lines.append("")
        else:
            lines.append(_EXPRESSION.sub(PLACEHOLDER, line))
    return "\n".join(lines)
