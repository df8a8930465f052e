"""How a job format's files are found, read, located and ignored: its syntax, declared once.

A format's `LazyFormat` carries one `Syntax`. Discovery (`check DIR`, globs, `diff`) takes the
names its `suffixes` give, and those its `sniffed` suffixes give when the file's opening matches
`first_line`; the loader reads a `yaml` syntax as YAML/JSON documents and hands a `text` syntax's
file to the format's `parse_text`; inline ignores follow its `comment` marker, a line starting
with one of its `directives` (`#SBATCH`) counting as content, not as a comment; the pre-commit
hook's `types_or` and `files` are the union of every syntax's `hook_types` and suffixes
(`python -m tests.test_doc_lists` writes them into `.pre-commit-hooks.yaml`).
"""

from __future__ import annotations

import re

from gpu_audit.core.frozen import record

OPENING = 4096  # the bytes of a file read to sniff its first lines


@record(kw_only=True)
class Syntax:
    """One job-file syntax: `reader` "yaml" (YAML/JSON documents) or "text" (the whole text)."""

    reader: str
    suffixes: tuple[str, ...]  # file names discovery always takes (lower case, with the dot)
    hook_types: tuple[str, ...]  # pre-commit (identify) file types such files carry
    sniffed: tuple[str, ...] = ()  # names taken when the opening matches `first_line`
    first_line: str | None = None  # a line of the opening that says the file is the format's
    comment: str = "#"  # what an inline `gpu-audit: ignore[...]` comment starts with
    directives: tuple[str, ...] = ()  # comment-looking lines that are the format's content

    def named(self, name: str) -> bool:
        """A file name this syntax always takes."""
        return name.lower().endswith(self.suffixes)

    def may_sniff(self, name: str) -> bool:
        """A file name taken only if its opening matches `first_line`."""
        return self.first_line is not None and name.lower().endswith(self.sniffed)

    def opens(self, text: str) -> bool:
        """The opening of a file says it is of this syntax."""
        return self.first_line is not None and _pattern(self.first_line).search(text) is not None

    def claims(self, name: str, text: str) -> bool:
        """The file is this syntax's: named so, or opening as it does."""
        return self.named(name) or self.opens(text[:OPENING])


_PATTERNS: dict[str, re.Pattern[str]] = {}


def _pattern(source: str) -> re.Pattern[str]:
    if source not in _PATTERNS:
        _PATTERNS[source] = re.compile(source, re.MULTILINE)
    return _PATTERNS[source]


YAML = Syntax(reader="yaml", suffixes=(".yaml", ".yml", ".json"), hook_types=("json", "yaml"))
