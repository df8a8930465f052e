"""`check` arguments to files: explicit files as given, directories walked, globs expanded.

From directories and globs only the files a job format's syntax takes are read (jobs/syntax.py:
`.yaml`, `.yml`, `.json`; `.sbatch`, `.slurm`; a `.sh` script whose opening has `#SBATCH`), and
not those a `.gitignore` (in the walked tree, or in a parent directory up to the repository
root) or an `--exclude` pattern names; `.git` is never entered. An explicit file argument is
always read. Patterns are gitwildmatch (`.gitignore` syntax) read by `pathspec`, imported only
when a directory or glob is given: a hook handed staged files pays nothing for it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from gpu_audit.core.yamlguard import printable
from gpu_audit.jobs.syntax import OPENING, Syntax

if TYPE_CHECKING:  # pathspec is imported where a directory is walked
    from pathspec import GitIgnoreSpec

_GLOB_CHARS = frozenset("*?[")
NOT_UTF8 = ": file name is not UTF-8; not read"


def expand(arguments: Sequence[str], excludes: Sequence[str] = ()) -> tuple[list[str], list[str]]:
    """The files to read, in order and once each; and one message per argument that matched
    nothing (a glob with no match, a path that does not exist)."""
    files: dict[str, None] = {}
    unmatched: list[str] = []
    walker: Walker | None = None
    for argument in arguments:
        if os.path.isdir(argument):
            walker = walker or Walker(excludes)
            files.update(dict.fromkeys(walker.walk(argument)))
        elif not os.path.lexists(argument) and _GLOB_CHARS & set(argument):
            walker = walker or Walker(excludes)
            found = [*walker.globbed(argument)]
            if not found:
                unmatched.append(f"{argument}: no job file matches this pattern")
            files.update(dict.fromkeys(found))
        else:
            files[argument] = None  # explicit: always read (a missing file is reported then)
    named = [path for path in files if not utf8_name(path)]
    unmatched += [not_utf8(path) for path in named]  # said once, here, and never read
    return [path for path in files if path not in named], unmatched


def _syntaxes() -> tuple[Syntax, ...]:
    """Every registered format's syntax, once each."""
    from gpu_audit.jobs.registry import FORMATS  # the registry imports every format's markers

    return tuple(dict.fromkeys(fmt.syntax for fmt in FORMATS.values()))


def utf8_name(path: str) -> bool:
    """False for a name whose bytes are not UTF-8 (Python holds them as surrogate escapes):
    no report could name it faithfully, so it is said once, escaped, and not read."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def not_utf8(path: str) -> str:
    """The skip reason for a file whose name is not UTF-8 (the bad bytes shown escaped)."""
    shown = path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return f"{printable(shown, 400)}{NOT_UTF8}"


class Walker:
    """Which files under a directory or glob `check` reads (`diff` walks a git tree with it)."""

    def __init__(self, excludes: Sequence[str]) -> None:
        import pathspec  # ~10 ms, only when a directory or glob is given

        self._pathspec: Any = pathspec
        self._excludes = pathspec.GitIgnoreSpec.from_lines(excludes)
        self._ignores: dict[str, Any] = {}  # directory → its .gitignore spec (None: none)

    def walk(self, top: str) -> Iterator[str]:
        """The files under `top` discovery reads, in sorted order, pruned directories not
        entered."""
        for here, dirs, names in os.walk(top):
            dirs[:] = sorted(d for d in dirs if not self.prunes(here, d))
            for name in sorted(names):
                if self.wanted(here, name):
                    yield os.path.join(here, name)

    def globbed(self, pattern: str) -> Iterator[str]:
        """The files a quoted glob matches (recursive `**`) that discovery reads, sorted;
        directories left out."""
        import glob  # ~0.7 ms, only for a quoted glob

        for path in sorted(glob.glob(pattern, recursive=True)):
            if os.path.isdir(path):
                continue
            here, name = os.path.split(path)
            if self.wanted(here or ".", name):
                yield path

    def wanted(self, here: str, name: str) -> bool:
        """A file a job format's syntax takes, in directory `here`, that no pattern excludes."""
        return self._taken(here, name) and not self._skip(here, name, False)

    def _taken(self, here: str, name: str) -> bool:
        """Named as a format's file, or named as one that may be and opening as one."""
        syntaxes = _syntaxes()
        if any(syntax.named(name) for syntax in syntaxes):
            return True
        sniffing = [syntax for syntax in syntaxes if syntax.may_sniff(name)]
        if not sniffing:
            return False
        opening = self.opening(here, name)
        return any(syntax.opens(opening) for syntax in sniffing)

    def sniffable(self, name: str) -> bool:
        """A file name some syntax takes only when its opening says so."""
        return any(syntax.may_sniff(name) for syntax in _syntaxes())

    def opening(self, here: str, name: str) -> str:
        """The first bytes of a file, as text (empty when unreadable): what a syntax sniffs."""
        try:
            with open(os.path.join(here, name), "rb") as handle:
                return handle.read(OPENING).decode("utf-8", "replace")
        except OSError:
            return ""

    def prunes(self, here: str, name: str) -> bool:
        """A directory in `here` not to enter: `.git`, or one a pattern excludes."""
        return name == ".git" or self._skip(here, name, True)

    def _skip(self, here: str, name: str, is_dir: bool) -> bool:
        """Excluded by `--exclude` (matched against the path as given and from here), or by a
        `.gitignore` in this directory or a parent up to the repository root."""
        path = os.path.normpath(os.path.join(here, name))
        suffix = "/" if is_dir else ""
        if self._excludes.match_file(path + suffix) or self._excludes.match_file(name + suffix):
            return True
        directory = os.path.abspath(here)
        while True:
            spec = self._gitignore(directory)
            if spec is not None:
                relative = os.path.relpath(os.path.abspath(path), directory)
                if spec.match_file(relative.replace(os.sep, "/") + suffix):
                    return True
            if self._is_root(directory):
                return False
            parent = os.path.dirname(directory)
            if parent == directory:
                return False
            directory = parent

    def _is_root(self, directory: str) -> bool:
        """The repository root: no `.gitignore` above it applies."""
        return os.path.exists(os.path.join(directory, ".git"))

    def _gitignore(self, directory: str) -> GitIgnoreSpec | None:
        if directory not in self._ignores:
            try:
                with open(os.path.join(directory, ".gitignore"), encoding="utf-8") as handle:
                    lines = handle.read().splitlines()
            except (OSError, UnicodeDecodeError):
                lines = []
            spec = self._pathspec.GitIgnoreSpec.from_lines(lines) if lines else None
            self._ignores[directory] = spec
        return self._ignores[directory]
