"""A job format known by its cheap markers, its parser imported when a document may be its own.

`check` on one Kubernetes file imports the Kubernetes parser alone: the other formats' markers
(top-level keys, `apiVersion`/`kind`) say no without theirs. A marker never says no to a document
its parser would take (tests/jobs/test_markers.py holds that over every fixture and the corpus).
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from typing import TYPE_CHECKING, Any

from gpu_audit.jobs.syntax import YAML, Syntax

if TYPE_CHECKING:
    from gpu_audit.core.resource import Resource
    from gpu_audit.core.yamlsrc import Document
    from gpu_audit.jobs.interface import JobFormat, TextFormat


class LazyFormat:
    """`claims(data)`: may this mapping be the format's? `parser`: "module:Class", imported once.
    `title`: the format as the docs name it (`Vertex AI`); tests/test_doc_lists.py holds every
    list of formats in the docs to the registry's titles. `syntax`: how its files are found,
    read and ignored (jobs/syntax.py); YAML unless the format says otherwise."""

    __slots__ = ("_parser", "_yaml", "claims", "name", "parser", "syntax", "title")

    def __init__(
        self,
        name: str,
        claims: Callable[[dict[Any, Any]], bool],
        parser: str,
        title: str,
        syntax: Syntax = YAML,
    ) -> None:
        self.name = name
        self.claims = claims
        self.parser = parser
        self.title = title
        self.syntax = syntax
        self._yaml = syntax.reader == "yaml"  # asked per document: one attribute, not two
        self._parser: JobFormat | None = None

    @property
    def format(self) -> JobFormat:
        """The parser's format object, its module imported on first use."""
        if self._parser is None:
            module, _, cls = self.parser.partition(":")
            self._parser = getattr(import_module(module), cls)()
        return self._parser

    @property
    def hints(self) -> dict[str, str]:
        """The format's hints for unstated fields (its parser imported on first use)."""
        return self.format.hints

    @property
    def fixes(self) -> dict[str, str]:
        """The format's fixes per field (its parser imported on first use)."""
        return self.format.fixes

    def parse(self, document: Document, path: str) -> list[Resource] | None:
        """The parser's answer (`JobFormat.parse`); None, unimported, when the markers say no."""
        if not self._yaml:
            return None  # read as text (`parse_text`), never as a YAML document
        data = document.data
        if not isinstance(data, dict) or not self.claims(data):
            return None
        return self.format.parse(document, path)

    def parse_text(self, text: str, path: str) -> list[Resource] | None:
        """A text syntax's file, parsed whole (`TextFormat.parse_text`)."""
        parser: TextFormat = self.format  # type: ignore[assignment]
        return parser.parse_text(text, path)
